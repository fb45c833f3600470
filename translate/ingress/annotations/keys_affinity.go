package annotations

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ingress-nginx's session affinity keys (its SessionAffinity group):
// affinity "cookie" keeps a client on the endpoint a cookie names, set on
// the first response. Envoy's stateful session filter does it with a cookie
// session state: the cookie names the endpoint itself, which the client
// keeps for as long as that endpoint is ready (translate/envoy/affinity.go
// says why that and not a cookie hash).

// Affinity turns session affinity on: "cookie" is the one kind.
var Affinity = key[string](&definition{
	name:  "affinity",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"cookie": a request carrying the session cookie goes to the endpoint it names; one without gets a Set-Cookie naming ` +
		`the endpoint that answered it (HttpOnly, Path the Ingress path unless session-cookie-path says otherwise). ` +
		`Only the Ingress's own routes set and honour the cookie.`,
	verdict: HonouredWithDifference,
	note: `The cookie's value names the endpoint (Envoy's stateful session), not a hash of a random key (nginx's): a client ` +
		`sticks to its endpoint for as long as it is ready, whatever endpoints come and go, and is moved (with a new cookie) ` +
		`when it is gone. The value is Envoy's, quoted. ingress-nginx honours the cookie on every path sending to the same ` +
		`Service port; here, on the paths of Ingresses that ask for affinity.`,
}, parseOneOfFolded("cookie"))

// AffinityMode is how firmly a session sticks when endpoints change.
var AffinityMode = key[string](&definition{
	name:    "affinity-mode",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"balanced" (the default): sessions may move when endpoints are added, to spread them; "persistent": a session stays on its endpoint while it lives.`,
	verdict: HonouredWithDifference,
	note:    `Both are "persistent": the cookie names the endpoint, so no session moves when endpoints are added (nginx's "balanced" moves some).`,
}, parseOneOfFolded("balanced", "persistent"))

// AffinityCanaryBehavior says whether a canary keeps its own sessions.
var AffinityCanaryBehavior = key[string](&definition{
	name:  "affinity-canary-behavior",
	under: Nginx,
	scope: ScopeRoute,
	doc: `On a canary Ingress whose mainline has affinity: "sticky" (the default): the requests the canary's header or cookie send ` +
		`to it get the session cookie too, naming the canary's endpoint; "legacy": they get none.`,
	verdict: HonouredWithDifference,
	note: `A session cookie keeps a client on its endpoint within the backend the canary rules choose; it does not by itself ` +
		`send the client back to the canary (ingress-nginx's "sticky" does, before the header, cookie and weight): Envoy chooses ` +
		`the backend before the endpoint. With a canary weight, the split route's requests carry the cookie either way.`,
}, parseOneOfFolded("sticky", "legacy"))

// SessionCookieName names the cookie.
var SessionCookieName = key[string](&definition{
	name:  "session-cookie-name",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The cookie's name (default INGRESSCOOKIE).`,
}, parseCookieName)

// SessionCookiePath is the cookie's Path.
var SessionCookiePath = key[string](&definition{
	name:    "session-cookie-path",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The cookie's Path (default: the Ingress path the request matched, as written; with use-regex, set it, as ingress-nginx asks).`,
	verdict: HonouredWithDifference,
	note: `Envoy keeps sessions only on requests within the cookie's Path, which are those a browser sends it with: a request ` +
		`outside it (a regular expression path as the default Path, or a session-cookie-path elsewhere) is balanced and gets no cookie, ` +
		`where nginx would set one the browser never sends back.`,
}, parseCookiePath)

// SessionCookieDomain is the cookie's Domain.
var SessionCookieDomain = key[string](&definition{
	name:  "session-cookie-domain",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The cookie's Domain ("example.com"); none by default.`,
}, parseCookieDomain)

// SessionCookieSameSite is the cookie's SameSite.
var SessionCookieSameSite = key[string](&definition{
	name:  "session-cookie-samesite",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The cookie's SameSite: "None", "Lax" or "Strict" (in any case); none by default.`,
}, parseSameSite)

// SessionCookieConditionalSameSiteNone leaves SameSite=None out for the
// browsers that mishandle it.
var SessionCookieConditionalSameSiteNone = key[bool](&definition{
	name:  "session-cookie-conditional-samesite-none",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": SameSite=None is left out for the browsers ingress-nginx knows to refuse it (Chrome 40 to 69, iOS 12, Safari on ` +
		`macOS 10.14), told by their User-Agent: routes of their own, ahead of the route, set the cookie without SameSite.`,
}, parseBool)

// SessionCookieMaxAge is the cookie's lifetime.
var SessionCookieMaxAge = key[time.Duration](&definition{
	name:    "session-cookie-max-age",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Seconds the cookie lives ("172800"): its Max-Age. Without it or session-cookie-expires, a session cookie.`,
	verdict: HonouredWithDifference,
	note:    `At least 1: nginx's 0 and negative values (a cookie the browser drops at once) are reported and not applied.`,
}, parseSeconds)

// SessionCookieExpires is the cookie's lifetime, as Expires.
var SessionCookieExpires = key[time.Duration](&definition{
	name:    "session-cookie-expires",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Seconds from now to the cookie's Expires ("172800").`,
	verdict: HonouredWithDifference,
	note:    `Envoy writes no Expires: the cookie gets a Max-Age of that many seconds instead (the same lifetime to a browser), unless session-cookie-max-age is set, which wins.`,
}, parseSeconds)

// SessionCookieSecure forces the cookie's Secure attribute.
var SessionCookieSecure = key[bool](&definition{
	name:  "session-cookie-secure",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `"true": the cookie is Secure over plain HTTP too. Over HTTPS it is always Secure, as in ingress-nginx.`,
}, parseBool)

// SessionCookieChangeOnFailure moves a session whose endpoint failed.
var SessionCookieChangeOnFailure = key[bool](&definition{
	name:    "session-cookie-change-on-failure",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"true": a request whose endpoint failed is sent to another, which the cookie then names.`,
	verdict: HonouredWithDifference,
	note: `Envoy moves a session (with a new cookie) when its endpoint is no longer ready, whatever this says; a request that ` +
		`fails on a ready endpoint is not moved (it may be retried there, under proxy-next-upstream).`,
}, parseBool)

// affinityKeys lists the keys of this file, for table.
func affinityKeys() []*definition {
	return []*definition{
		Affinity.def, AffinityMode.def, AffinityCanaryBehavior.def,
		SessionCookieName.def, SessionCookiePath.def, SessionCookieDomain.def, SessionCookieSameSite.def,
		SessionCookieConditionalSameSiteNone.def, SessionCookieMaxAge.def, SessionCookieExpires.def,
		SessionCookieSecure.def, SessionCookieChangeOnFailure.def,
	}
}

// parseOneOfFolded reads one of values in any case, spaces around
// ignored, as ingress-nginx's option validator reads them.
func parseOneOfFolded(values ...string) func(string) (string, error) {
	return func(s string) (string, error) {
		s = strings.ToLower(strings.TrimSpace(s))
		for _, v := range values {
			if s == v {
				return s, nil
			}
		}
		return "", fmt.Errorf("not one of %s", strings.Join(values, ", "))
	}
}

// What ingress-nginx admits (parser.BasicCharsRegex, URLIsValidRegex),
// less what a Set-Cookie cannot carry: a cookie name is an HTTP token, and
// no attribute holds a ";", a space or a control character.
var (
	cookieDomain = regexp.MustCompile(`^[-._~a-zA-Z0-9]+$`)
	cookiePath   = regexp.MustCompile(`^/[-._~a-zA-Z0-9/:,?&=]*$`)
)

// parseCookieName reads a cookie name.
func parseCookieName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !canaryToken.MatchString(s) {
		return "", fmt.Errorf("not a cookie name (letters, digits and -._~)")
	}
	return s, nil
}

func parseCookiePath(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !cookiePath.MatchString(s) {
		return "", fmt.Errorf("not a cookie path (/ then letters, digits and -._~/:,?&=)")
	}
	return s, nil
}

func parseCookieDomain(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !cookieDomain.MatchString(s) {
		return "", fmt.Errorf("not a cookie domain (letters, digits and -._~)")
	}
	return s, nil
}

// parseSameSite reads SameSite's value, written as browsers document it.
func parseSameSite(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none":
		return "None", nil
	case "lax":
		return "Lax", nil
	case "strict":
		return "Strict", nil
	}
	return "", fmt.Errorf("not None, Lax or Strict")
}
