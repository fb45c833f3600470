package annotations

import (
	"fmt"
	"regexp"
	"strings"
)

// ingress-nginx's keys that rewrite what an upstream's response says of
// its own URLs: nginx's proxy_redirect (Location and Refresh) and
// proxy_cookie_domain and proxy_cookie_path (Set-Cookie). ingress-nginx
// writes them into nginx.conf verbatim, after checking their characters;
// its default for all four is "off".

// Replace is a pair of nginx's directive: From is replaced by To.
type Replace struct{ From, To string }

// ProxyRedirectFrom is the text replaced at the start of Location and
// Refresh.
var ProxyRedirectFrom = key[string](&definition{
	name:  "proxy-redirect-from",
	under: Nginx,
	scope: ScopeRoute,
	doc: `With proxy-redirect-to, nginx's proxy_redirect: a Location header (or the url= of a Refresh header) of a response that ` +
		`starts with this text ("http://internal/") has it replaced by proxy-redirect-to's ("https://example.com/"), the rest kept; ` +
		`matching is case-sensitive. "off" (the default) and "default" change nothing.`,
	verdict: HonouredWithDifference,
	note: `Plain text is replaced as nginx replaces it (Envoy's Lua filter, on the Ingress's routes only). nginx's regular ` +
		`expressions ("~..." or "~*...") are reported (UnsupportedAnnotationValue) and not applied. "default" changes nothing, as in ` +
		`ingress-nginx, whose proxy_pass names http://upstream_balancer/, which no backend sends back.`,
}, parseRedirectText)

// ProxyRedirectTo is what replaces ProxyRedirectFrom's text.
var ProxyRedirectTo = key[string](&definition{
	name:    "proxy-redirect-to",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The text that replaces proxy-redirect-from's. Without it (or "off"), proxy-redirect-from does nothing, as in ingress-nginx.`,
	verdict: HonouredWithDifference,
	note:    `As proxy-redirect-from.`,
}, parseRedirectText)

// ProxyCookieDomain rewrites the Domain attribute of Set-Cookie.
var ProxyCookieDomain = key[*Replace](&definition{
	name:  "proxy-cookie-domain",
	under: Nginx,
	scope: ScopeRoute,
	doc: `nginx's proxy_cookie_domain, "from to" ("localhost example.org"): a Set-Cookie of a response whose Domain attribute is ` +
		`"from" (in any case, a leading dot ignored) gets "to" instead. "off" (the default) changes nothing.`,
	verdict: HonouredWithDifference,
	note:    `Plain text is replaced as nginx replaces it (Envoy's Lua filter, on the Ingress's routes only). nginx's regular expressions ("~...") are reported (UnsupportedAnnotationValue) and not applied.`,
}, parseCookieRewrite(cookieDomainText, "-._~/:"))

// ProxyCookiePath rewrites the Path attribute of Set-Cookie.
var ProxyCookiePath = key[*Replace](&definition{
	name:  "proxy-cookie-path",
	under: Nginx,
	scope: ScopeRoute,
	doc: `nginx's proxy_cookie_path, "from to" ("/one/ /"): a Set-Cookie of a response whose Path attribute starts with "from" ` +
		`(case-sensitive) has it replaced by "to", the rest kept ("/one/two" becomes "/two"). "off" (the default) changes nothing.`,
	verdict: HonouredWithDifference,
	note:    `Plain text is replaced as nginx replaces it (Envoy's Lua filter, on the Ingress's routes only). nginx's regular expressions ("~...") are reported (UnsupportedAnnotationValue) and not applied.`,
}, parseCookieRewrite(redirectText, "-._~/:,?&="))

// The characters ingress-nginx admits (its parser.URLIsValidRegex for
// the redirect and cookie path keys, cookieDomainRegex's for the domain):
// no quotes, semicolons, spaces or variables reach nginx.conf. The same
// keep a value safe in a header here.
var (
	redirectText     = regexp.MustCompile(`^[-._~a-zA-Z0-9/:,?&=]+$`)
	cookieDomainText = regexp.MustCompile(`^[-._~a-zA-Z0-9/:]+$`)
)

// parseRedirectText reads proxy-redirect-from or -to: "off", "default",
// or text of ingress-nginx's characters.
func parseRedirectText(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !redirectText.MatchString(s) {
		return "", fmt.Errorf("not a URL or part of one of letters, digits and -._~/:,?&=")
	}
	return s, nil
}

// parseCookieRewrite reads "off" (nil) or "from to", each of chars
// (letters, digits and the punctuation named).
func parseCookieRewrite(chars *regexp.Regexp, punctuation string) func(string) (*Replace, error) {
	return func(s string) (*Replace, error) {
		words := strings.Fields(s)
		if len(words) == 1 && words[0] == "off" {
			return (*Replace)(nil), nil
		}
		if len(words) != 2 || !chars.MatchString(words[0]) || !chars.MatchString(words[1]) {
			return nil, fmt.Errorf(`not "off" nor two words "from to" of letters, digits and %s`, punctuation)
		}
		return &Replace{From: words[0], To: words[1]}, nil
	}
}

// proxyRewriteKeys lists the keys of this file, for table.
func proxyRewriteKeys() []*definition {
	return []*definition{ProxyRedirectFrom.def, ProxyRedirectTo.def, ProxyCookieDomain.def, ProxyCookiePath.def}
}
