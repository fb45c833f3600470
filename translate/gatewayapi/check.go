package gatewayapi

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Objects from manifests never met the API server's validation (the CRDs'
// patterns and CEL rules), and one bad value must never make config Envoy
// rejects, which would stop every change from being served. So the
// front-end checks what it takes: hostnames here, and each rule's IR route
// against the IR's own contract.

// validHostname says why a Gateway API hostname (a lower-case DNS name,
// or one with a leading "*." label) cannot be served; "" when it can.
func validHostname(h string) string {
	name, _ := strings.CutPrefix(h, "*.")
	if strings.Contains(name, "*") {
		return fmt.Sprintf("%q: a wildcard is a whole first label", h)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("%q: %s", h, strings.Join(errs, "; "))
	}
	return ""
}

// checkRoute holds one rule's IR route to the IR's contract, alone in an
// IR with the clusters it names: an error says what breaks it, and the
// rule then answers 500 rather than break the whole configuration.
func (b *build) checkRoute(rt *ir.Route) error {
	m := &ir.IR{VirtualHosts: []*ir.VirtualHost{{Host: checkHost, Routes: []*ir.Route{rt}}}}
	names := map[string]bool{}
	if f := rt.Action.Forward; f != nil {
		for _, c := range f.Clusters {
			names[c.Cluster] = true
		}
	}
	if rt.Policy != nil {
		for _, mi := range rt.Policy.Mirrors {
			names[mi.Cluster] = true
		}
	}
	backends := map[string]bool{}
	for _, name := range sortedKeys(names) {
		if c := b.clusters[name]; c != nil {
			m.Clusters = append(m.Clusters, c)
			backends[c.Backend] = true
		}
	}
	for _, id := range sortedKeys(backends) {
		m.Backends = append(m.Backends, b.backends[id])
	}
	if err := m.Validate(); err != nil {
		// The messages name the stand-in host, which is nobody's.
		return errors.New(strings.ReplaceAll(err.Error(), fmt.Sprintf("virtual host %q route 0: ", checkHost), ""))
	}
	return nil
}

// checkHost is the stand-in host a route is checked under.
const checkHost = "check.invalid"
