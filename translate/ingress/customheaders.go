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

// customHeaders reads custom-headers: the ConfigMap's entries set on every
// response. Whatever ingress-nginx would deny the location for (a missing
// ConfigMap, a name it does not allow, a bad entry) makes the Ingress's
// paths answer 503, as there, with a problem saying why.
func (f *fragmentBuilder) customHeaders(values *annotations.Values, p *ir.RoutePolicy) {
	key := annotations.CustomHeaders.Name()
	raw, ok := annotations.CustomHeaders.Get(values)
	if !ok {
		if annotations.CustomHeaders.Invalid(values) {
			// Reported by the registry; ingress-nginx finds no such
			// ConfigMap and denies the location.
			f.upstream.denied = "custom-headers unparsable"
		}
		return
	}
	deny := func(format string, args ...any) {
		f.problem("InvalidAnnotation", "annotation %s=%q: "+format+": the Ingress's paths answer 503, as ingress-nginx denies them", append([]any{key, raw}, args...)...)
		f.upstream.denied = "custom-headers unusable"
	}
	ns, name, _ := strings.Cut(raw, "/")
	if ns != f.ing.Namespace {
		deny("a ConfigMap of another namespace than the Ingress's")
		return
	}
	cm := f.configMap(types.NamespacedName{Namespace: ns, Name: name})
	if cm == nil {
		deny("no such ConfigMap")
		return
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
			deny("header name %q: not letters, digits, '-' and '_'", n)
		case !customHeaderValue.MatchString(v):
			deny("header %s: the value holds characters ingress-nginx refuses (control characters among them)", n)
		case slices.Contains(framingHeaders, strings.ToLower(n)):
			deny("header %s makes the response's framing, which Envoy owns", n)
		case !slices.Contains(f.opts.AllowedResponseHeaders, n):
			deny("header %s is not in --global-allowed-response-headers %q", n, f.opts.AllowedResponseHeaders)
		default:
			set = append(set, ir.Header{Name: n, Value: v})
			continue
		}
		return
	}
	if len(set) > 0 {
		p.ResponseHeaders = &ir.HeaderChanges{Set: set}
	}
}

// connectionHeader reads connection-proxy-header: the Connection header
// the backend receives (nginx's proxy_set_header Connection).
func (f *fragmentBuilder) connectionHeader(values *annotations.Values, p *ir.RoutePolicy) {
	v, ok := annotations.ConnectionProxyHeader.Get(values)
	if !ok {
		return
	}
	h := ir.HeaderChanges{}
	if p.RequestHeaders != nil {
		h = *p.RequestHeaders
	}
	h.Set = append(h.Set[:len(h.Set):len(h.Set)], ir.Header{Name: "Connection", Value: v})
	p.RequestHeaders = &h
}
