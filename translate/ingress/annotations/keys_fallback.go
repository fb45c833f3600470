package annotations

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ingress-nginx's fallback keys (its DefaultBackend group): a Service of
// the Ingress's namespace that answers when the rule's Service cannot.
// translate/ingress/fallback.go applies them, translate/envoy/aggregate.go
// renders the fallback as an aggregate cluster.

// DefaultBackend names the Service that answers when the rule's has no
// ready endpoint.
var DefaultBackend = key[string](&definition{
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
		`address and never falls back, as in ingress-nginx.`,
}, parseServiceName)

// CustomHTTPErrors lists the codes whose responses the default backend
// replaces.
var CustomHTTPErrors = key[[]uint32](&definition{
	name:  "custom-http-errors",
	under: Nginx,
	scope: ScopeRoute,
	doc: `Codes from 400 to 599 ("404,503"): a response of one of them, from the backend or from Envoy, is replaced by the ` +
		`default backend's answer to a GET of "/" carrying X-Code (the code), X-Namespace, X-Ingress-Name, X-Service-Name and ` +
		`X-Service-Port, as nginx's error_page with proxy_intercept_errors; the default backend's status is the client's.`,
	verdict: HonouredWithDifference,
	note: `Envoy's custom response filter re-runs the request as a GET of an error route of the virtual host ` +
		`(/.ingress-xds/error-pages/<namespace>/<ingress>, which a client may also ask for directly) that sends to the default ` +
		`backend with the path "/" (the query kept, as nginx's rewrite keeps it). The request keeps its own headers: X-Format is not set (Accept is there), X-Original-URI is not ` +
		`sent (Envoy cannot keep the original path through the redirect), X-Request-ID is Envoy's x-request-id. Without ` +
		`default-backend, ingress-nginx sends the errors to its global default backend; ingress-xds has none: the responses pass ` +
		`through unchanged, which is reported. A request with a body is re-run without it.`,
}, parseErrorCodes)

// DisableProxyInterceptErrors keeps the backend's error responses.
var DisableProxyInterceptErrors = key[bool](&definition{
	name:    "disable-proxy-intercept-errors",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"true": custom-http-errors does not replace the backend's error responses (nginx's proxy_intercept_errors off).`,
	verdict: HonouredWithDifference,
	note: `Envoy's filter cannot tell the backend's responses from Envoy's own, so "true" turns the error pages off altogether; ` +
		`nginx still replaces the errors it makes itself (a 502 or 504 when the backend fails).`,
}, parseBool)

// parseErrorCodes reads a comma-separated list of codes from 400 to 599,
// spaces ignored (ingress-nginx's validator removes them), as a sorted
// list without repeats.
func parseErrorCodes(s string) ([]uint32, error) {
	var out []uint32
	for _, f := range strings.Split(strings.ReplaceAll(s, " ", ""), ",") {
		if f == "" {
			continue
		}
		code, err := strconv.ParseUint(f, 10, 32)
		if err != nil || code < 400 || code > 599 {
			return nil, fmt.Errorf("%q is not a status code from 400 to 599", f)
		}
		out = append(out, uint32(code))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no status code")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseServiceName reads a Service's name, which ingress-nginx's
// ValidateServiceName holds to a DNS label (RFC 1035): a Service of the
// Ingress's own namespace, so "namespace/name" is not one.
func parseServiceName(s string) (string, error) {
	if strings.Contains(s, "/") {
		return "", fmt.Errorf("not a Service name: only a Service of the Ingress's namespace may be named, without a namespace")
	}
	if len(validation.IsDNS1035Label(s)) > 0 {
		return "", fmt.Errorf("not a Service name (a DNS label: lower-case letters, digits and '-', starting with a letter)")
	}
	return s, nil
}

// fallbackKeys lists the keys of this file, for table.
func fallbackKeys() []*definition {
	return []*definition{DefaultBackend.def, CustomHTTPErrors.def, DisableProxyInterceptErrors.def}
}
