package e2e

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// Helpers shared by the file-mode suites that check Ingress semantics, TLS
// and bad input through a real Envoy.

// echoServicesYAML defines, for each backend, a Service of the backend's
// name on port 80 and a ready EndpointSlice pointing at the backend: a
// request routed to Service "alpha" is answered by backend "alpha".
func echoServicesYAML(backends ...*framework.Backend) string {
	var b strings.Builder
	for _, be := range backends {
		b.WriteString(readyServiceYAML(be.Name, be))
	}
	return b.String()
}

// tlsSecretYAML is a kubernetes.io/tls Secret holding certPEM and keyPEM.
// Manifests carry data base64-encoded: only the API server turns stringData
// into data.
func tlsSecretYAML(name string, certPEM, keyPEM []byte) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: default}
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s
`, name, base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM))
}

// httpRoutes is the stat prefix of the HTTP listener's route configuration.
const httpRoutes = "http.ingress_http.rds.ingress_http"

// assertNoRejections checks that Envoy rejected no update of any xDS
// subscription, and that it has the subscriptions named in mustHave (stat
// name prefixes such as "listener_manager.lds"): a check over stats that do
// not exist would pass for the wrong reason.
func assertNoRejections(t *testing.T, envoy *framework.Envoy, mustHave ...string) {
	t.Helper()
	stats, err := envoy.Stats(`update_rejected$`)
	if err != nil {
		t.Errorf("reading envoy stats: %v", err)
		return
	}
	var names []string
	rejected := false
	for name, v := range stats {
		names = append(names, name)
		if v != 0 {
			rejected = true
			t.Errorf("envoy rejected configuration: %s = %d", name, v)
		}
	}
	sort.Strings(names)
	for _, prefix := range mustHave {
		if _, scoped := stats[httpRoutes+"/0.update_rejected"]; prefix == httpRoutes && scoped {
			prefix += "/0" // route scopes: the first scope's; each is checked above
		}
		if _, ok := stats[prefix+".update_rejected"]; !ok {
			t.Errorf("envoy has no stat %s.update_rejected (it has %s)", prefix, strings.Join(names, ", "))
		}
	}
	if !rejected {
		t.Logf("envoy rejected nothing: %s", strings.Join(names, ", "))
	}
}
