package audit

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// The trailing-slash redirect is said to be reproduced where the
// front-end made it (serve --nginx-defaults), and not without.
func TestTrailingSlashAudit(t *testing.T) {
	for _, nginxDefaults := range []bool{false, true} {
		r := Run(load(t, "testdata/nginx-cluster.yaml"), ingress.Options{HTTPPort: 8080, HTTPSPort: 8443, NginxDefaults: nginxDefaults})
		n := 0
		for _, ing := range r.Ingresses {
			for _, b := range ing.Behaviours {
				if b.ID != TrailingSlash {
					continue
				}
				n++
				if b.Same != nginxDefaults {
					t.Errorf("--nginx-defaults %v: %s: same %v: %s", nginxDefaults, b.Where, b.Same, b.IngressXDS)
				}
			}
		}
		if n != 2 {
			t.Errorf("--nginx-defaults %v: %d trailing-slash behaviours, want 2", nginxDefaults, n)
		}
	}
}
