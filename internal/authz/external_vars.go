package authz

import (
	"encoding/base64"
	"net"
	"net/url"
	"strings"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// requestVars is what nginx's variables read of the client's request, as
// the CheckRequest carries it.
type requestVars struct {
	method, scheme string
	authority      string // the Host header as sent, with its port
	requestURI     string // the path with its query, as sent
	remoteAddr     string
	requestID      string
	headers        map[string]string // lower-case names, as Envoy sends them
}

// expand replaces the nginx variables in s by their values for r; a
// variable the service does not know (the front-end refuses those) is
// left out, as nginx's unset variables are empty.
func (r *requestVars) expand(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		name, n := authzapi.VariableAt(s[i:])
		if n == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(r.variable(name))
		i += n
	}
	return b.String()
}

// variable is the value of one nginx variable.
func (r *requestVars) variable(name string) string {
	switch name {
	case "host":
		return r.host()
	case "http_host", "best_http_host":
		return r.authority
	case "scheme", "pass_access_scheme":
		return r.scheme
	case "request_uri":
		return r.requestURI
	case "escaped_request_uri":
		return escapeURI(r.requestURI)
	case "uri":
		path, _, _ := strings.Cut(r.requestURI, "?")
		if p, err := url.PathUnescape(path); err == nil {
			return p
		}
		return path
	case "args", "query_string":
		_, q, _ := strings.Cut(r.requestURI, "?")
		return q
	case "request_method":
		return r.method
	case "remote_addr":
		return r.remoteAddr
	case "remote_user":
		return r.remoteUser()
	case "request_id", "req_id":
		return r.requestID
	}
	if h, ok := strings.CutPrefix(name, "http_"); ok {
		return r.headers[strings.ReplaceAll(strings.ToLower(h), "_", "-")]
	}
	if a, ok := strings.CutPrefix(name, "arg_"); ok {
		return r.arg(a)
	}
	if c, ok := strings.CutPrefix(name, "cookie_"); ok {
		return r.cookie(c)
	}
	return ""
}

// host is nginx's $host: the Host header's name, lower case, without the
// port.
func (r *requestVars) host() string {
	h := r.authority
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
}

// remoteUser is nginx's $remote_user: the user name of Basic credentials.
func (r *requestVars) remoteUser() string {
	scheme, cred, ok := strings.Cut(r.headers["authorization"], " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return ""
	}
	user, _, _ := strings.Cut(string(raw), ":")
	return user
}

// arg is nginx's $arg_name: the query parameter's value as sent (not
// decoded); names compare without regard to case.
func (r *requestVars) arg(name string) string {
	_, q, _ := strings.Cut(r.requestURI, "?")
	for part := range strings.SplitSeq(q, "&") {
		k, v, _ := strings.Cut(part, "=")
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// cookie is nginx's $cookie_name.
func (r *requestVars) cookie(name string) string {
	for part := range strings.SplitSeq(r.headers["cookie"], ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		if k == name {
			return v
		}
	}
	return ""
}

// escapeURI is the set-misc module's set_escape_uri, which ingress-nginx's
// $escaped_request_uri comes from: every byte but the unreserved ones as
// %XX.
func escapeURI(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
