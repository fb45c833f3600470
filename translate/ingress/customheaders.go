package ingress

import (
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's checks of a custom-headers ConfigMap's entries
// (internal/ingress/annotations/customheaders/main.go).
var (
	customHeaderName  = regexp.MustCompile(`^[a-zA-Z\d\-_]+$`)
	customHeaderValue = regexp.MustCompile(`^[a-zA-Z\d_ :;.,\\/"'?!(){}\[\]@<>=\-+*#$&\x60|~^%]+$`)
)

// framingHeaders are the headers Envoy owns on a response (its framing and
// the hop-by-hop headers): setting them could break the response.
var framingHeaders = []string{"connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}

// customHeadersConfig is what custom-headers asks: headers set on every
// response, or why the routes answer 503 (denied).
type customHeadersConfig struct {
	set    []ir.Header
	denied string
}

// parseCustomHeaders reads custom-headers: the ConfigMap's entries set on
// every response. Whatever ingress-nginx would deny the location for (a
// missing ConfigMap, a name it does not allow, a bad entry) makes the
// Ingress's paths answer 503, as there, with a problem saying why.
func parseCustomHeaders(values *annotations.Values, env groupEnv) (customHeadersConfig, []problem) {
	key := annotations.CustomHeaders.Name()
	raw, ok := annotations.CustomHeaders.Get(values)
	if !ok {
		if annotations.CustomHeaders.Invalid(values) {
			// Reported by the registry; ingress-nginx finds no such
			// ConfigMap and denies the location.
			return customHeadersConfig{denied: "custom-headers unparsable"}, nil
		}
		return customHeadersConfig{}, nil
	}
	deny := func(format string, args ...any) (customHeadersConfig, []problem) {
		return customHeadersConfig{denied: "custom-headers unusable"}, []problem{problemf("InvalidAnnotation",
			"annotation %s=%q: "+format+": the Ingress's paths answer 503, as ingress-nginx denies them", append([]any{key, raw}, args...)...)}
	}
	ns, name, _ := strings.Cut(raw, "/")
	if ns != env.ing.Namespace {
		return deny("a ConfigMap of another namespace than the Ingress's")
	}
	cm := env.objects.configMap(types.NamespacedName{Namespace: ns, Name: name})
	if cm == nil {
		return deny("no such ConfigMap")
	}
	names := make([]string, 0, len(cm.Data))
	for n := range cm.Data {
		names = append(names, n)
	}
	slices.Sort(names)
	set := make([]ir.Header, 0, len(names))
	for _, n := range names {
		v := cm.Data[n]
		switch {
		case !customHeaderName.MatchString(n):
			return deny("header name %q: not letters, digits, '-' and '_'", n)
		case !customHeaderValue.MatchString(v):
			return deny("header %s: the value holds characters ingress-nginx refuses (control characters among them)", n)
		case slices.Contains(framingHeaders, strings.ToLower(n)):
			return deny("header %s makes the response's framing, which Envoy owns", n)
		case !slices.Contains(env.opts.AllowedResponseHeaders, n) && !slices.Contains(env.opts.config.allowedResponseHeaders(), n):
			return deny("header %s is not in global-allowed-response-headers (the ConfigMap's %q, serve's flag's %q)",
				n, env.opts.config.allowedResponseHeaders(), env.opts.AllowedResponseHeaders)
		}
		set = append(set, ir.Header{Name: n, Value: v})
	}
	return customHeadersConfig{set: set}, nil
}

// parseConnectionHeader reads connection-proxy-header: the Connection
// header the backend receives (nginx's proxy_set_header Connection);
// empty: the client's.
func parseConnectionHeader(values *annotations.Values) string {
	v, _ := annotations.ConnectionProxyHeader.Get(values)
	return v
}
