package annotations

import (
	"fmt"
	"regexp"
	"strings"
)

// ingress-nginx's canary keys (its canary annotation group). A canary
// Ingress serves nothing of its own: each of its paths adds its Service as
// the alternative backend of the same host and path of a mainline (not
// canary) Ingress, chosen per request by header, then cookie, then weight,
// as ingress-nginx's balancer.lua route_to_alternative_balancer decides.

// Canary makes the Ingress a canary of the mainline Ingresses of its hosts
// and paths.
var Canary = key[bool](&definition{
	name:  "canary",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": the Ingress is a canary. It creates no host or path of its own: each of its paths adds its Service as the ` +
		`alternative backend of the same host, path and path type of a mainline (not canary) Ingress, which receives the requests ` +
		`the other canary keys select. A canary path with no mainline is not served (404) and reported; a second canary of one ` +
		`mainline path is reported and ignored (the oldest canary wins, as only ingress-nginx's first alternative backend is used).`,
	verdict: HonouredWithDifference,
	note: `The canary applies to the mainline's path it names; ingress-nginx attaches the alternative to the mainline's upstream ` +
		`(its Service port), so that other paths of the same Service are canaried too. The canary's requests are forwarded with the ` +
		`mainline route's policy (timeouts, rewrites, protocol, TLS, connect timeout), as nginx serves them from the mainline's location; ` +
		`the canary's own load-balance and upstream-hash-by give way to the mainline's (its service-upstream is kept).`,
}, parseBool)

// CanaryWeight is the share of requests, out of canary-weight-total, sent
// to the canary when no header or cookie decides.
var CanaryWeight = key[int](&definition{
	name:  "canary-weight",
	under: Nginx,
	scope: ScopeRoute,
	doc: `Requests out of canary-weight-total ("10") sent to the canary when neither canary-by-header nor canary-by-cookie decided: ` +
		`an Envoy weighted split. 0 (the default) sends none, the total or more sends all.`,
}, parseNonNegative)

// CanaryWeightTotal is what canary-weight is out of.
var CanaryWeightTotal = key[int](&definition{
	name:  "canary-weight-total",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `What canary-weight is a share of ("1000"; default 100). As in ingress-nginx's balancer, a total under 100 counts as 100.`,
}, parseNonNegative)

// CanaryByHeader names the request header that sends a request to the
// canary ("always") or away from it ("never").
var CanaryByHeader = key[string](&definition{
	name:  "canary-by-header",
	under: Nginx,
	scope: ScopeRoute,
	doc: `A request header ("X-Canary"): "always" sends the request to the canary, "never" to the mainline; any other value, ` +
		`or none, leaves the choice to the cookie and the weight. With canary-by-header-value or -pattern, only a matching ` +
		`value sends to the canary and every other falls through. As in nginx, "_" in the name stands for "-".`,
}, parseCanaryName)

// CanaryByHeaderValue is the value of canary-by-header that sends to the
// canary.
var CanaryByHeaderValue = key[string](&definition{
	name:  "canary-by-header-value",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The value of canary-by-header ("DoCanary", compared exactly) that sends a request to the canary; other values fall through to the cookie and the weight. Nothing without canary-by-header.`,
}, parseCanaryValue)

// CanaryByHeaderPattern is a regular expression over canary-by-header's
// value.
var CanaryByHeaderPattern = key[string](&definition{
	name:    "canary-by-header-pattern",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `As canary-by-header-value, a regular expression found anywhere in the header's value ("^Do[A-Z][a-z]+y$"). canary-by-header-value, when set, wins.`,
	verdict: HonouredWithDifference,
	note: `RE2 syntax (Envoy's), not PCRE: a pattern RE2 refuses (look-arounds, backreferences) is reported and not applied, where ` +
		`ingress-nginx sends every request with the header to the mainline when its regular expression fails.`,
}, parseCanaryPattern)

// CanaryByCookie names the cookie that sends a request to the canary
// ("always") or away from it ("never").
var CanaryByCookie = key[string](&definition{
	name:    "canary-by-cookie",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `A cookie ("canary"): "always" sends the request to the canary, "never" to the mainline, anything else leaves the choice to the weight. canary-by-header decides first.`,
	verdict: HonouredWithDifference,
	note:    `Where a request carries the cookie twice, "always" in either wins (nginx reads the first).`,
}, parseCanaryName)

// canaryKeys lists the keys of this file, for table.
func canaryKeys() []*definition {
	return []*definition{
		Canary.def, CanaryWeight.def, CanaryWeightTotal.def,
		CanaryByHeader.def, CanaryByHeaderValue.def, CanaryByHeaderPattern.def, CanaryByCookie.def,
	}
}

// ingress-nginx's validators for these keys (parser.BasicCharsRegex,
// parser.IsValidRegex): letters, digits and -._~/: (and for patterns the
// regular expression characters). A header or cookie name must moreover be
// an HTTP token, which / and : are not: Envoy could not match it.
var (
	canaryToken   = regexp.MustCompile(`^[-._~a-zA-Z0-9]+$`)
	canaryValue   = regexp.MustCompile(`^[-._~a-zA-Z0-9/: ]+$`)
	canaryPattern = regexp.MustCompile(`^[-._~a-zA-Z0-9/:^$\[\](){}*+?|&=\\]+$`)
)

// parseCanaryName reads a header or cookie name.
func parseCanaryName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !canaryToken.MatchString(s) {
		return "", fmt.Errorf("not a header or cookie name (letters, digits and -._~)")
	}
	return s, nil
}

// parseCanaryValue reads a header value, trimmed as ingress-nginx trims it.
func parseCanaryValue(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !canaryValue.MatchString(s) {
		return "", fmt.Errorf("not a value ingress-nginx accepts (letters, digits, spaces and -._~/:)")
	}
	return s, nil
}

// maxCanaryPattern keeps the route's expression, the pattern with what
// finds it anywhere in the value, within ir.MaxRegexLength.
const maxCanaryPattern = 1000

// parseCanaryPattern reads a regular expression that RE2 compiles.
func parseCanaryPattern(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !canaryPattern.MatchString(s) {
		return "", fmt.Errorf("not a pattern ingress-nginx accepts (letters, digits, -._~/: and ^$[](){}*+?|&=\\)")
	}
	if len(s) > maxCanaryPattern {
		return "", fmt.Errorf("a pattern of %d bytes, over %d", len(s), maxCanaryPattern)
	}
	if _, err := regexp.Compile(s); err != nil {
		return "", fmt.Errorf("not a regular expression RE2 accepts: %w", err)
	}
	return s, nil
}
