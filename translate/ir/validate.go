package ir

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// MaxRegexLength bounds an RE2 expression's length; longer ones are refused
// (RE2's cost grows with the program, and Envoy caps the program size too).
const MaxRegexLength = 1024

// Validate checks the IR's contract (see the package doc) and the values of
// every field: what it accepts, the renderer can render and Envoy accepts.
// It reports every violation it finds, not only the first.
func (r *IR) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	sortedUnique(bad, "listener", r.Listeners, func(l *Listener) string { return l.Name })
	if !slices.IsSortedFunc(r.Listeners, func(a, b *Listener) int { return cmp.Compare(a.Port, b.Port) }) {
		bad("listeners are not sorted by port")
	}
	ports := map[uint32]bool{}
	for _, l := range r.Listeners {
		if l.Port == 0 || l.Port > 65535 {
			bad("listener %s: port %d out of range", l.Name, l.Port)
		}
		if ports[l.Port] {
			bad("listener %s: port %d used twice", l.Name, l.Port)
		}
		ports[l.Port] = true
		if l.Protocol != HTTP && l.Protocol != HTTPS {
			bad("listener %s: unknown protocol %q", l.Name, l.Protocol)
		}
		if _, err := netip.ParseAddr(l.Address); err != nil {
			bad("listener %s: address %q: %v", l.Name, l.Address, err)
		}
		switch l.EscapedSlashes {
		case EscapedSlashesRedirect, EscapedSlashesForward, EscapedSlashesReject, EscapedSlashesKeep:
		default:
			bad("listener %s: unknown escaped-slashes action %q", l.Name, l.EscapedSlashes)
		}
		if l.HSTS != "" && (l.Protocol != HTTPS || !validHSTS(l.HSTS)) {
			bad("listener %s: HSTS %q (on an HTTPS listener, max-age=N[; includeSubDomains][; preload])", l.Name, l.HSTS)
		}
		if l.Block != nil {
			if err := l.Block.validate(); err != nil {
				bad("listener %s: %v", l.Name, err)
			}
		}
		if l.Downstream != nil {
			if err := l.Downstream.validate(l); err != nil {
				bad("listener %s: %v", l.Name, err)
			}
		}
		if c := l.LocalReplyCodes; c != nil {
			for _, code := range []uint32{c.UpstreamFailure, c.ConnectTimeout} {
				if code != 0 && (code < 200 || code > 599) {
					bad("listener %s: local reply status %d (200 to 599)", l.Name, code)
				}
			}
			if *c == (LocalReplyCodes{}) {
				bad("listener %s: local reply codes that change nothing (nil says that)", l.Name)
			}
		}
	}

	certs := names(r.Certificates, func(c *Certificate) string { return c.Name })
	clusters := names(r.Clusters, func(c *Cluster) string { return c.Name })
	backends := names(r.Backends, func(b *Backend) string { return b.Name })

	sortedUnique(bad, "virtual host", r.VirtualHosts, func(v *VirtualHost) string { return v.Host })
	hosts := names(r.VirtualHosts, func(v *VirtualHost) string { return v.Host })
	aliased := map[string]string{}
	for _, vh := range r.VirtualHosts {
		if err := validHost(vh.Host); err != nil {
			bad("virtual host %q: %v", vh.Host, err)
		}
		for _, alias := range vh.Aliases {
			switch err := validHost(alias); {
			case err != nil || strings.HasPrefix(alias, "*") || strings.HasPrefix(vh.Host, "*"):
				bad("virtual host %q: alias %q: only exact names alias exact hosts", vh.Host, alias)
			case hosts[alias]:
				bad("virtual host %q: alias %q is a virtual host of its own", vh.Host, alias)
			case aliased[alias] != "":
				bad("virtual host %q: alias %q is already an alias of %q", vh.Host, alias, aliased[alias])
			}
			aliased[alias] = vh.Host
		}
		if vh.Certificate != "" && !certs[vh.Certificate] {
			bad("virtual host %q: certificate %q is not listed", vh.Host, vh.Certificate)
		}
		if vh.ClientCert != nil {
			if err := vh.ClientCert.validate(); err != nil {
				bad("virtual host %q: client certificates: %v", vh.Host, err)
			}
		}
		if err := validCiphers(vh.TLSCiphers); err != nil {
			bad("virtual host %q: %v", vh.Host, err)
		}
		if vh.Passthrough != nil {
			if err := vh.Passthrough.validate(vh, clusters); err != nil {
				bad("virtual host %q: passthrough: %v", vh.Host, err)
			}
		}
		for i, rt := range vh.Routes {
			for _, err := range rt.validate(clusters) {
				bad("virtual host %q route %d: %v", vh.Host, i, err)
			}
		}
	}

	sortedUnique(bad, "cluster", r.Clusters, func(c *Cluster) string { return c.Name })
	// A backend's clusters are adjacent, and come in backend order: the
	// renderer and the endpoint fast path pair the two lists in one walk.
	backendAt := make(map[string]int, len(r.Backends))
	for i, b := range r.Backends {
		backendAt[b.Name] = i
	}
	for i := 1; i < len(r.Clusters); i++ {
		if a, b := backendAt[r.Clusters[i-1].Backend], backendAt[r.Clusters[i].Backend]; a > b {
			bad("cluster %s: its backend %q comes before the previous cluster's", r.Clusters[i].Name, r.Clusters[i].Backend)
		}
	}
	clusterByName := make(map[string]*Cluster, len(r.Clusters))
	for _, c := range r.Clusters {
		clusterByName[c.Name] = c
	}
	for _, c := range r.Clusters {
		if !backends[c.Backend] {
			bad("cluster %s: backend %q is not listed", c.Name, c.Backend)
		}
		if len(c.Aggregate) > 0 {
			if want := AggregateClusterName(c.Backend, c.Aggregate); c.Name != want {
				bad("cluster %s: name should be %s for its backend and clusters", c.Name, want)
			}
			if err := c.validateAggregate(clusterByName); err != nil {
				bad("cluster %s: %v", c.Name, err)
			}
			continue
		}
		if want := ClusterName(c.Backend, c.Policy); c.Name != want {
			bad("cluster %s: name should be %s for its backend and policy", c.Name, want)
		}
		if c.Policy != nil {
			if err := c.Policy.validate(); err != nil {
				bad("cluster %s: %v", c.Name, err)
			}
		}
	}

	sortedUnique(bad, "backend", r.Backends, func(b *Backend) string { return b.Name })
	for _, b := range r.Backends {
		if b.Port < 1 || b.Port > 65535 {
			bad("backend %s: port %d out of range", b.Name, b.Port)
		}
		if b.ExternalName != "" && len(b.Endpoints) > 0 {
			bad("backend %s: an ExternalName backend has no endpoints", b.Name)
		}
		for _, ep := range b.Endpoints {
			if _, err := netip.ParseAddr(ep.Address); err != nil {
				bad("backend %s: endpoint %q: %v", b.Name, ep.Address, err)
			}
			if ep.Port < 1 || ep.Port > 65535 {
				bad("backend %s: endpoint port %d out of range", b.Name, ep.Port)
			}
		}
	}

	sortedUnique(bad, "certificate", r.Certificates, func(c *Certificate) string { return c.Name })
	for _, c := range r.Certificates {
		if len(c.Chain) == 0 || len(c.Key) == 0 {
			bad("certificate %s: chain and key are both required", c.Name)
		}
	}
	return errors.Join(errs...)
}

func (rt *Route) validate(clusters map[string]bool) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	m := rt.Match
	switch m.PathType {
	case PathExact, PathPrefix:
		if !strings.HasPrefix(m.Path, "/") || hasControl(m.Path) {
			bad("path %q must start with / and hold no control characters", m.Path)
		}
		if m.PathType == PathPrefix && m.Path != "/" && strings.HasSuffix(m.Path, "/") {
			bad("prefix %q has a trailing slash", m.Path)
		}
	case PathRegex:
		if err := validRegex(m.Path); err != nil {
			bad("path regex: %v", err)
		}
	default:
		bad("unknown path type %q", m.PathType)
	}
	for _, h := range m.Headers {
		if err := validHeaderName(h.Name); err != nil {
			bad("header match: %v", err)
		}
		if err := h.Value.validate(); err != nil {
			bad("header match %s: %v", h.Name, err)
		}
	}
	for _, q := range m.Query {
		if q.Name == "" || hasControl(q.Name) {
			bad("query match: bad parameter name %q", q.Name)
		}
		if err := q.Value.validate(); err != nil {
			bad("query match %s: %v", q.Name, err)
		}
	}

	a := rt.Action
	set := 0
	for _, ok := range []bool{a.Forward != nil, a.Redirect != nil, a.Direct != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		bad("an action needs exactly one of forward, redirect and direct, has %d", set)
	}
	if f := a.Forward; f != nil {
		if len(f.Clusters) == 0 {
			bad("forward to no cluster")
		}
		for _, wc := range f.Clusters {
			if !clusters[wc.Cluster] {
				bad("cluster %q is not listed", wc.Cluster)
			}
			if wc.TLSCluster != "" && !clusters[wc.TLSCluster] {
				bad("cluster %q (over TLS) is not listed", wc.TLSCluster)
			}
			if len(f.Clusters) > 1 && wc.Weight == 0 {
				bad("cluster %q: a split needs weights above zero", wc.Cluster)
			}
		}
	}
	if r := a.Redirect; r != nil {
		if !validRedirectCode(r.Code) {
			bad("redirect code %d is not 301, 302, 303, 307 or 308", r.Code)
		}
		if r.Scheme != "" && r.Scheme != "http" && r.Scheme != "https" {
			bad("redirect scheme %q", r.Scheme)
		}
		if r.Path != "" && (!strings.HasPrefix(r.Path, "/") || hasControl(r.Path)) {
			bad("redirect path %q", r.Path)
		}
		if hasControl(r.Host) || strings.ContainsAny(r.Host, "/?#@ ") {
			bad("redirect host %q", r.Host)
		}
		if r.Port > 65535 || r.ListenerPort && r.Port != 0 {
			bad("redirect port %d (with listener port %t)", r.Port, r.ListenerPort)
		}
		if r.StripTrailingSlash && r.Path != "" {
			bad("redirect: a path and stripping the trailing slash both set")
		}
		if l := r.Location; l != "" {
			if *r != (Redirect{Location: l, Code: r.Code}) {
				bad("redirect: a location and other parts both set")
			}
			if hasControl(l) || !(strings.HasPrefix(l, "/") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) {
				bad("redirect location %q is not an http or https URL nor an absolute path", l)
			}
		}
	}
	if d := a.Direct; d != nil && (d.Status < 200 || d.Status > 599) {
		bad("direct response status %d out of range", d.Status)
	}
	if p := rt.Policy; p != nil {
		for _, err := range p.validate(clusters) {
			bad("policy: %v", err)
		}
	}
	return errs
}

func (p *RoutePolicy) validate(clusters map[string]bool) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r := p.HTTPSRedirect; r != nil && (!validRedirectCode(r.Code) || r.Port > 65535) {
		bad("https redirect code %d, port %d", r.Code, r.Port)
	}
	if t := p.Timeouts; t != nil && (t.Request < 0 || t.Idle < 0) {
		bad("negative timeout")
	}
	if r := p.Retries; r != nil {
		if r.Attempts == 0 || len(r.On) == 0 {
			bad("retries need attempts and conditions")
		}
		for _, on := range r.On {
			if on == "" || strings.ContainsAny(on, ", \r\n\x00") {
				bad("retry condition %q", on)
			}
		}
		if slices.Contains(r.On, "retriable-status-codes") != (len(r.StatusCodes) > 0) {
			bad("retry status codes %v need, and only go with, the condition retriable-status-codes", r.StatusCodes)
		}
		for _, code := range r.StatusCodes {
			if code < 100 || code > 599 {
				bad("retry status code %d", code)
			}
		}
		for _, m := range r.NotMethods {
			if strings.HasPrefix(m, ":") || validHeaderName(m) != nil { // a method is a token too
				bad("retry method %q", m)
			}
		}
	}
	for _, h := range p.Hash {
		switch h.Kind {
		case HashPath, HashHost, HashSourceIP:
			if h.Name != "" {
				bad("hash %s takes no name", h.Kind)
			}
		case HashHeader:
			if err := validHeaderName(h.Name); err != nil || strings.HasPrefix(h.Name, ":") || strings.ToLower(h.Name) != h.Name {
				bad("hash header %q", h.Name)
			}
		case HashCookie, HashQuery:
			if h.Name == "" || hasControl(h.Name) || strings.ContainsAny(h.Name, ";=, ") {
				bad("hash %s %q", h.Kind, h.Name)
			}
		default:
			bad("unknown hash kind %q", h.Kind)
		}
	}
	if e := p.ErrorPages; e != nil {
		errs = append(errs, e.validate()...)
	}
	if b := p.RequestBody; b != nil && b.MaxBytes == 0 {
		bad("request body bound of 0 bytes")
	}
	if a := p.Affinity; a != nil {
		if a.Cookie == "" || strings.HasPrefix(a.Cookie, ":") || validHeaderName(a.Cookie) != nil {
			bad("affinity cookie name %q is not a token", a.Cookie)
		}
		for _, attr := range []string{a.Path, a.Domain} {
			if hasControl(attr) || strings.ContainsAny(attr, "; ") {
				bad("affinity cookie attribute %q", attr)
			}
		}
		if a.Path != "" && !strings.HasPrefix(a.Path, "/") {
			bad("affinity cookie path %q", a.Path)
		}
		if a.SameSite != "" && a.SameSite != "Strict" && a.SameSite != "Lax" && a.SameSite != "None" {
			bad("affinity cookie SameSite %q", a.SameSite)
		}
		if a.MaxAge < 0 {
			bad("affinity cookie: negative max age")
		}
	}
	if r := p.Rewrite; r != nil {
		if r.Prefix != "" && r.Regex != nil {
			bad("rewrite: prefix and regex both set")
		}
		if r.Prefix != "" && (!strings.HasPrefix(r.Prefix, "/") || hasControl(r.Prefix)) {
			bad("rewrite prefix %q", r.Prefix)
		}
		if r.Regex != nil {
			if err := validRegex(r.Regex.Pattern); err != nil {
				bad("rewrite regex: %v", err)
			}
			if hasControl(r.Regex.Substitution) {
				bad("rewrite substitution %q", r.Regex.Substitution)
			}
		}
		if hasControl(r.Host) || strings.ContainsAny(r.Host, "/ ") {
			bad("rewrite host %q", r.Host)
		}
	}
	for _, hc := range []*HeaderChanges{p.RequestHeaders, p.ResponseHeaders} {
		if hc == nil {
			continue
		}
		for _, name := range hc.Remove {
			if err := validHeaderName(name); err != nil {
				bad("header change: %v", err)
			}
		}
		for _, h := range append(slices.Clone(hc.Set), hc.Add...) {
			if err := validHeaderName(h.Name); err != nil {
				bad("header change: %v", err)
			}
			if hasControl(h.Value) {
				bad("header %s: value holds control characters", h.Name)
			}
		}
	}
	if p.ResponseRewrite != nil {
		errs = append(errs, p.ResponseRewrite.validate()...)
	}
	for _, m := range p.Mirrors {
		if !clusters[m.Cluster] {
			bad("mirror cluster %q is not listed", m.Cluster)
		}
		if m.Percent > 100 {
			bad("mirror percent %d", m.Percent)
		}
		errs = append(errs, m.validate()...)
	}
	if c := p.CORS; c != nil {
		for _, err := range c.validate() {
			bad("cors: %v", err)
		}
	}
	if p.Auth != nil {
		errs = append(errs, p.Auth.validate()...)
	}
	if r := p.IPRules; r != nil {
		if len(r.Allow) == 0 && len(r.Deny) == 0 {
			bad("ip rules: empty")
		}
		for _, cidr := range append(slices.Clone(r.Allow), r.Deny...) {
			if pfx, err := netip.ParsePrefix(cidr); err != nil || pfx != pfx.Masked() {
				bad("ip rules: %q is not a canonical CIDR", cidr)
			}
		}
	}
	if r := p.RateLimit; r != nil {
		if err := r.validate(); err != nil {
			bad("rate limit: %v", err)
		}
	}
	if c := p.Connections; c != nil {
		if err := c.validate(); err != nil {
			bad("connection limit: %v", err)
		}
	}
	if r := p.ResponseRate; r != nil {
		if err := r.validate(); err != nil {
			bad("response rate: %v", err)
		}
	}
	return errs
}

func (p *ClusterPolicy) validate() error {
	if p.IsDefault() {
		return errors.New("a default policy is no policy: leave it nil")
	}
	switch p.Protocol {
	case UpstreamHTTP1, UpstreamHTTP2:
	default:
		return fmt.Errorf("unknown protocol %q", p.Protocol)
	}
	switch p.LoadBalancer {
	case RoundRobin, LeastRequest, Random, RingHash:
	default:
		return fmt.Errorf("unknown load balancer %q", p.LoadBalancer)
	}
	if p.ConnectTimeout < 0 {
		return errors.New("negative connect timeout")
	}
	if p.ServiceAddress != "" {
		if _, err := netip.ParseAddr(p.ServiceAddress); err != nil {
			return fmt.Errorf("service address: %w", err)
		}
	}
	if t := p.TLS; t != nil {
		if err := t.validate(); err != nil {
			return fmt.Errorf("tls: %w", err)
		}
	}
	return nil
}

func (t *UpstreamTLS) validate() error {
	if t.SNI != "" && validHost(t.SNI) != nil {
		return fmt.Errorf("bad SNI %q", t.SNI)
	}
	if len(t.CA) == 0 && (t.VerifyName != "" || t.VerifyDepth != 0) {
		return errors.New("a name or depth to verify without a CA")
	}
	if t.VerifyName != "" && validHost(t.VerifyName) != nil {
		return fmt.Errorf("bad name to verify %q", t.VerifyName)
	}
	if (len(t.ClientChain) == 0) != (len(t.ClientKey) == 0) {
		return errors.New("a client certificate needs both chain and key")
	}
	version := map[string]int{"": 0, "TLSv1.2": 2, "TLSv1.3": 3}
	lo, okLo := version[t.MinVersion]
	hi, okHi := version[t.MaxVersion]
	if !okLo || !okHi || lo != 0 && hi != 0 && lo > hi {
		return fmt.Errorf("versions %q to %q", t.MinVersion, t.MaxVersion)
	}
	for _, c := range t.Ciphers {
		if c == "" || strings.ContainsAny(c, ":!+[]| ") || hasControl(c) {
			return fmt.Errorf("cipher %q", c)
		}
	}
	return nil
}

func (s StringMatch) validate() error {
	if s.Exact != "" && s.Regex != "" {
		return errors.New("exact and regex both set")
	}
	if hasControl(s.Exact) {
		return errors.New("value holds control characters")
	}
	if s.Regex != "" {
		return validRegex(s.Regex)
	}
	return nil
}

func validRedirectCode(code uint32) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// validRegex accepts what RE2 (Go's regexp, the same syntax Envoy's
// safe_regex takes) compiles, within MaxRegexLength.
func validRegex(expr string) error {
	if expr == "" {
		return errors.New("empty expression")
	}
	if len(expr) > MaxRegexLength {
		return fmt.Errorf("expression of %d bytes, over %d", len(expr), MaxRegexLength)
	}
	if _, err := regexp.Compile(expr); err != nil {
		return err
	}
	return nil
}

// validHost accepts a lower-case DNS name, a *.wildcard of one, or "*".
func validHost(host string) error {
	if host == WildcardHost {
		return nil
	}
	name := strings.TrimPrefix(host, "*.")
	if name == "" || len(name) > 253 || strings.ToLower(name) != name {
		return errors.New("not a lower-case DNS name")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("bad label %q", label)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("bad label %q", label)
			}
		}
	}
	return nil
}

// validHeaderName accepts an HTTP token (RFC 9110), or a pseudo-header.
func validHeaderName(name string) error {
	n := strings.TrimPrefix(name, ":")
	if n == "" {
		return fmt.Errorf("empty header name")
	}
	for _, c := range n {
		if c > 0x7e || c <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return fmt.Errorf("header name %q is not a token", name)
		}
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func names[T any](list []T, name func(T) string) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, v := range list {
		out[name(v)] = true
	}
	return out
}

func sortedUnique[T any](bad func(string, ...any), what string, list []T, name func(T) string) {
	for i := 1; i < len(list); i++ {
		switch a, b := name(list[i-1]), name(list[i]); {
		case a == b:
			bad("%s %q is listed twice", what, b)
		case a > b:
			bad("%ss are not sorted: %q before %q", what, a, b)
		}
	}
}
