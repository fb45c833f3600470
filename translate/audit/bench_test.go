package audit

import (
	"fmt"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// BenchmarkAudit audits n copies of the test cluster's Ingresses, each
// copy on hosts of its own: the whole audit, the front-end's run included,
// as `ingress-xds audit` does it once per invocation.
func BenchmarkAudit(b *testing.B) {
	for _, copies := range []int{100, 1000} {
		base := load(b, "testdata/nginx-cluster.yaml")
		st := *base
		st.Ingresses = nil
		for i := range copies {
			for _, ing := range base.Ingresses {
				c := ing.DeepCopy()
				c.Name = fmt.Sprintf("%s-%d", ing.Name, i)
				for r := range c.Spec.Rules {
					c.Spec.Rules[r].Host = fmt.Sprintf("c%d.%s", i, ing.Spec.Rules[r].Host)
				}
				st.Ingresses = append(st.Ingresses, c)
			}
		}
		b.Run(fmt.Sprintf("ingresses=%d", len(st.Ingresses)), func(b *testing.B) {
			for b.Loop() {
				r := Run(&st, ingress.Options{HTTPPort: 8080, HTTPSPort: 8443})
				if r.Summary.Ingresses != len(st.Ingresses) {
					b.Fatalf("audited %d Ingresses of %d", r.Summary.Ingresses, len(st.Ingresses))
				}
			}
		})
	}
}
