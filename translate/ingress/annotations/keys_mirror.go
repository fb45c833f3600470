package annotations

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ingress-nginx's mirror keys: nginx's mirror directive, which sends a
// copy of each request to an internal location that proxies it to
// mirror-target with Host mirror-host, the answers dropped. ingress-nginx
// templated both into nginx.conf (CVE-2025-1098); here they are parsed
// into a URL of checked parts and never reach Envoy as text to interpret.

// MirrorTarget is a parsed mirror-target.
type MirrorTarget struct {
	// Scheme is http or https.
	Scheme string
	// Host is a DNS name, lower case, or an IP address (no brackets);
	// never a local one.
	Host string
	// Port is the URL's, or the scheme's.
	Port uint32
	// Path is the URL's path, "" when it has none; RequestURI says that
	// $request_uri follows it.
	Path       string
	RequestURI bool
}

// MirrorTargetKey is where copies of the Ingress's requests go.
var MirrorTargetKey = key[MirrorTarget](&definition{
	name:  "mirror-target",
	under: Nginx,
	scope: ScopeRoute,
	doc: `An http or https URL ("https://test.example.com$request_uri") to which a copy of every request of the Ingress is sent, ` +
		`its answer dropped; the client gets the backend's. The copy's path is the URL's path followed by the request's query ` +
		`("http://test.example.com/mirror" gets /mirror?a=b for /x?a=b), or, with $request_uri at its end, the URL's path ` +
		`followed by the request's path and query as the client sent them; a URL without a path gets /_mirror-<the Ingress's ` +
		`UID>, as from ingress-nginx. Only with --enable-external-name: like an ExternalName Service, it lets an Ingress send ` +
		`traffic to any name.`,
	verdict: HonouredWithDifference,
	note: `Needs --enable-external-name (reported as MirrorRefused and not applied without it): a mirror target, like an ` +
		`ExternalName Service, makes Envoy connect to a name of the Ingress author's choosing, and is checked as one: a loopback, ` +
		`link-local, multicast or unspecified address, or localhost, is refused as written; the control plane resolves a name and ` +
		`refuses it when it resolves to such an address or one of the node's own (MirrorRefused; --external-name-allow-local aside), ` +
		`and hands Envoy the checked addresses, never the name; a name not resolved yet is not copied to (MirrorUnresolved). ` +
		`Of nginx's variables only $request_uri, at the end, is ` +
		`taken; a query in the URL is not. The copy carries the headers Envoy adds to every upstream request (X-Forwarded-For, ` +
		`X-Request-ID, X-Envoy-Internal), and its $request_uri is the path as Envoy normalised it; over https the target's ` +
		`name is sent as SNI (nginx's proxy_ssl_server_name is off) and, as from nginx, its certificate is not verified. ` +
		`Envoy does not wait for the copy's answer, where nginx's mirror holds the request until the copy is answered.`,
}, parseMirrorTarget)

// MirrorHostKey is the Host of the copies.
var MirrorHostKey = key[string](&definition{
	name:    "mirror-host",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The Host header of the copies mirror-target sends ("test.example.com"); by default the target's host, without its port.`,
	verdict: HonouredWithDifference,
	note:    `As mirror-target.`,
}, parseMirrorHost)

// MirrorRequestBodyKey says whether the copies carry the body.
var MirrorRequestBodyKey = key[bool](&definition{
	name:    "mirror-request-body",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"off": the copies mirror-target sends have no body; "on" (the default): they carry the request's.`,
	verdict: HonouredWithDifference,
	note: `As mirror-target. With "off" the copy is sent without a body and with Content-Length 0 (nginx sends the ` +
		`request's Content-Length and no body), once the request's body has arrived.`,
}, parseOnOff)

// mirrorChars are what ingress-nginx's parser lets into a URL that may
// hold nginx variables (its URLWithNginxVariableRegex) but space and ",":
// no @ (userinfo), %, quotes, ; or control characters.
var mirrorChars = regexp.MustCompile(`^[-._~a-zA-Z0-9/:?&=$]+$`)

// requestURI is the one nginx variable a mirror target may end with.
const requestURI = "$request_uri"

// parseMirrorTarget reads an http or https URL with a host that is not a
// local one, no userinfo, no query, and no variable but $request_uri at
// the end.
func parseMirrorTarget(s string) (MirrorTarget, error) {
	s = strings.TrimSpace(s)
	if !mirrorChars.MatchString(s) {
		return MirrorTarget{}, fmt.Errorf("not a URL ingress-nginx takes (only letters, digits and -._~/:?&=$ are allowed)")
	}
	var t MirrorTarget
	if rest, ok := strings.CutSuffix(s, requestURI); ok {
		s, t.RequestURI = rest, true
	}
	if strings.Contains(s, "$") {
		return MirrorTarget{}, fmt.Errorf("an nginx variable other than $request_uri at the end: not supported")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return MirrorTarget{}, fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return MirrorTarget{}, fmt.Errorf("not an http or https URL")
	case u.Hostname() == "":
		return MirrorTarget{}, fmt.Errorf("a URL without a host")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return MirrorTarget{}, fmt.Errorf("a URL with a query or fragment: not supported (the copy takes the request's query)")
	}
	t.Scheme, t.Path = u.Scheme, u.Path
	t.Host = strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if err := mirrorHostName(t.Host); err != nil {
		return MirrorTarget{}, err
	}
	t.Port = 80
	if t.Scheme == "https" {
		t.Port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return MirrorTarget{}, fmt.Errorf("port %q is not a port", p)
		}
		t.Port = uint32(n)
	}
	return t, nil
}

// mirrorHostName accepts a DNS name or an IP address that is not local:
// never this machine, its link, or no address at all.
func mirrorHostName(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || ip.Is4() && ip.As4()[0] == 0 {
			return fmt.Errorf("%s is a local, link-local, multicast or unspecified address", host)
		}
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("%s is a local name", host)
	}
	if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
		return fmt.Errorf("%q is not a DNS name nor an IP address", host)
	}
	return nil
}

// parseMirrorHost reads a Host header value: a DNS name or an IP address,
// with an optional port.
func parseMirrorHost(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	name := s
	if h, p, err := splitHostPort(s); err == nil {
		name = h
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return "", fmt.Errorf("port %q is not a port", p)
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return s, nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("not a host name (a DNS name or an IP address, with an optional port)")
	}
	return s, nil
}

// splitHostPort splits "host:port"; an IPv6 address without brackets has
// no port.
func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		return "", "", fmt.Errorf("no port")
	}
	return strings.Trim(s[:i], "[]"), s[i+1:], nil
}

// mirrorKeys lists the keys of this file, for table.
func mirrorKeys() []*definition {
	return []*definition{MirrorTargetKey.def, MirrorHostKey.def, MirrorRequestBodyKey.def}
}

// MirrorTargetHost is the host of the mirror-target in annotations (the
// first prefix's that parses), for what resolves names before the
// translator reads them (ingress.MirrorNames).
func MirrorTargetHost(r *Registry, annotations map[string]string) (string, bool) {
	for _, key := range r.fullKeys(MirrorTargetKey.def) {
		if v, ok := annotations[key]; ok {
			t, err := parseMirrorTarget(v)
			if err != nil {
				return "", false
			}
			return t.Host, true
		}
	}
	return "", false
}
