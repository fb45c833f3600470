package annotations

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// hostVariables are the variables an auth-url's host may be: the request's
// own host, which Envoy matched against the rule's host.
var hostVariables = map[string]bool{"$host": true, "${host}": true, "$http_host": true, "${http_host}": true, "$best_http_host": true, "${best_http_host}": true}

// dnsName is a host name of letters, digits, hyphens and underscores in
// non-empty labels (so "invalid..auth.url", which ingress-nginx's e2e
// denies, is not one).
var dnsName = regexp.MustCompile(`^[a-zA-Z0-9_]([-a-zA-Z0-9_]*[a-zA-Z0-9_])?(\.[a-zA-Z0-9_]([-a-zA-Z0-9_]*[a-zA-Z0-9_])?)*\.?$`)

// checkNginxText refuses what must never reach a header, a URL or a
// cache key: control characters (CR, LF and NUL among them), spaces, and
// nginx variables the authorisation service does not expand.
func checkNginxText(s string, spaces bool) error {
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (!spaces && c == ' ') {
			return fmt.Errorf("holds a control character or a space")
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		name, n := authzapi.VariableAt(s[i:])
		if n == 0 {
			return fmt.Errorf("holds a $ that is not an nginx variable")
		}
		if !authzapi.KnownVariable(name) {
			return fmt.Errorf("nginx variable $%s is not one ingress-xds expands", name)
		}
		i += n - 1
	}
	return nil
}

// parseAuthURL reads auth-url: an http or https URL with a host and
// without userinfo. The host is a name or an address that is not
// loopback, link-local or unspecified (the service also checks every
// address it connects to), or the request's own host ($host). Variables
// elsewhere are those the service expands.
func parseAuthURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkNginxText(s, false); err != nil {
		return "", err
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return "", fmt.Errorf("not an http:// or https:// URL")
	}
	authority, _, _ := strings.Cut(rest, "/")
	authority, _, _ = strings.Cut(authority, "?")
	if strings.Contains(authority, "@") {
		return "", fmt.Errorf("holds userinfo (user:password@), which would be sent to the auth service")
	}
	host := authority
	if h, port, found := cutPort(authority); found {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %q is not a port", port)
		}
		host = h
	}
	if strings.Contains(host, "$") {
		if !hostVariables[host] {
			return "", fmt.Errorf("host %q: the only variable a host may be is $host (the request's own)", host)
		}
		return s, nil
	}
	if err := checkAuthHost(host); err != nil {
		return "", err
	}
	if _, err := url.Parse(strings.ReplaceAll(s, "$", "")); err != nil {
		return "", fmt.Errorf("not a URL: %w", err)
	}
	return s, nil
}

// cutPort splits "host:port" and "[v6]:port"; found is false without a
// port.
func cutPort(authority string) (host, port string, found bool) {
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return authority, "", false
		}
		if rest := authority[end+1:]; strings.HasPrefix(rest, ":") {
			return authority[:end+1], rest[1:], true
		}
		return authority, "", false
	}
	return strings.Cut(authority, ":")
}

// checkAuthHost refuses a literal host the service must never reach.
func checkAuthHost(host string) error {
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		a = a.Unmap()
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalMulticast() {
			return fmt.Errorf("host %s is a loopback, link-local, unspecified or multicast address", a)
		}
		return nil
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return fmt.Errorf("host %s is loopback", host)
	}
	if !dnsName.MatchString(host) {
		return fmt.Errorf("invalid url host %q", host)
	}
	return nil
}

// parseSigninURL reads auth-signin: where a client without credentials is
// redirected, an http or https URL or an absolute path, with the
// variables the service expands ($host, $escaped_request_uri, ...).
func parseSigninURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkNginxText(s, false); err != nil {
		return "", err
	}
	scheme, rest, ok := strings.Cut(s, "://")
	switch {
	case ok && (scheme == "http" || scheme == "https") && rest != "" && rest[0] != '/':
	case !ok && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
	default:
		return "", fmt.Errorf("not an http or https URL with a host, nor an absolute path")
	}
	return s, nil
}

// parseNginxText reads a value the service expands per request (an
// auth-cache-key, an auth-request-redirect): no control characters, only
// variables it knows.
func parseNginxText(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty")
	}
	if err := checkNginxText(s, true); err != nil {
		return "", err
	}
	return s, nil
}

// queryParam is a query parameter's name (auth-signin-redirect-param).
var queryParam = regexp.MustCompile(`^[-._~a-zA-Z0-9]+$`)

func parseQueryParam(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !queryParam.MatchString(s) {
		return "", fmt.Errorf("not a query parameter's name (letters, digits and -._~)")
	}
	return s, nil
}

// headerName is ingress-nginx's authreq header regex.
var headerName = regexp.MustCompile(`^[a-zA-Z\d\-_]+$`)

// unsettable are headers the auth service's answer must not set on the
// upstream request: Envoy keeps them for the connection and the body.
var unsettable = map[string]bool{"host": true, "connection": true, "keep-alive": true, "transfer-encoding": true,
	"content-length": true, "te": true, "upgrade": true, "proxy-connection": true, "trailer": true}

// parseHeaderNames reads auth-response-headers: a comma-separated list of
// header names.
func parseHeaderNames(s string) ([]string, error) {
	if err := checkNginxText(s, true); err != nil || strings.Contains(s, "$") {
		return nil, fmt.Errorf("holds a control character or a $")
	}
	var out []string
	for h := range strings.SplitSeq(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if !headerName.MatchString(h) {
			return nil, fmt.Errorf("%q is not a header name (letters, digits, - and _)", h)
		}
		if unsettable[strings.ToLower(h)] {
			return nil, fmt.Errorf("header %s is Envoy's to set, never an auth service's", h)
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no header name")
	}
	return out, nil
}

// nginxTime is one nginx time (https://nginx.org/en/docs/syntax.html).
var nginxTime = regexp.MustCompile(`^\d+(ms|s|m|h|d|w|M|y)$`)

// parseCacheDuration reads auth-cache-duration as ingress-nginx validates
// it: comma-separated groups of status codes (or "any") then times
// ("200 202 401 5m", "1h 30m"), each group with a time.
func parseCacheDuration(s string) (string, error) {
	groups := 0
	for group := range strings.SplitSeq(s, ",") {
		fields := strings.Fields(group)
		if len(fields) == 0 {
			continue
		}
		seenTime := false
		for _, f := range fields {
			switch {
			case nginxTime.MatchString(f):
				seenTime = true
			case (f == "any" || len(f) == 3 && strings.Trim(f, "0123456789") == "") && !seenTime:
			default:
				return "", fmt.Errorf("%q is not a status code before the time nor an nginx time (such as 5m)", f)
			}
		}
		if !seenTime {
			return "", fmt.Errorf("%q has no time", strings.TrimSpace(group))
		}
		groups++
	}
	if groups == 0 {
		return "", fmt.Errorf("empty")
	}
	return strings.TrimSpace(s), nil
}

// parseInt reads a whole number, as ingress-nginx's ValidateInt (which
// takes a negative one too).
func parseInt(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("not a whole number")
	}
	return int(n), nil
}

// ValidHeaderName says whether s is a header name ingress-nginx takes in
// its authentication keys and ConfigMaps.
func ValidHeaderName(s string) bool { return headerName.MatchString(s) }
