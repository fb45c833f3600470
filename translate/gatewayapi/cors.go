package gatewayapi

import (
	"fmt"
	"regexp"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// defaultCORSMaxAge is Access-Control-Max-Age when the filter gives none,
// as Gateway API says (the CRD's default, which a manifest lacks).
const defaultCORSMaxAge = 5

// cors is a CORS filter as the IR's CORS: only preflights are answered
// (an OPTIONS request without Access-Control-Request-Method reaches the
// backend), an allowed origin is echoed, and with credentials every "*"
// is answered with what the request asked for, as the specification
// requires ("*" is no wildcard to a browser then). An origin not allowed
// gets no CORS header, and its preflight 204 (the specification allows
// 200 or 204 there, as well as 403; the conformance suite wants no
// backend to see it).
func cors(f *gwapiv1.HTTPCORSFilter) (*ir.CORS, error) {
	if f == nil {
		return nil, fmt.Errorf("a CORS filter without its settings")
	}
	credentials := f.AllowCredentials != nil && *f.AllowCredentials
	out := &ir.CORS{
		AllowCredentials: credentials,
		EchoWildcards:    credentials,
		PreflightsOnly:   true,
		MaxAgeSeconds:    int64(f.MaxAge),
	}
	if out.MaxAgeSeconds == 0 {
		out.MaxAgeSeconds = defaultCORSMaxAge
	}
	for _, o := range f.AllowOrigins {
		if o == "*" {
			if len(f.AllowOrigins) > 1 {
				return nil, fmt.Errorf("cors.allowOrigins: * beside other origins")
			}
			out.AnyOrigin = true
			continue
		}
		m, err := corsOrigin(string(o))
		if err != nil {
			return nil, fmt.Errorf("cors.allowOrigins: %w", err)
		}
		out.AllowOrigins = append(out.AllowOrigins, m)
	}
	if !out.AnyOrigin && len(out.AllowOrigins) == 0 {
		return nil, fmt.Errorf("cors.allowOrigins: no origin allowed")
	}
	methods := make([]string, len(f.AllowMethods))
	for i, m := range f.AllowMethods {
		methods[i] = string(m)
	}
	out.AllowMethods = strings.Join(methods, ", ")
	out.AllowHeaders = joinHeaderNames(f.AllowHeaders)
	out.ExposeHeaders = joinHeaderNames(f.ExposeHeaders)
	if credentials && out.ExposeHeaders == "*" {
		// Nothing can stand for every header of a response, and a
		// browser reads "*" literally with credentials: only the
		// safelisted headers are exposed.
		out.ExposeHeaders = ""
	}
	for _, h := range []struct{ field, value string }{{"allowMethods", out.AllowMethods}, {"allowHeaders", out.AllowHeaders}} {
		if strings.Contains(h.value, "*") && h.value != "*" {
			return nil, fmt.Errorf("cors.%s: * beside other values", h.field)
		}
	}
	return out, nil
}

func joinHeaderNames(names []gwapiv1.HTTPHeaderName) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(string(n))
	}
	return strings.Join(out, ", ")
}

// corsOriginPattern is an allowed origin as the API's pattern takes it:
// a scheme, a host whose first label may be "*", or "*" alone, a port.
var corsOriginPattern = regexp.MustCompile(`^(https?)://(\*|(?:\*\.)?(?:[A-Za-z0-9-]+\.)*[A-Za-z0-9-]+)(?::([0-9]{1,5}))?$`)

// corsOrigin matches an Origin header against one allowed origin: the
// host's "*" covers one label or more (any number of dots, as the
// specification says), and the scheme's own port may be written or not,
// on either side.
func corsOrigin(o string) (ir.StringMatch, error) {
	m := corsOriginPattern.FindStringSubmatch(o)
	if m == nil {
		return ir.StringMatch{}, fmt.Errorf("%q is not scheme://host[:port]", o)
	}
	scheme, host, port := m[1], m[2], m[3]
	defaultPort := map[string]string{"http": "80", "https": "443"}[scheme]
	var re strings.Builder
	re.WriteString(regexp.QuoteMeta(scheme) + "://")
	switch {
	case host == "*":
		re.WriteString(`[A-Za-z0-9.-]+`)
	case strings.HasPrefix(host, "*."):
		re.WriteString(`[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*` + regexp.QuoteMeta(host[1:]))
	default:
		re.WriteString(regexp.QuoteMeta(host))
	}
	switch port {
	case "", defaultPort:
		re.WriteString("(?::" + defaultPort + ")?")
	default:
		re.WriteString(":" + port)
	}
	return ir.StringMatch{Regex: re.String()}, nil
}
