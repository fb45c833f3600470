package gatewayapi

import (
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// hostnames are the hosts a Route serves through a listener: the
// intersection of the Route's hostnames with the listener's, as Gateway
// API defines it. A listener without a hostname takes the Route's; a Route
// without hostnames takes the listener's; with neither, every host
// (ir.WildcardHost). Where both are set, a Route hostname that does not
// match the listener's is ignored, and of two that match each other the
// more specific one is served (foo.example.com within *.example.com,
// *.a.example.com within *.example.com). None at all: the Route does not
// attach to the listener.
func hostnames(listenerHost string, route []gwapiv1.Hostname) []string {
	if len(route) == 0 {
		if listenerHost == "" {
			return []string{ir.WildcardHost}
		}
		return []string{listenerHost}
	}
	var out []string
	for _, h := range route {
		r := strings.ToLower(string(h))
		switch {
		case listenerHost == "" || r == listenerHost:
			out = append(out, r)
		case covers(listenerHost, r):
			out = append(out, r)
		case covers(r, listenerHost):
			out = append(out, listenerHost)
		}
	}
	return out
}

// covers says whether the wildcard w (*.suffix) matches host, a name or
// another wildcard: Gateway API's wildcard matches one or more labels in
// front of its suffix, never the suffix alone.
func covers(w, host string) bool {
	suffix, ok := strings.CutPrefix(w, "*")
	if !ok {
		return false
	}
	name := strings.TrimPrefix(host, "*")
	return len(name) > len(suffix) && strings.HasSuffix(name, suffix)
}
