package annotations

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Client certificates (ingress-nginx's CertificateAuth group) and TLS
// passthrough. ingress-nginx applies the client certificate settings per
// server: the oldest Ingress of a host that names auth-tls-secret sets
// them for every path of the host, whichever Ingress the path is from.

// AuthTLSSecret names the Secret whose ca.crt verifies clients.
var AuthTLSSecret = key[string](&definition{
	name:   "auth-tls-secret",
	under:  Nginx,
	scope:  ScopeHost,
	refers: KindSecret,
	doc: `A Secret "namespace/name" of the Ingress's own namespace with ca.crt, the CA bundle the clients' certificates must ` +
		`chain to. It turns client certificate verification on for the host's HTTPS filter chain (and the other auth-tls keys). ` +
		`The oldest Ingress of a host naming one sets the host's settings; a younger one that differs is reported. A Secret of ` +
		`another namespace, missing, or without a valid ca.crt refuses the Ingress: its paths answer 503, never served without ` +
		`the check.`,
	verdict: HonouredWithDifference,
	note: `Where ingress-nginx answers 403 to the whole host for an unusable Secret, the refused Ingress's paths answer 503 and ` +
		`the host's other Ingresses are served as they would be without it. Stricter than ingress-nginx where it would serve ` +
		`without the check: a Secret without ca.crt (nginx then drops the verification) refuses the Ingress; over plain HTTP a ` +
		`request to a host with auth-tls-verify-client "on" that is not redirected to HTTPS is answered 400 (nginx serves it ` +
		`unverified). TLS session resumption is off on such a host's filter chain, so that every connection's certificate is verified.`,
}, parseNamespacedName)

// AuthTLSVerifyClient is nginx's ssl_verify_client.
var AuthTLSVerifyClient = key[string](&definition{
	name:  "auth-tls-verify-client",
	under: Nginx,
	scope: ScopeHost,
	doc: `"on" (the default): a request over a connection without a certificate is answered 400 "No required SSL certificate ` +
		`was sent", one whose certificate does not verify 400 "The SSL certificate error" (the TLS handshake succeeds, as with ` +
		`nginx); "optional": a certificate is asked for, and one presented must verify; "optional_no_ca": asked for, never ` +
		`required to verify; "off": not asked for. The upstream gets ssl-client-verify (SUCCESS, NONE, FAILED), ` +
		`ssl-client-subject-dn and ssl-client-issuer-dn, in place of any the client sent.`,
	verdict: HonouredWithDifference,
	note:    `With "optional_no_ca", a certificate that does not verify is told upstream as "FAILED" without nginx's reason after it.`,
}, parseOneOf("on", "off", "optional", "optional_no_ca"))

// AuthTLSVerifyDepth is nginx's ssl_verify_depth.
var AuthTLSVerifyDepth = key[int](&definition{
	name:  "auth-tls-verify-depth",
	under: Nginx,
	scope: ScopeHost,
	doc:   `How many CA certificates may stand above the client's own in its chain ("1", the default, and for "0": signed by a CA of the bundle itself); at most 100.`,
}, parseVerifyDepth)

// AuthTLSErrorPage is where a refused client is sent.
var AuthTLSErrorPage = key[string](&definition{
	name:  "auth-tls-error-page",
	under: Nginx,
	scope: ScopeHost,
	doc: `A URL a request refused for its certificate (where it would get 400) is redirected to, with 302 and the value as it ` +
		`is in Location, as nginx's error_page 495 496 does with a URL. A path ("/error") or a named location is an nginx internal ` +
		`redirect, which ingress-xds cannot make: reported, and such requests keep their 400.`,
}, parseErrorPage)

// AuthTLSPassCertificate sends the client's certificate upstream.
var AuthTLSPassCertificate = key[bool](&definition{
	name:  "auth-tls-pass-certificate-to-upstream",
	under: Nginx,
	scope: ScopeHost,
	doc:   `"true": the client's certificate, URL-escaped PEM, goes upstream in the ssl-client-cert header, in place of any the client sent.`,
}, parseBool)

// AuthTLSMatchCN restricts the client certificates' subjects.
var AuthTLSMatchCN = key[string](&definition{
	name:  "auth-tls-match-cn",
	under: Nginx,
	scope: ScopeHost,
	doc: `"CN=" followed by a regular expression: the whole value is searched for (unanchored, case-sensitive) in the subject of ` +
		`the client's certificate (RFC 2253, "CN=client,O=Example"); a request without a match, or without a certificate, over ` +
		`HTTPS or plain HTTP, is answered 403. An expression RE2 cannot compile (PCRE's look-arounds and back-references) refuses the Ingress.`,
	verdict: HonouredWithDifference,
	note:    `RE2, not PCRE; the 403's body is Envoy's ("RBAC: access denied"), not nginx's "client certificate unauthorized".`,
}, parseMatchCN)

// SSLPassthrough hands a host's TLS connections to its backend.
var SSLPassthrough = key[bool](&definition{
	name:  "ssl-passthrough",
	under: Nginx,
	scope: ScopeHost,
	doc: `"true", with serve --enable-ssl-passthrough: TLS connections to the host (by SNI) on the HTTPS port go, as they are, to ` +
		`the backend of the host's "/" path, which terminates TLS itself; every other annotation is then moot over HTTPS. Plain ` +
		`HTTP to the host is still routed, to the backends over TLS (or redirected to HTTPS, as ssl-redirect says), as ` +
		`ingress-nginx does. Without the flag, or without a "/" path, it is reported and the host terminates TLS as usual.`,
	verdict: HonouredWithDifference,
	note: `Only the host's oldest Ingress decides, for a "/" path of its own (ingress-nginx takes any Ingress of the host, to its "/" ` +
		`path whoever serves it: a younger Ingress would take the TLS of a host another team serves); a younger one asking is ` +
		`reported. Plain HTTP goes to the backends over TLS for the paths of the Ingress that sets it, where ingress-nginx switches ` +
		`every backend of the host's "/" path.`,
}, parseBool)

func authTLSKeys() []*definition {
	return []*definition{
		AuthTLSSecret.def, AuthTLSVerifyClient.def, AuthTLSVerifyDepth.def, AuthTLSErrorPage.def,
		AuthTLSPassCertificate.def, AuthTLSMatchCN.def, SSLPassthrough.def,
	}
}

// parseVerifyDepth reads a whole number from 0 to 100; 0 is 1, as
// ingress-nginx takes it.
func parseVerifyDepth(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 100 {
		return 0, errors.New("not a whole number from 0 to 100")
	}
	return max(n, 1), nil
}

// errorPageForm is what ingress-nginx's validator admits (its
// redirectRegex): a named location, or an optional scheme, host and port,
// then path segments of letters, digits and -_.
var errorPageForm = regexp.MustCompile(`^(@[A-Za-z0-9_-]+|((https?://)?[A-Za-z0-9\-.]+(:\d+)?)?(/[A-Za-z0-9\-_.]+)*/?)$`)

// parseErrorPage reads a URL nginx's error_page redirects to.
func parseErrorPage(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || !errorPageForm.MatchString(s):
		return "", errors.New("not a URL ingress-nginx takes (scheme, host and port, then segments of letters, digits and -_.)")
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "@"):
		return "", errors.New("a path or named location, which nginx serves by an internal redirect that ingress-xds cannot make: refused requests keep their 400")
	}
	return s, nil
}

// parseMatchCN reads "CN=" and an expression, as ingress-nginx's
// CommonNameAnnotationValidator; the whole value is the expression.
func parseMatchCN(s string) (string, error) {
	if !strings.HasPrefix(s, "CN=") {
		return "", errors.New(`missing the prefix "CN="`)
	}
	if len(s) > 1024 {
		return "", fmt.Errorf("%d bytes long, over 1024", len(s))
	}
	if _, err := regexp.Compile(s); err != nil {
		return "", fmt.Errorf("not an RE2 expression: %w", err)
	}
	return s, nil
}
