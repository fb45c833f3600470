package annotations

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ingress-nginx's fallback keys (its DefaultBackend group): a Service of
// the Ingress's namespace that answers when the rule's Service cannot.
// translate/ingress/fallback.go applies them, translate/envoy/aggregate.go
// renders the fallback as an aggregate cluster.

// DefaultBackend names the Service that answers when the rule's has no
// ready endpoint.
var DefaultBackend = Key[string]{&definition{
	name:  "default-backend",
	under: Nginx,
	scope: ScopeCluster,
	doc: `A Service of the Ingress's namespace (its name; its first port) that answers the Ingress's paths when the rule's Service ` +
		`has no ready endpoint, or does not exist or lacks the port. The request reaches it as it would the rule's Service (same path, ` +
		`same upstream protocol, TLS and load balancer), and its answer, whatever its status, is the client's.`,
	verdict: HonouredWithDifference,
	note: `Envoy picks the default backend for each request: the route sends to an aggregate cluster of the rule's cluster then the ` +
		`default backend's, so it answers from the moment the rule's Service has no ready endpoint and stops as soon as one is ready. ` +
		`When the rule's Service does not exist or lacks the port, the route sends to the default backend with ingress-nginx's headers ` +
		`X-Code: 503, X-Namespace, X-Ingress-Name, X-Service-Name and X-Service-Port; when the Service exists without a ready endpoint ` +
		`the request carries none of them (Envoy cannot add request headers for one cluster of an aggregate). X-Format is never set ` +
		`(the request's own Accept is there), and X-Request-ID is Envoy's x-request-id. A default backend of type ExternalName, without ` +
		`a TCP first port, or missing is reported and not used (as ingress-nginx ignores it); one without a ready endpoint either ` +
		`gives 503, as from nginx. A rule's ExternalName Service, or one reached at its cluster IP (service-upstream), always has an ` +
		`address and never falls back, as in ingress-nginx. custom-http-errors is not honoured yet: an upstream's error responses ` +
		`pass through, never to the default backend.`,
	parse: parseServiceName,
}}

// parseServiceName reads a Service's name, which ingress-nginx's
// ValidateServiceName holds to a DNS label (RFC 1035): a Service of the
// Ingress's own namespace, so "namespace/name" is not one.
func parseServiceName(s string) (any, error) {
	if strings.Contains(s, "/") {
		return nil, fmt.Errorf("not a Service name: only a Service of the Ingress's namespace may be named, without a namespace")
	}
	if len(validation.IsDNS1035Label(s)) > 0 {
		return nil, fmt.Errorf("not a Service name (a DNS label: lower-case letters, digits and '-', starting with a letter)")
	}
	return s, nil
}

// fallbackKeys lists the keys of this file, for table.
func fallbackKeys() []*definition {
	return []*definition{DefaultBackend.def}
}
