package ir

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// MaxRegexLength bounds an RE2 expression's length; longer ones are refused
// (RE2's cost grows with the program, and Envoy caps the program size too).
const MaxRegexLength = 1024

// Validate checks the IR's contract (see the package doc) and the values of
// every field: what it accepts, the renderer can render and Envoy accepts.
// It reports every violation it finds, not only the first: the errors it
// joins (errors.Join) are each a *ValidationError, which names the object
// and field at fault and matches one of the Err sentinels with errors.Is.
func (r *IR) Validate() error {
	var errs []error

	errs = sortedUnique(errs, KindListener, r.Listeners, func(l *Listener) string { return l.Name })
	for i := 1; i < len(r.Listeners); i++ {
		if r.Listeners[i-1].Port > r.Listeners[i].Port {
			errs = append(errs, &ValidationError{Kind: KindListener, Name: r.Listeners[i].Name, Field: "Port", Err: ErrUnsorted,
				msg: fmt.Sprintf("listeners are not sorted by port: %d after %d", r.Listeners[i].Port, r.Listeners[i-1].Port)})
		}
	}
	ports := map[uint32]bool{}
	for _, l := range r.Listeners {
		errs = l.validate(ports).of(errs, KindListener, l.Name, 0)
	}
	listenerNames := names(r.Listeners, func(l *Listener) string { return l.Name })
	for i, o := range r.OwnListeners {
		if o.Listener == nil {
			errs = append(errs, &ValidationError{Kind: KindListener, Name: fmt.Sprintf("OwnListeners[%d]", i), Err: ErrBadValue, msg: "no listener"})
			continue
		}
		l := o.Listener
		if listenerNames[l.Name] {
			errs = append(errs, &ValidationError{Kind: KindListener, Name: l.Name, Err: ErrDuplicate, msg: "listed twice"})
		}
		listenerNames[l.Name] = true
		if i > 0 && r.OwnListeners[i-1].Listener != nil && r.OwnListeners[i-1].Listener.Port > l.Port {
			errs = append(errs, &ValidationError{Kind: KindListener, Name: l.Name, Field: "Port", Err: ErrUnsorted,
				msg: fmt.Sprintf("own listeners are not sorted by port: %d after %d", l.Port, r.OwnListeners[i-1].Listener.Port)})
		}
		errs = l.validate(ports).of(errs, KindListener, l.Name, 0)
	}

	certs := names(r.Certificates, func(c *Certificate) string { return c.Name })
	// One map of each list that is looked up by name, of the list's own
	// elements: at 10,000 Ingresses there are 100,000 clusters, and the
	// maps are most of Validate's memory (docs/benchmarks.md, "Issue 33:
	// Validate on the serving path").
	clusters := make(map[string]*Cluster, len(r.Clusters))
	for _, c := range r.Clusters {
		clusters[c.Name] = c
	}
	backendAt := make(map[string]int, len(r.Backends))
	for i, b := range r.Backends {
		backendAt[b.Name] = i
	}

	errs = validateVirtualHosts(errs, r.VirtualHosts, certs, clusters)
	for _, o := range r.OwnListeners {
		errs = validateVirtualHosts(errs, o.VirtualHosts, certs, clusters)
	}

	errs = sortedUnique(errs, KindCluster, r.Clusters, func(c *Cluster) string { return c.Name })
	// A backend's clusters are adjacent, and come in backend order: the
	// renderer and the endpoint fast path pair the two lists in one walk.
	for i := 1; i < len(r.Clusters); i++ {
		if a, b := backendAt[r.Clusters[i-1].Backend], backendAt[r.Clusters[i].Backend]; a > b {
			errs = append(errs, &ValidationError{Kind: KindCluster, Name: r.Clusters[i].Name, Field: "Backend", Err: ErrUnsorted,
				msg: fmt.Sprintf("its backend %q comes before the previous cluster's", r.Clusters[i].Backend)})
		}
	}
	for _, c := range r.Clusters {
		var v violations
		if _, ok := backendAt[c.Backend]; !ok {
			v.add("Backend", ErrUnlistedBackend, "backend %q is not listed", c.Backend)
		}
		if len(c.Aggregate) > 0 {
			if want := AggregateClusterName(c.Backend, c.Aggregate); c.Name != want {
				v.add("Name", ErrClusterName, "name should be %s for its backend and clusters", want)
			}
			v.nest("", "", ErrAggregate, c.validateAggregate(clusters))
		} else {
			if want := ClusterName(c.Backend, c.Policy); c.Name != want {
				v.add("Name", ErrClusterName, "name should be %s for its backend and policy", want)
			}
			if c.Policy != nil {
				v.nest("Policy", "", ErrBadValue, c.Policy.validate())
			}
		}
		errs = v.of(errs, KindCluster, c.Name, 0)
	}

	errs = sortedUnique(errs, KindBackend, r.Backends, func(b *Backend) string { return b.Name })
	for _, b := range r.Backends {
		var v violations
		if b.Port < 1 || b.Port > 65535 {
			v.add("Port", ErrOutOfRange, "port %d out of range", b.Port)
		}
		if b.ExternalName != "" && len(b.Endpoints) > 0 {
			v.add("Endpoints", ErrConflict, "an ExternalName backend has no endpoints")
		}
		for i, ep := range b.Endpoints {
			if _, err := netip.ParseAddr(ep.Address); err != nil {
				v.add(fmt.Sprintf("Endpoints[%d].Address", i), ErrBadAddress, "endpoint %q: %w", ep.Address, err)
			}
			if ep.Port < 1 || ep.Port > 65535 {
				v.add(fmt.Sprintf("Endpoints[%d].Port", i), ErrOutOfRange, "endpoint port %d out of range", ep.Port)
			}
		}
		errs = v.of(errs, KindBackend, b.Name, 0)
	}

	errs = sortedUnique(errs, KindCertificate, r.Certificates, func(c *Certificate) string { return c.Name })
	for _, c := range r.Certificates {
		if len(c.Chain) == 0 || len(c.Key) == 0 {
			errs = append(errs, &ValidationError{Kind: KindCertificate, Name: c.Name, Err: ErrConflict,
				msg: "chain and key are both required"})
		}
	}
	return errors.Join(errs...)
}

// validate checks one listener; ports are those of the listeners checked
// before it, to which it adds its own.
func (l *Listener) validate(ports map[uint32]bool) violations {
	var v violations
	if l.Port == 0 || l.Port > 65535 {
		v.add("Port", ErrOutOfRange, "port %d out of range", l.Port)
	}
	if ports[l.Port] {
		v.add("Port", ErrDuplicate, "port %d used twice", l.Port)
	}
	ports[l.Port] = true
	if l.Protocol != HTTP && l.Protocol != HTTPS {
		v.add("Protocol", ErrUnknownValue, "unknown protocol %q", l.Protocol)
	}
	if _, err := netip.ParseAddr(l.Address); err != nil {
		v.add("Address", ErrBadAddress, "address %q: %w", l.Address, err)
	}
	switch l.EscapedSlashes {
	case EscapedSlashesRedirect, EscapedSlashesForward, EscapedSlashesReject, EscapedSlashesKeep:
	default:
		v.add("EscapedSlashes", ErrUnknownValue, "unknown escaped-slashes action %q", l.EscapedSlashes)
	}
	if l.HSTS != "" && (l.Protocol != HTTPS || !validHSTS(l.HSTS)) {
		v.add("HSTS", ErrBadHeader, "HSTS %q (on an HTTPS listener, max-age=N[; includeSubDomains][; preload])", l.HSTS)
	}
	if h := l.ResponseHeaders; h != nil {
		v.headerChanges("ResponseHeaders", h, true)
		if len(h.Add) > 0 || len(h.AddOnSuccess) > 0 || h.Expires != nil {
			v.add("ResponseHeaders", ErrConflict, "a listener's response headers are set or removed only")
		}
	}
	if l.Brotli != nil {
		v.nest("Brotli", "brotli: ", ErrBadValue, l.Brotli.validateBrotli())
	}
	if l.Block != nil {
		v.nest("Block", "", ErrBadValue, l.Block.validate())
	}
	if l.Downstream != nil {
		v.nest("Downstream", "", ErrBadValue, l.Downstream.validate(l))
	}
	if l.Tracing != nil {
		v.nest("Tracing", "", ErrBadValue, l.Tracing.validate())
	}
	if c := l.LocalReplyCodes; c != nil {
		for _, f := range []struct {
			field string
			code  uint32
		}{{"UpstreamFailure", c.UpstreamFailure}, {"ConnectTimeout", c.ConnectTimeout}} {
			if f.code != 0 && (f.code < 200 || f.code > 599) {
				v.add("LocalReplyCodes."+f.field, ErrOutOfRange, "local reply status %d (200 to 599)", f.code)
			}
		}
		if *c == (LocalReplyCodes{}) {
			v.add("LocalReplyCodes", ErrNoOp, "local reply codes that change nothing (nil says that)")
		}
	}
	return v
}

// validateVirtualHosts checks one listener's (or every shared listener's)
// virtual hosts.
func validateVirtualHosts(errs []error, vhosts []*VirtualHost, certs map[string]bool, clusters map[string]*Cluster) []error {
	errs = sortedUnique(errs, KindVirtualHost, vhosts, func(v *VirtualHost) string { return v.Host })
	hosts := names(vhosts, func(v *VirtualHost) string { return v.Host })
	aliased := map[string]string{}
	for _, vh := range vhosts {
		var v violations
		if err := validHost(vh.Host); err != nil {
			v.add("Host", ErrBadHost, "%w", err)
		}
		if vh.AnyDepth && !strings.HasPrefix(vh.Host, "*.") {
			v.add("AnyDepth", ErrBadHost, "any depth for %q, which is no *. wildcard", vh.Host)
		}
		for i, alias := range vh.Aliases {
			field := func(sub string) string { return joinField(fmt.Sprintf("Aliases[%d]", i), sub) }
			switch err := validHost(alias); {
			case err != nil || strings.HasPrefix(alias, "*") || strings.HasPrefix(vh.Host, "*"):
				v.add(field(""), ErrBadHost, "alias %q: only exact names alias exact hosts", alias)
			case hosts[alias]:
				v.add(field(""), ErrDuplicate, "alias %q is a virtual host of its own", alias)
			case aliased[alias] != "":
				v.add(field(""), ErrDuplicate, "alias %q is already an alias of %q", alias, aliased[alias])
			}
			aliased[alias] = vh.Host
		}
		if vh.Certificate != "" && !certs[vh.Certificate] {
			v.add("Certificate", ErrUnlistedCertificate, "certificate %q is not listed", vh.Certificate)
		}
		if vh.ClientCert != nil {
			v.nest("ClientCert", "client certificates: ", ErrBadValue, vh.ClientCert.validate())
		}
		v.nest("TLSCiphers", "", ErrBadValue, validCiphers(vh.TLSCiphers))
		if vh.Passthrough != nil {
			v.nest("Passthrough", "passthrough: ", ErrBadValue, vh.Passthrough.validate(vh, clusters))
		}
		errs = v.of(errs, KindVirtualHost, vh.Host, 0)
		for i, rt := range vh.Routes {
			errs = rt.validate(clusters).of(errs, KindRoute, vh.Host, i)
		}
	}
	return errs
}

func (rt *Route) validate(clusters map[string]*Cluster) violations {
	var v violations
	if rt.Only != "" && rt.Only != HTTP && rt.Only != HTTPS {
		v.add("Only", ErrBadValue, "only on %q listeners (HTTP or HTTPS)", rt.Only)
	}
	m := rt.Match
	switch m.PathType {
	case PathExact, PathPrefix:
		if !strings.HasPrefix(m.Path, "/") || hasControl(m.Path) {
			v.add("Match.Path", ErrBadPath, "path %q must start with / and hold no control characters", m.Path)
		}
		if m.PathType == PathPrefix && m.Path != "/" && strings.HasSuffix(m.Path, "/") {
			v.add("Match.Path", ErrBadPath, "prefix %q has a trailing slash", m.Path)
		}
	case PathRegex:
		if err := validRegex(m.Path); err != nil {
			v.add("Match.Path", ErrBadRegex, "path regex: %w", err)
		}
	default:
		v.add("Match.PathType", ErrUnknownValue, "unknown path type %q", m.PathType)
	}
	for i, h := range m.Headers {
		field := func(sub string) string { return joinField(fmt.Sprintf("Match.Headers[%d]", i), sub) }
		if err := validHeaderName(h.Name); err != nil {
			v.add(field("Name"), ErrBadHeader, "header match: %w", err)
		}
		if err := h.Value.validate(); err != nil {
			v.nest(field("Value"), "header match "+h.Name+": ", ErrBadValue, err)
		}
	}
	for i, q := range m.Query {
		field := func(sub string) string { return joinField(fmt.Sprintf("Match.Query[%d]", i), sub) }
		if q.Name == "" || hasControl(q.Name) {
			v.add(field("Name"), ErrBadName, "query match: bad parameter name %q", q.Name)
		}
		if err := q.Value.validate(); err != nil {
			v.nest(field("Value"), "query match "+q.Name+": ", ErrBadValue, err)
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
		v.add("Action", ErrBadAction, "an action needs exactly one of forward, redirect and direct, has %d", set)
	}
	if f := a.Forward; f != nil {
		if len(f.Clusters) == 0 {
			v.add("Action.Forward.Clusters", ErrBadAction, "forward to no cluster")
		}
		for i, wc := range f.Clusters {
			field := func(name string) string { return fmt.Sprintf("Action.Forward.Clusters[%d].%s", i, name) }
			if clusters[wc.Cluster] == nil {
				v.add(field("Cluster"), ErrUnlistedCluster, "cluster %q is not listed", wc.Cluster)
			}
			if wc.TLSCluster != "" && clusters[wc.TLSCluster] == nil {
				v.add(field("TLSCluster"), ErrUnlistedCluster, "cluster %q (over TLS) is not listed", wc.TLSCluster)
			}
			if len(f.Clusters) > 1 && wc.Weight == 0 {
				v.add(field("Weight"), ErrBadAction, "cluster %q: a split needs weights above zero", wc.Cluster)
			}
			v.headerChanges(field("RequestHeaders"), wc.RequestHeaders, false)
			v.headerChanges(field("ResponseHeaders"), wc.ResponseHeaders, true)
			if h := wc.ResponseHeaders; h != nil && (len(h.AddOnSuccess) > 0 || h.Expires != nil) {
				v.add(field("ResponseHeaders"), ErrConflict, "a share's response headers are changed on every status: no additions on success, no expiry")
			}
		}
	}
	if r := a.Redirect; r != nil {
		if !validRedirectCode(r.Code) {
			v.add("Action.Redirect.Code", ErrOutOfRange, "redirect code %d is not 301, 302, 303, 307 or 308", r.Code)
		}
		if r.Scheme != "" && r.Scheme != "http" && r.Scheme != "https" {
			v.add("Action.Redirect.Scheme", ErrUnknownValue, "redirect scheme %q", r.Scheme)
		}
		if r.Path != "" && (!strings.HasPrefix(r.Path, "/") || hasControl(r.Path)) {
			v.add("Action.Redirect.Path", ErrBadPath, "redirect path %q", r.Path)
		}
		if hasControl(r.Host) || strings.ContainsAny(r.Host, "/?#@ ") {
			v.add("Action.Redirect.Host", ErrBadHost, "redirect host %q", r.Host)
		}
		if r.Port > 65535 || r.ListenerPort && r.Port != 0 {
			v.add("Action.Redirect.Port", ErrOutOfRange, "redirect port %d (with listener port %t)", r.Port, r.ListenerPort)
		}
		if r.StripTrailingSlash && r.Path != "" {
			v.add("Action.Redirect.StripTrailingSlash", ErrConflict, "redirect: a path and stripping the trailing slash both set")
		}
		if rr := r.PathRegex; rr != nil {
			if r.Path != "" || r.StripTrailingSlash {
				v.add("Action.Redirect.PathRegex", ErrConflict, "redirect: a path regex and a path (or stripping the trailing slash) both set")
			}
			if err := validRegex(rr.Pattern); err != nil {
				v.add("Action.Redirect.PathRegex.Pattern", ErrBadRegex, "redirect path regex: %w", err)
			}
			if hasControl(rr.Substitution) {
				v.add("Action.Redirect.PathRegex.Substitution", ErrBadPath, "redirect path substitution %q", rr.Substitution)
			}
		}
		if r.Relative && (r.Scheme != "" || r.Host != "" || r.Port != 0 || r.ListenerPort || r.StripTrailingSlash) {
			v.add("Action.Redirect.Relative", ErrConflict, "redirect: relative, with a scheme, host, port or trailing slash stripped")
		}
		if l := r.Location; l != "" {
			if *r != (Redirect{Location: l, Code: r.Code}) {
				v.add("Action.Redirect.Location", ErrConflict, "redirect: a location and other parts both set")
			}
			if hasControl(l) || !(strings.HasPrefix(l, "/") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) {
				v.add("Action.Redirect.Location", ErrBadPath, "redirect location %q is not an http or https URL nor an absolute path", l)
			}
		}
	}
	if d := a.Direct; d != nil && (d.Status < 200 || d.Status > 599) {
		v.add("Action.Direct.Status", ErrOutOfRange, "direct response status %d out of range", d.Status)
	}
	if d := a.Direct; d != nil && (hasControl(d.ContentType) || strings.ContainsAny(d.ContentType, "\r\n")) {
		v.add("Action.Direct.ContentType", ErrBadHeader, "direct response content type %q", d.ContentType)
	}
	if p := rt.Policy; p != nil {
		v.nest("Policy", "policy: ", ErrBadValue, p.validate(clusters)...)
	}
	if h := rt.Policy.responseHeaders(); a.Forward != nil && h != nil && (len(h.AddOnSuccess) > 0 || h.Expires != nil) {
		for i, wc := range a.Forward.Clusters {
			if wc.ResponseHeaders != nil {
				// The renderer moves the route's changes into the
				// shares' (they come first), and those have no
				// statuses to add on.
				v.add(fmt.Sprintf("Action.Forward.Clusters[%d].ResponseHeaders", i), ErrConflict, "a share's response headers beside the route's additions on success or expiry")
			}
		}
	}
	if t := rt.Policy; t != nil && t.Tracing != nil && hasControl(t.Tracing.Operation) {
		v.add("Policy.Tracing.Operation", ErrBadValue, "span name %q", t.Tracing.Operation)
	}
	if l := rt.Log; l != nil {
		for _, f := range []struct{ field, value string }{{"Namespace", l.Namespace}, {"Ingress", l.Ingress}, {"Service", l.Service}, {"ServicePort", l.ServicePort}, {"Upstream", l.Upstream}, {"CanaryCluster", l.CanaryCluster}, {"CanaryUpstream", l.CanaryUpstream}} {
			if hasControl(f.value) || strings.ContainsAny(f.value, "%'\\") {
				v.add(joinField("Log", f.field), ErrBadName, "access log name %q", f.value)
			}
		}
		if hasControl(l.Path) {
			v.add("Log.Path", ErrBadName, "request metrics path %q", l.Path)
		}
		if (l.CanaryCluster == "") != (l.CanaryUpstream == "") {
			v.add("Log.CanaryUpstream", ErrConflict, "a canary's cluster without its upstream name, or the reverse")
		}
	}
	return v
}

func (p *RoutePolicy) validate(clusters map[string]*Cluster) []error {
	var v violations
	if r := p.HTTPSRedirect; r != nil && (!validRedirectCode(r.Code) || r.Port > 65535) {
		v.add("HTTPSRedirect", ErrOutOfRange, "https redirect code %d, port %d", r.Code, r.Port)
	}
	if t := p.Timeouts; t != nil && (t.Request < 0 || t.Idle < 0) {
		v.add("Timeouts", ErrOutOfRange, "negative timeout")
	}
	if r := p.Retries; r != nil {
		if r.Attempts == 0 || len(r.On) == 0 {
			v.add("Retries", ErrConflict, "retries need attempts and conditions")
		}
		for i, on := range r.On {
			if on == "" || strings.ContainsAny(on, ", \r\n\x00") {
				v.add(fmt.Sprintf("Retries.On[%d]", i), ErrBadName, "retry condition %q", on)
			}
		}
		if slices.Contains(r.On, "retriable-status-codes") != (len(r.StatusCodes) > 0) {
			v.add("Retries.StatusCodes", ErrConflict, "retry status codes %v need, and only go with, the condition retriable-status-codes", r.StatusCodes)
		}
		for i, code := range r.StatusCodes {
			if code < 100 || code > 599 {
				v.add(fmt.Sprintf("Retries.StatusCodes[%d]", i), ErrOutOfRange, "retry status code %d", code)
			}
		}
		for i, m := range r.NotMethods {
			if strings.HasPrefix(m, ":") || validHeaderName(m) != nil { // a method is a token too
				v.add(fmt.Sprintf("Retries.NotMethods[%d]", i), ErrBadName, "retry method %q", m)
			}
		}
		if r.Backoff < 0 || r.Backoff > 0 && time.Duration(r.Backoff) < time.Millisecond {
			v.add("Retries.Backoff", ErrOutOfRange, "retry backoff %v: negative, or under Envoy's millisecond", time.Duration(r.Backoff))
		}
	}
	for i, h := range p.Hash {
		field := func(sub string) string { return joinField(fmt.Sprintf("Hash[%d]", i), sub) }
		switch h.Kind {
		case HashPath, HashHost, HashSourceIP:
			if h.Name != "" {
				v.add(field("Name"), ErrConflict, "hash %s takes no name", h.Kind)
			}
		case HashHeader:
			if err := validHeaderName(h.Name); err != nil || strings.HasPrefix(h.Name, ":") || strings.ToLower(h.Name) != h.Name {
				v.add(field("Name"), ErrBadHeader, "hash header %q", h.Name)
			}
		case HashCookie, HashQuery:
			if h.Name == "" || hasControl(h.Name) || strings.ContainsAny(h.Name, ";=, ") {
				v.add(field("Name"), ErrBadName, "hash %s %q", h.Kind, h.Name)
			}
		default:
			v.add(field("Kind"), ErrUnknownValue, "unknown hash kind %q", h.Kind)
		}
	}
	if e := p.ErrorPages; e != nil {
		v.nest("ErrorPages", "", ErrBadValue, e.validate()...)
	}
	if b := p.RequestBody; b != nil && b.MaxBytes == 0 {
		v.add("RequestBody.MaxBytes", ErrOutOfRange, "request body bound of 0 bytes")
	}
	if a := p.Affinity; a != nil {
		if a.Cookie == "" || strings.HasPrefix(a.Cookie, ":") || validHeaderName(a.Cookie) != nil {
			v.add("Affinity.Cookie", ErrBadHeader, "affinity cookie name %q is not a token", a.Cookie)
		}
		for _, f := range []struct{ field, attr string }{{"Affinity.Path", a.Path}, {"Affinity.Domain", a.Domain}} {
			if hasControl(f.attr) || strings.ContainsAny(f.attr, "; ") {
				v.add(f.field, ErrBadHeader, "affinity cookie attribute %q", f.attr)
			}
		}
		if a.Path != "" && !strings.HasPrefix(a.Path, "/") {
			v.add("Affinity.Path", ErrBadPath, "affinity cookie path %q", a.Path)
		}
		if a.SameSite != "" && a.SameSite != "Strict" && a.SameSite != "Lax" && a.SameSite != "None" {
			v.add("Affinity.SameSite", ErrUnknownValue, "affinity cookie SameSite %q", a.SameSite)
		}
		if a.MaxAge < 0 {
			v.add("Affinity.MaxAge", ErrOutOfRange, "affinity cookie: negative max age")
		}
	}
	if r := p.Rewrite; r != nil {
		if r.Prefix != "" && r.Regex != nil {
			v.add("Rewrite", ErrConflict, "rewrite: prefix and regex both set")
		}
		if r.Prefix != "" && (!strings.HasPrefix(r.Prefix, "/") || hasControl(r.Prefix)) {
			v.add("Rewrite.Prefix", ErrBadPath, "rewrite prefix %q", r.Prefix)
		}
		if r.Regex != nil {
			if err := validRegex(r.Regex.Pattern); err != nil {
				v.add("Rewrite.Regex.Pattern", ErrBadRegex, "rewrite regex: %w", err)
			}
			if hasControl(r.Regex.Substitution) {
				v.add("Rewrite.Regex.Substitution", ErrBadPath, "rewrite substitution %q", r.Regex.Substitution)
			}
		}
		if hasControl(r.Host) || strings.ContainsAny(r.Host, "/ ") {
			v.add("Rewrite.Host", ErrBadHost, "rewrite host %q", r.Host)
		}
	}
	v.headerChanges("RequestHeaders", p.RequestHeaders, false)
	v.headerChanges("ResponseHeaders", p.ResponseHeaders, true)
	if p.ResponseRewrite != nil {
		v.nest("ResponseRewrite", "", ErrBadValue, p.ResponseRewrite.validate()...)
	}
	for i, m := range p.Mirrors {
		field := func(sub string) string { return joinField(fmt.Sprintf("Mirrors[%d]", i), sub) }
		if clusters[m.Cluster] == nil {
			v.add(field("Cluster"), ErrUnlistedCluster, "mirror cluster %q is not listed", m.Cluster)
		}
		if m.Percent > 100 {
			v.add(field("Percent"), ErrOutOfRange, "mirror percent %d", m.Percent)
		}
		if errs := m.validate(); len(errs) > 0 {
			v.nest(field(""), "", ErrBadValue, errs...)
		}
	}
	if c := p.CORS; c != nil {
		v.nest("CORS", "cors: ", ErrBadValue, c.validate()...)
	}
	if p.Auth != nil {
		v.nest("Auth", "", ErrBadValue, p.Auth.validate()...)
	}
	if r := p.IPRules; r != nil {
		r.check(&v, "IPRules", "ip rules: empty", "ip rules:")
	}
	if r := p.RateLimit; r != nil {
		v.nest("RateLimit", "rate limit: ", ErrBadValue, r.validate())
	}
	if c := p.Connections; c != nil {
		v.nest("Connections", "connection limit: ", ErrBadValue, c.validate())
	}
	if r := p.ResponseRate; r != nil {
		v.nest("ResponseRate", "response rate: ", ErrBadValue, r.validate())
	}
	if c := p.Compression; c != nil {
		v.nest("Compression", "compression: ", ErrBadValue, c.validate())
	}
	return v.errors()
}

func (p *ClusterPolicy) validate() error {
	if p.IsDefault() {
		return invalid("", ErrNoOp, "a default policy is no policy: leave it nil")
	}
	switch p.Protocol {
	case UpstreamHTTP1, UpstreamHTTP2:
	default:
		return invalid("Protocol", ErrUnknownValue, "unknown protocol %q", p.Protocol)
	}
	switch p.LoadBalancer {
	case RoundRobin, LeastRequest, Random, RingHash:
	default:
		return invalid("LoadBalancer", ErrUnknownValue, "unknown load balancer %q", p.LoadBalancer)
	}
	if p.ConnectTimeout < 0 {
		return invalid("ConnectTimeout", ErrOutOfRange, "negative connect timeout")
	}
	if p.ServiceAddress != "" {
		if _, err := netip.ParseAddr(p.ServiceAddress); err != nil {
			return invalid("ServiceAddress", ErrBadAddress, "service address: %w", err)
		}
	}
	if t := p.TLS; t != nil {
		if err := t.validate(); err != nil {
			var v violations
			v.nest("TLS", "tls: ", ErrBadValue, err)
			return v[0]
		}
	}
	return nil
}

func (t *UpstreamTLS) validate() error {
	if t.SNI != "" && validHost(t.SNI) != nil {
		return invalid("SNI", ErrBadHost, "bad SNI %q", t.SNI)
	}
	if len(t.CA) == 0 && (t.VerifyName != "" || t.VerifyDepth != 0) {
		return invalid("CA", ErrConflict, "a name or depth to verify without a CA")
	}
	if t.VerifyName != "" && validHost(t.VerifyName) != nil {
		return invalid("VerifyName", ErrBadHost, "bad name to verify %q", t.VerifyName)
	}
	if len(t.SubjectAltNames) > 0 && (len(t.CA) == 0 || t.VerifyName != "") {
		return invalid("SubjectAltNames", ErrConflict, "subject alt names need a CA, and take the place of a name to verify")
	}
	for i, san := range t.SubjectAltNames {
		if err := san.validate(); err != nil {
			return invalid(fmt.Sprintf("SubjectAltNames[%d]", i), ErrBadHost, "subject alt name: %w", err)
		}
	}
	if (len(t.ClientChain) == 0) != (len(t.ClientKey) == 0) {
		field := "ClientKey"
		if len(t.ClientChain) == 0 {
			field = "ClientChain"
		}
		return invalid(field, ErrConflict, "a client certificate needs both chain and key")
	}
	version := map[string]int{"": 0, "TLSv1.2": 2, "TLSv1.3": 3}
	lo, okLo := version[t.MinVersion]
	hi, okHi := version[t.MaxVersion]
	switch {
	case !okLo:
		return invalid("MinVersion", ErrUnknownValue, "versions %q to %q", t.MinVersion, t.MaxVersion)
	case !okHi:
		return invalid("MaxVersion", ErrUnknownValue, "versions %q to %q", t.MinVersion, t.MaxVersion)
	case lo != 0 && hi != 0 && lo > hi:
		return invalid("MaxVersion", ErrConflict, "versions %q to %q", t.MinVersion, t.MaxVersion)
	}
	for i, c := range t.Ciphers {
		if c == "" || strings.ContainsAny(c, ":!+[]| ") || hasControl(c) {
			return invalid(fmt.Sprintf("Ciphers[%d]", i), ErrBadCipher, "cipher %q", c)
		}
	}
	return nil
}

func (s StringMatch) validate() error {
	if s.Exact != "" && s.Regex != "" {
		return invalid("", ErrConflict, "exact and regex both set")
	}
	if hasControl(s.Exact) {
		return invalid("Exact", ErrBadHeader, "value holds control characters")
	}
	if s.Regex != "" {
		if err := validRegex(s.Regex); err != nil {
			return invalid("Regex", ErrBadRegex, "%w", err)
		}
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

func (p ValuePart) validate(response bool) error {
	switch p.Var {
	case "":
		if p.Name != "" {
			return fmt.Errorf("a text part with a name")
		}
		if hasControl(p.Text) {
			return fmt.Errorf("text holds control characters")
		}
		return nil
	case VarRequestHeader, VarResponseHeader:
		if p.Var == VarResponseHeader && !response {
			return fmt.Errorf("a response header in a request header's value")
		}
		if p.Text != "" {
			return fmt.Errorf("a variable with text")
		}
		return validHeaderName(p.Name)
	case VarClientAddress, VarScheme, VarHost, VarPath, VarURI, VarRequestID, VarClientCert, VarClientSubject, VarClientIssuer:
		if p.Text != "" || p.Name != "" {
			return fmt.Errorf("variable %s with text or a name", p.Var)
		}
		return nil
	}
	return fmt.Errorf("unknown variable %q", p.Var)
}

// check adds to v, under field, an empty list of rules (empty) and each
// range that is not a canonical CIDR (what, then the range).
func (r *IPRules) check(v *violations, field, empty, what string) {
	if len(r.Allow) == 0 && len(r.Deny) == 0 {
		v.add(field, ErrNoOp, "%s", empty)
	}
	for _, l := range []struct {
		list  string
		cidrs []string
	}{{"Allow", r.Allow}, {"Deny", r.Deny}} {
		for i, cidr := range l.cidrs {
			if pfx, err := netip.ParsePrefix(cidr); err != nil || pfx != pfx.Masked() {
				v.add(fmt.Sprintf("%s.%s[%d]", field, l.list, i), ErrBadAddress, "%s %q is not a canonical CIDR", what, cidr)
			}
		}
	}
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

func sortedUnique[T any](errs []error, kind Kind, list []T, name func(T) string) []error {
	for i := 1; i < len(list); i++ {
		switch a, b := name(list[i-1]), name(list[i]); {
		case a == b:
			errs = append(errs, &ValidationError{Kind: kind, Name: b, Err: ErrDuplicate, msg: "listed twice"})
		case a > b:
			errs = append(errs, &ValidationError{Kind: kind, Name: b, Err: ErrUnsorted, msg: fmt.Sprintf("not sorted: after %q", a)})
		}
	}
	return errs
}

// headerChanges checks one side's header changes, reported under side
// (the field's path): names that are tokens, values a header can carry,
// and nothing a request cannot have (statuses, expiries).
func (v *violations) headerChanges(side string, hc *HeaderChanges, response bool) {
	if hc == nil {
		return
	}
	for i, name := range hc.Remove {
		if err := validHeaderName(name); err != nil {
			v.add(fmt.Sprintf("%s.Remove[%d]", side, i), ErrBadHeader, "header change: %w", err)
		}
	}
	for _, l := range []struct {
		list string
		hs   []Header
	}{{"Set", hc.Set}, {"Add", hc.Add}, {"AddOnSuccess", hc.AddOnSuccess}} {
		for i, h := range l.hs {
			list := l.list
			field := func(sub string) string { return joinField(fmt.Sprintf("%s.%s[%d]", side, list, i), sub) }
			if err := validHeaderName(h.Name); err != nil {
				v.add(field("Name"), ErrBadHeader, "header change: %w", err)
			}
			if hasControl(h.Value) {
				v.add(field("Value"), ErrBadHeader, "header %s: value holds control characters", h.Name)
			}
			if len(h.Parts) > 0 && h.Value != "" {
				v.add(field("Parts"), ErrConflict, "header %s: both a value and parts", h.Name)
			}
			for j, part := range h.Parts {
				if err := part.validate(response); err != nil {
					v.add(field(fmt.Sprintf("Parts[%d]", j)), ErrBadHeader, "header %s: %w", h.Name, err)
				}
			}
		}
	}
	if !response && len(hc.AddOnSuccess) > 0 {
		v.add(side+".AddOnSuccess", ErrConflict, "a request has no status to add headers on")
	}
	if e := hc.Expires; e != nil {
		switch {
		case !response:
			v.add(side+".Expires", ErrConflict, "a request has no expiry")
		case e.Epoch && e.Max || (e.Epoch || e.Max) && e.Seconds != 0:
			v.add(side+".Expires", ErrConflict, "expiry: more than one of Seconds, Epoch and Max")
		case e.Seconds > MaxExpirySeconds || e.Seconds < -MaxExpirySeconds:
			v.add(side+".Expires.Seconds", ErrOutOfRange, "expiry of %d seconds: beyond a hundred years", e.Seconds)
		}
	}
}

// responseHeaders is p's response header changes; nil for a nil p.
func (p *RoutePolicy) responseHeaders() *HeaderChanges {
	if p == nil {
		return nil
	}
	return p.ResponseHeaders
}

func (s SubjectAltName) validate() error {
	switch {
	case (s.DNS == "") == (s.URI == ""):
		return errors.New("exactly one of a DNS name and a URI")
	case s.DNS != "":
		if err := validHost(s.DNS); err != nil {
			return fmt.Errorf("DNS name %q: %w", s.DNS, err)
		}
	default:
		u, err := url.Parse(s.URI)
		if err != nil || u.Scheme == "" || hasControl(s.URI) || strings.ContainsAny(s.URI, " ") {
			return fmt.Errorf("URI %q is no absolute URI", s.URI)
		}
	}
	return nil
}
