package annotations

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ingress-nginx's CORS keys (its CorsConfig group), read as its
// internal/ingress/annotations/cors/main.go reads them, with its defaults.
// translate/ingress/cors.go applies them; translate/envoy/cors.go renders
// them as routes, since Envoy's CORS filter behaves otherwise.
//
// Where ingress-nginx meets a value its validator refuses, it logs and uses
// its default, which for the origins is "*": the keys that restrict
// (origins, methods, headers, credentials) refuse the Ingress instead
// (refusal.go), unless the value asks for what the default gives.

// ingress-nginx's defaults (cors/main.go).
const (
	DefaultCORSMethods = "GET, PUT, POST, DELETE, PATCH, OPTIONS"
	DefaultCORSHeaders = "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"
	DefaultCORSMaxAge  = 1728000
)

const corsDifference = `CORS is rendered as routes, not with Envoy's CORS filter (whose behaviour differs): the headers are route ` +
	`response headers, also on the answers Envoy makes itself (401, 403, 503), and OPTIONS requests have a route of their own answered 204 before any ` +
	`access check. The 204 has no Content-Type (nginx, too, drops the template's from a 204) and no Content-Length (nginx sends "Content-Length: 0", ` +
	`which HTTP forbids on a 204 and Envoy never sends).`

// EnableCORS turns CORS on for the Ingress's paths.
var EnableCORS = key[bool](&definition{
	name:  "enable-cors",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": cross-origin resource sharing as ingress-nginx does it. For a request whose Origin is allowed (any request at all with ` +
		`the default origin "*", Origin or not), every response, the backend's or Envoy's own (401, 403, 503...), carries ` +
		`Access-Control-Allow-Origin (the origin echoed, or "*"), Access-Control-Allow-Credentials: true (unless cors-allow-credentials is false), ` +
		`Access-Control-Allow-Methods, Access-Control-Allow-Headers, Access-Control-Expose-Headers (when set) and Access-Control-Max-Age, ` +
		`replacing the backend's own; and any OPTIONS request (a preflight or not) is answered 204 with them without reaching the backend, ` +
		`before IP rules, authentication and rate limits. A request whose Origin is not allowed is served as without CORS.`,
	verdict: HonouredWithDifference,
	note:    corsDifference,
}, parseBool)

// CORSAllowOrigin lists the allowed origins.
var CORSAllowOrigin = key[CORSOrigins](&definition{
	name:  "cors-allow-origin",
	under: Nginx,
	scope: ScopeRoute,
	doc: `The allowed origins, separated by commas (default "*": any): each scheme://host[:port] (any lower-case scheme, "null" too), ` +
		`matched in any case against the whole Origin, port included (http://a.com:8080 is not http://a.com); "*." after the scheme ` +
		`stands for exactly one label (http://*.a.com allows http://b.a.com, not http://c.b.a.com). "*" anywhere in the list, or a blank ` +
		`list, allows any origin. An entry without a scheme is ignored and reported, as ingress-nginx skips it.`,
	verdict: HonouredWithDifference,
	note: `A value ingress-nginx's validator refuses (an upper-case scheme, a path) makes ingress-nginx allow any origin; it refuses the ` +
		`Ingress here (fail closed), unless the list holds "*". ingress-nginx's match is not anchored at the origin's start (a non-browser ` +
		`Origin such as "xhttp://a.com" passes for http://a.com there); here the whole Origin must match.`,
}, parseCORSOrigins)

// CORSAllowMethods is Access-Control-Allow-Methods.
var CORSAllowMethods = key[string](&definition{
	name:    "cors-allow-methods",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Access-Control-Allow-Methods, as written: methods (letters only) separated by commas ("` + DefaultCORSMethods + `", the default).`,
	verdict: HonouredWithDifference,
	note:    `A value ingress-nginx would replace by its default refuses the Ingress (fail closed).`,
}, parseCORSList(regexp.MustCompile(`^([A-Za-z]+,?\s?)+$`), DefaultCORSMethods, "methods (letters) separated by commas"))

// CORSAllowHeaders is Access-Control-Allow-Headers.
var CORSAllowHeaders = key[string](&definition{
	name:    "cors-allow-headers",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Access-Control-Allow-Headers, as written: header names (letters, digits, "-" and "_") separated by commas (default "` + DefaultCORSHeaders + `").`,
	verdict: HonouredWithDifference,
	note:    `A value ingress-nginx would replace by its default refuses the Ingress (fail closed).`,
}, parseCORSList(regexp.MustCompile(`^[A-Za-z0-9-_, ]*$`), DefaultCORSHeaders, `header names (letters, digits, "-", "_") separated by commas`))

// CORSExposeHeaders is Access-Control-Expose-Headers.
var CORSExposeHeaders = key[string](&definition{
	name:    "cors-expose-headers",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Access-Control-Expose-Headers, as written: header names or "*" separated by commas; not sent by default.`,
	verdict: HonouredWithDifference,
	note:    `A value ingress-nginx would drop refuses the Ingress (fail closed).`,
}, parseCORSList(regexp.MustCompile(`^(([A-Za-z0-9\-\_]+|\*),?\s?)+$`), "", `header names or "*" separated by commas`))

// CORSAllowCredentials sends Access-Control-Allow-Credentials.
var CORSAllowCredentials = key[bool](&definition{
	name:    "cors-allow-credentials",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"false": Access-Control-Allow-Credentials is not sent; "true" (the default, even with the origin "*"): it is, as "true".`,
	verdict: HonouredWithDifference,
	note:    `A value that is not a boolean makes ingress-nginx send the header; it refuses the Ingress here (fail closed).`,
}, parseBool)

// CORSMaxAge is Access-Control-Max-Age.
var CORSMaxAge = key[int](&definition{
	name:  "cors-max-age",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `Access-Control-Max-Age in seconds, an integer sent as written (default ` + strconv.Itoa(DefaultCORSMaxAge) + `); a value that is not one is reported and the default sent, as by ingress-nginx.`,
}, parseInteger)

// CORSOrigins is cors-allow-origin's value: Any, or Origins (as written,
// lower-case scheme, "*." for one label) and the entries ingress-nginx
// skips (Skipped: no scheme).
type CORSOrigins struct {
	Any     bool
	Origins []string
	Skipped []string
}

var (
	// ingress-nginx's validator of the whole value, spaces removed.
	corsOriginsForm = regexp.MustCompile(`^((((([a-z]+://)?(\*\.)?[A-Za-z0-9\-.]*(:\d+)?,?)|null)+)|\*)?$`)
	// and its check of each entry, which skips those that fail.
	corsOriginForm = regexp.MustCompile(`^([a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:\d+)?|\*|null)?$`)
)

// parseCORSOrigins reads cors-allow-origin as ingress-nginx's Parse does.
func parseCORSOrigins(s string) (CORSOrigins, error) {
	var out CORSOrigins
	entries := strings.Split(s, ",")
	for _, e := range entries {
		if strings.TrimSpace(e) == "*" {
			// "*" anywhere wins: ingress-nginx's result even where its
			// validator refuses the rest.
			return CORSOrigins{Any: true}, nil
		}
	}
	if strings.ContainsAny(s, "\r\n") || !corsOriginsForm.MatchString(strings.ReplaceAll(s, " ", "")) {
		return CORSOrigins{}, fmt.Errorf(`not a list of origins (scheme://host[:port], "null" or "*", separated by commas)`)
	}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case corsOriginForm.MatchString(e):
			out.Origins = append(out.Origins, e)
		default:
			out.Skipped = append(out.Skipped, e)
		}
	}
	if len(out.Origins) == 0 && len(out.Skipped) == 0 {
		return CORSOrigins{Any: true}, nil // blank: ingress-nginx's default
	}
	return out, nil
}

// parseCORSList reads a CORS header value: blank is the default; a value
// must pass ingress-nginx's check (form, once spaces are removed and again
// as written), and is sent trimmed.
func parseCORSList(form *regexp.Regexp, def, what string) func(string) (string, error) {
	return func(s string) (string, error) {
		v := strings.TrimSpace(s)
		if v == "" {
			return def, nil
		}
		if strings.ContainsAny(v, "\r\n") || !form.MatchString(strings.ReplaceAll(v, " ", "")) || !form.MatchString(v) {
			return "", fmt.Errorf("not %s", what)
		}
		return v, nil
	}
}

// parseInteger reads an integer, as Go's strconv.Atoi (ingress-nginx's
// GetIntAnnotation).
func parseInteger(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("not an integer")
	}
	return n, nil
}

// corsKeys lists the keys of this file, for table.
func corsKeys() []*definition {
	return []*definition{EnableCORS.def, CORSAllowOrigin.def, CORSAllowMethods.def, CORSAllowHeaders.def,
		CORSExposeHeaders.def, CORSAllowCredentials.def, CORSMaxAge.def}
}
