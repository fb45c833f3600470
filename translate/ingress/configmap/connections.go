package configmap

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Connections are the keys of how Envoy treats connections, parsed: the
// listeners' and the clusters' settings (keep-alive, TLS, HTTP/2, the
// client's address, the access log).
type Connections struct {
	// http and https are what the plain and the TLS listener get (TLS
	// settings are the HTTPS listener's only), and httpHops and httpsHops
	// the same without reading the client's address from a header or past
	// CIDRs, for listeners whose trusted hops serve
	// --trusted-forwarded-hops set (which wins).
	http, https, httpHops, httpsHops *ir.Downstream
	// Upstream is every backend cluster's connection pool; nil: Envoy's.
	Upstream *ir.Upstream

	conn connKeys
}

// connKeys are the keys read, until finishConnections makes the IR's
// values of them.
type connKeys struct {
	idle, requests           uint32
	headersTimeout, streams  uint32
	noKeepAlive              bool
	tlsMin, tlsMax           ir.TLSVersion
	ciphers                  string
	curves                   string
	noHTTP2                  bool
	realIP, fullForwardedFor bool
	proxyProtocol            bool
	proxyProtocolTimeout     ir.Duration // proxy-protocol-header-timeout; 0: unset
	// underscores and ignoreInvalid are enable-underscores-in-headers
	// and ignore-invalid-headers, nil when unset.
	underscores, ignoreInvalid *bool
	// sessionTickets and sessionCache are ssl-session-tickets and
	// ssl-session-cache, nil when unset; sessionTimeout
	// ssl-session-timeout in seconds, 0 unset.
	sessionTickets, sessionCache *bool
	sessionTimeout               uint32
	ticketKey                    []byte // ssl-session-ticket-key, 80 bytes (ticketkey.go)
	backendServer                bool
	originalURI                  bool
	hide                         []string
	clientHeader                 string
	forwardedHost                string // forwarded-host-header, lower case; "": X-Forwarded-Host
	trustedCIDRs                 []string
	trustedCIDRsSet              bool
	log                          logKeys
	upstream                     ir.Upstream
	upstreamNoKeepalive          bool
}

// seconds reads a whole number of seconds, as nginx's keepalive_timeout
// takes the ConfigMap's number ("75"; "75s" too).
func seconds(value string) (uint32, error) {
	v := strings.TrimSuffix(strings.TrimSpace(value), "s")
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("not a number of seconds")
	}
	return uint32(n), nil
}

// count reads a positive whole number.
func count(value string) (uint32, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("not a positive number")
	}
	return uint32(n), nil
}

// nginxDuration reads nginx's time form ("1h", "75s", "1h30m", "90"
// seconds), whole seconds.
func nginxDuration(value string) (uint32, error) {
	v := strings.TrimSpace(value)
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return uint32(n), nil
	}
	if v == "" {
		return 0, fmt.Errorf("not a time (\"1h\", \"75s\")")
	}
	units := map[string]uint64{"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
	var total uint64
	for v != "" {
		i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
		if i <= 0 {
			return 0, fmt.Errorf("not a time (\"1h\", \"75s\")")
		}
		n, _ := strconv.ParseUint(v[:i], 10, 32)
		j := i + strings.IndexFunc(v[i:], func(r rune) bool { return r >= '0' && r <= '9' })
		if j < i {
			j = len(v)
		}
		unit, ok := units[v[i:j]]
		if !ok {
			return 0, fmt.Errorf("not a time (\"1h\", \"75s\"): unit %q", v[i:j])
		}
		total += n * unit
		v = v[j:]
	}
	if total > 1<<31 {
		return 0, fmt.Errorf("too long")
	}
	return uint32(total), nil
}

func keepAlive(_ *Table, s *Settings, _, value string) error {
	n, err := seconds(value)
	if err != nil {
		return fmt.Errorf("%v: treated as unset (Envoy's hour)", err)
	}
	// nginx's keepalive_timeout 0 closes every connection after its
	// response.
	s.conn.idle, s.conn.noKeepAlive = n, n == 0
	return nil
}

func keepAliveRequests(_ *Table, s *Settings, _, value string) error {
	n, err := count(value)
	if err != nil {
		return fmt.Errorf("%v: treated as unset (no bound)", err)
	}
	s.conn.requests = n
	return nil
}

func upstreamKeepaliveConnections(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
	if err != nil {
		return fmt.Errorf("not a number: treated as unset")
	}
	// 0 turns nginx's upstream keepalive off: a connection per request.
	// Envoy has no cap on idle connections to set from another number.
	s.conn.upstreamNoKeepalive = n == 0
	return nil
}

func upstreamKeepaliveTimeout(_ *Table, s *Settings, _, value string) error {
	n, err := seconds(value)
	if err != nil || n == 0 {
		return fmt.Errorf("not a positive number of seconds: treated as unset (Envoy's hour)")
	}
	s.conn.upstream.IdleTimeout = n
	return nil
}

func upstreamKeepaliveRequests(_ *Table, s *Settings, _, value string) error {
	n, err := count(value)
	if err != nil {
		return fmt.Errorf("%v: treated as unset (no bound)", err)
	}
	s.conn.upstream.MaxRequests = n
	return nil
}

func upstreamKeepaliveTime(_ *Table, s *Settings, _, value string) error {
	n, err := nginxDuration(value)
	if err != nil || n == 0 {
		return fmt.Errorf("not a positive time (\"1h\", \"75s\"): treated as unset (no bound)")
	}
	s.conn.upstream.MaxLifetime = n
	return nil
}

// sslProtocols reads nginx's ssl_protocols: the lowest and the highest TLS
// version named bound the listener's. SSLv2 and SSLv3 are not served by
// Envoy's BoringSSL; versions between two named are served too.
func sslProtocols(_ *Table, s *Settings, _, value string) error {
	versions := map[string]ir.TLSVersion{"TLSv1": ir.TLS10, "TLSv1.1": ir.TLS11, "TLSv1.2": ir.TLS12, "TLSv1.3": ir.TLS13}
	order := []ir.TLSVersion{ir.TLS10, ir.TLS11, ir.TLS12, ir.TLS13}
	var named []ir.TLSVersion
	var dropped []string
	for _, w := range strings.Fields(value) {
		v, ok := versions[w]
		switch {
		case ok:
			named = append(named, v)
		case w == "SSLv2" || w == "SSLv3":
			dropped = append(dropped, w)
		default:
			return fmt.Errorf("%q is not one of SSLv2, SSLv3, TLSv1, TLSv1.1, TLSv1.2, TLSv1.3: treated as unset (TLS 1.2 and 1.3)", w)
		}
	}
	if len(named) == 0 {
		return fmt.Errorf("no TLS version Envoy serves: treated as unset (TLS 1.2 and 1.3)")
	}
	slices.SortFunc(named, func(a, b ir.TLSVersion) int { return slices.Index(order, a) - slices.Index(order, b) })
	named = slices.Compact(named)
	s.conn.tlsMin, s.conn.tlsMax = named[0], named[len(named)-1]
	var notes []string
	if len(dropped) > 0 {
		notes = append(notes, strings.Join(dropped, " ")+" not served (Envoy has no SSL)")
	}
	if lo, hi := slices.Index(order, named[0]), slices.Index(order, named[len(named)-1]); hi-lo+1 != len(named) {
		notes = append(notes, fmt.Sprintf("every version from %s to %s is served (Envoy takes a range)", named[0], named[len(named)-1]))
	}
	if len(notes) > 0 {
		return fmt.Errorf("applied as TLS %s to %s: %s", named[0], named[len(named)-1], strings.Join(notes, "; "))
	}
	return nil
}

// sslCiphers reads nginx's ssl_ciphers, an OpenSSL cipher list: the names
// Envoy's BoringSSL takes (proxy-ssl-ciphers' list) are kept in their
// order, those it lacks (the DHE suites of ingress-nginx's default among
// them) dropped and reported. An OpenSSL expression (ALL, HIGH, !aNULL,
// +RSA, @STRENGTH) has no BoringSSL form: the value is then reported and
// Envoy's ciphers are used.
func sslCiphers(t *Table, s *Settings, _, value string) error {
	var kept, dropped []string
	for _, name := range strings.FieldsFunc(value, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		// Suite names hold a dash; aliases (ALL, HIGH, aNULL) do not, and
		// !, -, + and @ start exclusions, moves and strengths.
		if strings.ContainsAny(name, "!+@") || strings.HasPrefix(name, "-") || !strings.Contains(name, "-") {
			return fmt.Errorf("%q is an OpenSSL expression, which Envoy's BoringSSL does not take: treated as unset (Envoy's ciphers)", name)
		}
		if _, err := annotations.ProxySSLCiphers.Parse(name); err != nil {
			dropped = append(dropped, name)
			continue
		}
		if !slices.Contains(kept, name) {
			kept = append(kept, name)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("no cipher suite Envoy's BoringSSL takes by name: treated as unset (Envoy's ciphers)")
	}
	s.conn.ciphers = strings.Join(kept, ":")
	if len(dropped) > 0 {
		return fmt.Errorf("%s not served: BoringSSL lacks them (the others are)", strings.Join(dropped, ", "))
	}
	return nil
}

// opensslGroups are OpenSSL's names of the key exchange groups, which
// nginx's ssl_ecdh_curve takes, as BoringSSL names them (ir.ECDHGroups).
var opensslGroups = map[string]string{
	"x25519": "X25519", "prime256v1": "P-256", "secp256r1": "P-256", "p-256": "P-256",
	"secp384r1": "P-384", "p-384": "P-384", "secp521r1": "P-521", "p-521": "P-521",
	"x25519mlkem768": "X25519MLKEM768",
}

func sslECDHCurve(_ *Table, s *Settings, _, value string) error {
	v := strings.TrimSpace(value)
	if strings.EqualFold(v, "auto") {
		return nil // OpenSSL's own choice: Envoy's
	}
	var kept, dropped []string
	for _, name := range strings.Split(v, ":") {
		g, ok := opensslGroups[strings.ToLower(strings.TrimSpace(name))]
		switch {
		case !ok:
			dropped = append(dropped, name)
		case !slices.Contains(kept, g):
			kept = append(kept, g)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("no group Envoy's BoringSSL serves (%s): treated as unset (Envoy's)", strings.Join(ir.ECDHGroups(), ", "))
	}
	s.conn.curves = strings.Join(kept, ":")
	if len(dropped) > 0 {
		return fmt.Errorf("%s not served: BoringSSL lacks them (the others are)", strings.Join(dropped, ", "))
	}
	return nil
}

func useHTTP2(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (true)")
	}
	s.conn.noHTTP2 = !on
	return nil
}

func clientHeaderTimeout(_ *Table, s *Settings, _, value string) error {
	n, err := seconds(value)
	if err != nil || n == 0 {
		return fmt.Errorf("not a number of seconds above 0: treated as unset (no bound)")
	}
	s.conn.headersTimeout = n
	return nil
}

func http2MaxConcurrentStreams(_ *Table, s *Settings, _, value string) error {
	n, err := count(value)
	if err != nil || n > math.MaxInt32 {
		return fmt.Errorf("not a number from 1 to %d: treated as unset (Envoy's)", math.MaxInt32)
	}
	s.conn.streams = n
	return nil
}

func disableIPv6(_ *Table, s *Settings, _, value string) error {
	var off *bool
	if err := boolKey(&off, value, "IPv6 as serve --listen-address says"); err != nil {
		return err
	}
	s.DisableIPv6 = *off
	return nil
}

func sslSessionTickets(_ *Table, s *Settings, _, value string) error {
	return boolKey(&s.conn.sessionTickets, value, "Envoy's: on")
}

func sslSessionCache(_ *Table, s *Settings, _, value string) error {
	return boolKey(&s.conn.sessionCache, value, "Envoy's: on")
}

func sslSessionTimeout(_ *Table, s *Settings, _, value string) error {
	n, err := nginxDuration(value)
	if err != nil || n == 0 {
		return fmt.Errorf("not a time above 0 (\"10m\"): treated as unset (Envoy's)")
	}
	s.conn.sessionTimeout = n
	return nil
}

// hideHeaders reads hide-headers as ingress-nginx's configmap.go does
// (comma-separated, trimmed): nginx.tmpl's proxy_hide_header of each at
// http level.
func hideHeaders(_ *Table, s *Settings, _, value string) error {
	var bad []string
	s.conn.hide = nil
	for _, name := range strings.Split(value, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		switch {
		case name == "":
		case !responseHeaderName.MatchString(name) || slices.Contains([]string{"connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}, name):
			bad = append(bad, strconv.Quote(name))
		case !slices.Contains(s.conn.hide, name):
			s.conn.hide = append(s.conn.hide, name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: not a header name, or one framing the response, which Envoy owns: not hidden (the others are)", strings.Join(bad, ", "))
	}
	return nil
}

func proxyAddOriginalURIHeader(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.conn.originalURI, value)
}

func allowBackendServerHeader(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.conn.backendServer, value)
}

// switchKey reads a key of true or false, false by default, into *to; a
// value that is neither leaves it unset.
func switchKey(to *bool, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	*to = on
	return nil
}

// boolKey reads a key of true or false into *to; unset, it stays nil.
func boolKey(to **bool, value, unset string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (%s)", unset)
	}
	*to = &on
	return nil
}

func enableUnderscoresInHeaders(_ *Table, s *Settings, _, value string) error {
	return boolKey(&s.conn.underscores, value, "Envoy's: passed on")
}

func ignoreInvalidHeaders(_ *Table, s *Settings, _, value string) error {
	return boolKey(&s.conn.ignoreInvalid, value, "true")
}

func enableRealIP(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.conn.realIP = s.conn.realIP || on
	return nil
}

// useProxyProtocol reads use-proxy-protocol: nginx.tmpl's listen ...
// proxy_protocol on both listeners, with the realip module taking the
// client's address from the header.
func useProxyProtocol(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.conn.proxyProtocol, value)
}

// proxyProtocolHeaderTimeout reads proxy-protocol-header-timeout as
// ingress-nginx's template/configmap.go does: a Go duration ("5s").
func proxyProtocolHeaderTimeout(_ *Table, s *Settings, _, value string) error {
	d, err := time.ParseDuration(strings.TrimSpace(value))
	if err != nil || d <= 0 {
		return fmt.Errorf("not a duration above 0 (\"5s\"): treated as unset (Envoy's 15s)")
	}
	s.conn.proxyProtocolTimeout = ir.Duration(d)
	return nil
}

func computeFullForwardedFor(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.conn.fullForwardedFor, value)
}

func forwardedForHeader(_ *Table, s *Settings, _, value string) error {
	v := strings.TrimSpace(value)
	if v == "" || strings.Trim(v, "!#$%&'*+.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-") != "" {
		return fmt.Errorf("not a header name: treated as unset (X-Forwarded-For)")
	}
	s.conn.clientHeader = v
	return nil
}

// forwardedHostHeader reads forwarded-host-header: the header
// X-Original-Forwarded-Host copies (nginx.tmpl's buildForwardedHost).
func forwardedHostHeader(_ *Table, s *Settings, _, value string) error {
	v := strings.TrimSpace(value)
	if v == "" || strings.Trim(v, "!#$%&'*+.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-") != "" {
		return fmt.Errorf("not a header name: treated as unset (X-Forwarded-Host)")
	}
	s.conn.forwardedHost = ""
	if lower := strings.ToLower(v); lower != "x-forwarded-host" {
		s.conn.forwardedHost = lower
	}
	return nil
}

// proxyRealIPCIDR reads nginx's set_real_ip_from list: comma-separated
// addresses or CIDRs.
func proxyRealIPCIDR(_ *Table, s *Settings, _, value string) error {
	var out []string
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return fmt.Errorf("%q is not an address or a CIDR: treated as unset (0.0.0.0/0)", item)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p = p.Masked(); !slices.Contains(out, p.String()) {
			out = append(out, p.String())
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("no CIDR: treated as unset (0.0.0.0/0)")
	}
	s.conn.trustedCIDRs, s.conn.trustedCIDRsSet = out, true
	return nil
}

// logKeys are the access log's keys read, until finishAccessLog makes the
// IR's access log of them.
type logKeys struct {
	format                 logFormat
	formatSet, off         bool
	escapeJSON, escapeNone bool
	path                   string
	httpPath               string
	skip, skipRegex        []string
	unknownHosts           bool
}

// logFormatUpstream reads log-format-upstream. A variable without an Envoy
// form refuses the whole value: a line with a field written as text, or
// left out, would misalign every parser of it. The key is then treated as
// unset, as any value that does not parse: under serve --nginx-defaults,
// ingress-nginx's default format is logged; otherwise there is no access
// log.
func logFormatUpstream(_ *Table, s *Settings, name, value string) error {
	format, missing := parseLogFormat(value)
	if len(missing) == 0 {
		s.conn.log.format, s.conn.log.formatSet = format, true
		return nil
	}
	instead := "no access log"
	if base, ok := s.base[name]; ok && base != value {
		if format, missing := parseLogFormat(base); len(missing) == 0 {
			s.conn.log.format, s.conn.log.formatSet = format, true
			instead = "ingress-nginx's default format is logged instead"
		}
	}
	return fmt.Errorf("no Envoy form for %s (docs/configmap.md lists the variables): refused, treated as unset (%s)", strings.Join(missing, ", "), instead)
}

func disableAccessLog(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.conn.log.off = s.conn.log.off || on
	return nil
}

func logEscapeJSON(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.conn.log.escapeJSON = on
	return nil
}

func logEscapeNone(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.conn.log.escapeNone = on
	return nil
}

// accessLogPath reads access-log-path and http-access-log-path (which
// wins, as nginx.tmpl's "or"): Envoy's standard output or error; ingress-nginx's
// default file is its image's link to its standard output.
func accessLogPath(_ *Table, s *Settings, name, value string) error {
	path := strings.TrimSpace(value)
	switch {
	case path == "/var/log/nginx/access.log":
		path = "/dev/stdout"
	case path == "":
		return nil
	case !slices.Contains(ir.AccessLogPaths(), path):
		return fmt.Errorf("Envoy writes its access log to /dev/stdout or /dev/stderr only (the control plane cannot know which files Envoy's node lets it open, and one it cannot open would make Envoy refuse every listener): treated as unset (/dev/stdout)")
	}
	if name == "http-access-log-path" {
		s.conn.log.httpPath = path
	} else {
		s.conn.log.path = path
	}
	return nil
}

// skipAccessLogURLs reads skip-access-log-urls: comma-separated keys of
// nginx's map over $request_uri, each the whole URI, or, after ~ (~* in
// any case), a regular expression found in it.
func skipAccessLogURLs(_ *Table, s *Settings, _, value string) error {
	var bad []string
	s.conn.log.skip, s.conn.log.skipRegex = nil, nil
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case strings.HasPrefix(item, "~"):
			re := strings.TrimPrefix(item, "~")
			if r, ok := strings.CutPrefix(re, "*"); ok {
				re = "(?i)" + r
			}
			if _, err := regexp.Compile(re); err != nil {
				bad = append(bad, item)
				continue
			}
			s.conn.log.skipRegex = append(s.conn.log.skipRegex, re)
		default:
			s.conn.log.skip = append(s.conn.log.skip, item)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: not a regular expression RE2 takes: left out (the other URLs are skipped)", strings.Join(bad, ", "))
	}
	return nil
}

func accessLogForDefaultBackend(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.conn.log.unknownHosts = on
	return nil
}

// LogNames are the route variables an access log format reads (route
// metadata the renderer writes from the IR's RouteLog).
type LogNames struct {
	Namespace, Ingress, Service, ServicePort, Upstream, Canary bool
}

// Any says whether the format reads any.
func (n LogNames) Any() bool { return n != LogNames{} }

func (f logFormat) names() LogNames {
	return LogNames{
		Namespace: f.uses("namespace"), Ingress: f.uses("ingress_name"), Service: f.uses("service_name"),
		ServicePort: f.uses("service_port"), Upstream: f.uses("proxy_upstream_name"), Canary: f.uses("proxy_alternative_upstream_name"),
	}
}

// finishAccessLog makes the listeners' access log of the keys read; nil:
// none.
func (s *Settings) finishAccessLog() *ir.AccessLog {
	c := &s.conn.log
	if !c.formatSet || c.off {
		return nil
	}
	s.LogNames = c.format.names()
	a := &ir.AccessLog{Path: cmp.Or(c.httpPath, c.path), Skip: c.skip, SkipRegex: c.skipRegex, UnknownHosts: c.unknownHosts}
	if a.Path == "/dev/stdout" {
		a.Path = ""
	}
	// nginx's escape=none wins over escape=json (nginx.tmpl).
	if c.escapeJSON && !c.escapeNone {
		js, err := c.format.json()
		if err == nil {
			a.JSON = js
			return a
		}
		s.Issues = append(s.Issues, Issue{Key: "log-format-escape-json", Reason: "InvalidConfigMapValue",
			Message: fmt.Sprintf("log-format-escape-json=\"true\": log-format-upstream is %v: written as text, its values unescaped", err)})
	}
	a.Format = c.format.text()
	return a
}

// finishConnections makes the listeners' and clusters' settings of the
// keys read, once every key is. forwarded says that the ConfigMap is in
// use at all: then the backend is told of the client's address as by
// ingress-nginx (X-Real-IP, X-Forwarded-For).
func (s *Settings) finishConnections() {
	c := &s.conn
	// use-forwarded-headers has set the one trusted hop by now.
	forwardedHeaders := s.TrustedHops > 0
	// From what a listener gets without a ConfigMap; a client's
	// X-Forwarded-Host, -Port and -Proto are trusted with
	// use-forwarded-headers only (lua_ingress.lua's rewrite), not with
	// enable-real-ip, which trusts the client's address alone.
	d := DefaultDownstream(ir.HTTP, forwardedHeaders)
	d.HeadersTimeout, d.MaxConcurrentStreams = c.headersTimeout, c.streams
	if c.noKeepAlive {
		d.MaxRequests = 1
	} else {
		d.IdleTimeout, d.MaxRequests = c.idle, c.requests
	}
	// nginx's realip module is on with use-forwarded-headers,
	// enable-real-ip or use-proxy-protocol; the header and the CIDRs
	// matter only then, and the header is the PROXY protocol's with
	// use-proxy-protocol unless use-forwarded-headers (nginx.tmpl's
	// real_ip_header).
	s.RealIP = c.realIP || forwardedHeaders || c.proxyProtocol
	if forwardedHeaders || c.realIP && !c.proxyProtocol {
		switch {
		case c.clientHeader != "" && !strings.EqualFold(c.clientHeader, "X-Forwarded-For"):
			// Envoy's custom header detection trusts every peer: only
			// as ingress-nginx's default 0.0.0.0/0 does.
			if !c.trustedCIDRsSet || trustsEveryone(c.trustedCIDRs) {
				d.ClientHeader = c.clientHeader
			} else {
				s.Issues = append(s.Issues, Issue{Key: "forwarded-for-header", Reason: "InvalidConfigMapValue",
					Message: fmt.Sprintf("forwarded-for-header=%q: Envoy cannot check that the peer sending it is in proxy-real-ip-cidr: the header is not trusted (the client is the connection's peer)", c.clientHeader)})
			}
		case c.trustedCIDRsSet:
			d.TrustedCIDRs = strings.Join(c.trustedCIDRs, ",")
		default:
			// As use-forwarded-headers: one proxy trusted.
			s.TrustedHops = 1
		}
	}
	if s.TrustedHops > 0 && (d.ClientHeader != "" || d.TrustedCIDRs != "") {
		s.TrustedHops = 0
	}
	// ingress-nginx computes the full header with use-forwarded-headers
	// only.
	if c.fullForwardedFor && forwardedHeaders {
		d.Forwarded = ir.ForwardedFull
	}
	// set_real_ip_from decides whose PROXY header nginx believes: from
	// another peer, Envoy, which cannot ignore it, takes no connection.
	d.ProxyProtocol = c.proxyProtocol
	if c.proxyProtocol {
		d.ProxyProtocolTimeout = c.proxyProtocolTimeout
	}
	d.KeepBackendServer = c.backendServer
	d.OriginalURI = c.originalURI
	d.ForwardedHostFrom = c.forwardedHost
	hidden := nginxHiddenHeaders()
	for _, h := range c.hide {
		if !slices.Contains(hidden, h) {
			hidden = append(hidden, h)
		}
	}
	d.HideHeaders = strings.Join(hidden, ",")
	// nginx ignores a header with an underscore in its name unless
	// underscores_in_headers is on or ignore_invalid_headers off
	// (nginx.tmpl writes both from these keys); unset, Envoy passes it.
	d.DropUnderscoreHeaders = c.underscores != nil && !*c.underscores && (c.ignoreInvalid == nil || *c.ignoreInvalid)
	if c.proxyProtocol && c.trustedCIDRsSet && !trustsEveryone(c.trustedCIDRs) {
		d.ProxyProtocolFrom = strings.Join(c.trustedCIDRs, ",")
	}
	d.AccessLog = s.finishAccessLog()
	http := d
	tls := d
	tls.ForwardedPort = DefaultDownstream(ir.HTTPS, false).ForwardedPort
	tls.TLSMin, tls.TLSMax, tls.TLSCiphers, tls.NoHTTP2 = c.tlsMin, c.tlsMax, c.ciphers, c.noHTTP2
	tls.ECDHCurves = c.curves
	// nginx.tmpl writes ssl_session_tickets from its key, and
	// ssl_session_cache with ssl_session_timeout only while the cache is
	// on (off: nginx's "none", no session kept).
	tls.NoSessionTickets = c.sessionTickets != nil && !*c.sessionTickets
	if !tls.NoSessionTickets {
		tls.SessionTicketKey = c.ticketKey
	}
	tls.NoSessionCache = c.sessionCache != nil && !*c.sessionCache
	if !tls.NoSessionCache {
		tls.SessionTimeout = c.sessionTimeout
	}
	// serve --trusted-forwarded-hops says proxies in front set these
	// headers: trusted, as with use-forwarded-headers.
	httpHops, tlsHops := http, tls
	httpHops.ClientHeader, httpHops.TrustedCIDRs, httpHops.ProxyHeaders = "", "", ir.ProxyHeadersTrusted
	tlsHops.ClientHeader, tlsHops.TrustedCIDRs, tlsHops.ProxyHeaders = "", "", ir.ProxyHeadersTrusted
	s.http, s.https, s.httpHops, s.httpsHops = &http, &tls, &httpHops, &tlsHops
	u := c.upstream
	if c.upstreamNoKeepalive {
		u.MaxRequests = 1
	}
	if u != (ir.Upstream{}) {
		s.Upstream = &u
	}
}

// The ports the backend's X-Forwarded-Port names: those clients reach
// Envoy's listeners on (the DaemonSet's host ports, deploy/envoy.yaml), as
// ingress-nginx's listen on them; ingress-nginx also names 443 for its
// HTTPS listener whatever its port (lua_ingress.lua).
const (
	ForwardedHTTPPort  = 80
	ForwardedHTTPSPort = 443
)

// DefaultDownstream is what a listener of protocol p gets without a
// ConfigMap: ingress-nginx's defaults of what the backend is told (the
// client's address in X-Forwarded-For and X-Real-IP, the X-Forwarded-*
// headers set from the request), the client's own X-Forwarded-* trusted
// when serve --trusted-forwarded-hops trusts proxies in front (flagHops).
func DefaultDownstream(p ir.Protocol, flagHops bool) ir.Downstream {
	d := ir.Downstream{Forwarded: ir.ForwardedClient, ProxyHeaders: ir.ProxyHeadersSet, ForwardedPort: ForwardedHTTPPort,
		HideHeaders: strings.Join(nginxHiddenHeaders(), ",")}
	if p == ir.HTTPS {
		d.ForwardedPort = ForwardedHTTPSPort
	}
	if flagHops {
		d.ProxyHeaders = ir.ProxyHeadersTrusted
	}
	return d
}

// nginxHiddenHeaders are the backend's response headers nginx's proxy and
// grpc modules never pass to the client, whatever proxy_hide_header and
// hide-headers say (ngx_http_proxy_hide_headers, ngx_http_grpc_hide_headers):
// X-Accel-* are instructions to nginx itself, and X-Accel-Redirect names a
// path the backend meant for nginx alone. Date and Server, which they hide
// too, Envoy writes itself (Server as server-tokens says).
func nginxHiddenHeaders() []string {
	return []string{"x-pad", "x-accel-expires", "x-accel-redirect", "x-accel-limit-rate", "x-accel-buffering", "x-accel-charset"}
}

// trustsEveryone says whether CIDRs hold every IPv4 address.
func trustsEveryone(cidrs []string) bool {
	return slices.Contains(cidrs, "0.0.0.0/0")
}

// Downstream is what a listener of protocol p gets; flagHops says that its
// trusted hops come from serve --trusted-forwarded-hops, which then wins
// over forwarded-for-header and proxy-real-ip-cidr. The same value for the
// same arguments, for the Settings' life.
func (c *Connections) Downstream(p ir.Protocol, flagHops bool) *ir.Downstream {
	switch {
	case p == ir.HTTPS && flagHops:
		return c.httpsHops
	case p == ir.HTTPS:
		return c.https
	case flagHops:
		return c.httpHops
	}
	return c.http
}
