package ingress

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The snippet annotations (configuration-snippet, server-snippet) are
// translated by translate/ingress/snippet into the same policies the
// annotations make: a configuration-snippet's header directives and
// allow/deny merge into the route policy (mergeGroups), its rewrite-phase
// outcomes become routes of their own before each of the Ingress's routes
// (snippetVariants); a server-snippet applies to every route of its hosts
// and adds its locations there (mergeServerSnippet), the oldest Ingress's
// for a host, as in ingress-nginx.

// snippetsConfig is what the snippet annotations ask.
type snippetsConfig struct {
	location *snippet.Result
	server   *snippet.Result
	// auth are auth-snippet's headers to the auth service.
	auth []ir.Header
	// limitStatus is the status of a request past a limit, before a
	// snippet's limit_req_status: the ConfigMap's.
	limitStatus uint32
	// gzip is the http level's gzip (the ConfigMap's use-gzip), and
	// compression what it asks of a location with no gzip of its own
	// (gzip.go).
	gzip        snippet.Gzip
	compression *ir.Compression
	// intercepted: custom-http-errors makes nginx intercept the
	// backend's answers (proxy_intercept_errors), which error_page then
	// takes too.
	intercepted bool
	// proxyHeaders are the ConfigMap's proxy-set-headers for this
	// location, which the template writes before the snippet; nil: none.
	proxyHeaders *ir.HeaderChanges
}

// parseSnippets translates the snippet annotations. A snippet that is not
// translated whole refuses the Ingress (unless the operator serves such
// Ingresses without it), the problem naming the directive and its line.
//
// Under a controller ConfigMap (serve --configmap), its
// allow-snippet-annotations and annotations-risk-level decide first, as
// in ingress-nginx: below the Critical risk level an Ingress carrying a
// snippet is refused (ingress-nginx rejects it); at Critical, without
// allow-snippet-annotations, its snippets are dropped (reported) and the
// rest served. Without a ConfigMap they are translated: nothing
// free-form reaches Envoy (docs/security.md).
func parseSnippets(values *annotations.Values, ing *networkingv1.Ingress, opts *Options) (snippetsConfig, []problem) {
	var out snippetsConfig
	var problems []problem
	mode := configmap.SnippetsTranslated
	if opts.ConfigMap.Name != "" {
		mode = opts.config.snippetAnnotations()
	}
	where := snippetOptions(values, ing)
	where.Zones, where.CacheZones = opts.config.snippets().Zones, opts.config.snippets().CacheZones
	// Both listeners read the client's address from the same header; a
	// serve --trusted-forwarded-hops wins over forwarded-for-header.
	if d := opts.config.downstream(ir.HTTP, opts.TrustedForwardedHops != 0); d != nil {
		where.ClientHeader = d.ClientHeader
	}
	if h, err := opts.config.proxySetHeaders(where); err != nil {
		problems = append(problems, problemf("InvalidConfigMapValue",
			"ConfigMap key proxy-set-headers: %v in this Ingress's location: none of its headers is applied here", err))
	} else {
		out.proxyHeaders = h
	}
	where.DefaultType = opts.config.defaultType()
	// absolute_redirect off: the ConfigMap's at the http level, the
	// annotation's in the Ingress's locations alone (nginx.tmpl).
	where.RelativeRedirects = where.RelativeRedirects || opts.config.relativeRedirects()
	out.limitStatus = opts.config.limitStatus()
	out.gzip, out.compression = opts.config.gzip(), opts.config.compression()
	if _, ok := annotations.CustomHTTPErrors.Get(values); ok {
		off, _ := annotations.DisableProxyInterceptErrors.Get(values)
		out.intercepted = !off
	}
	for _, k := range []struct {
		key annotations.Key[string]
		ctx snippet.Context
		res **snippet.Result
	}{
		{annotations.ConfigurationSnippet, snippet.LocationContext, &out.location},
		{annotations.ServerSnippet, snippet.ServerContext, &out.server},
	} {
		src, ok := k.key.Get(values)
		if !ok || strings.TrimSpace(src) == "" {
			continue
		}
		switch mode {
		case configmap.SnippetsRefused:
			problems = append(problems, unsupported("annotation "+k.key.Name(),
				"the ConfigMap's annotations-risk-level is below Critical, so ingress-nginx rejects an Ingress carrying this Critical annotation (annotations-risk-level: Critical and allow-snippet-annotations: \"true\" have it translated)"))
			continue
		case configmap.SnippetsDropped:
			problems = append(problems, problemf("SnippetDropped",
				"annotation %s: dropped, as ingress-nginx drops it while the ConfigMap's allow-snippet-annotations is false: the Ingress is served without it", k.key.Name()))
			continue
		}
		in := where
		if k.ctx == snippet.ServerContext {
			in.RelativeRedirects = opts.config.relativeRedirects()
		}
		res, err := snippet.Translate(k.ctx, src, in)
		var r *snippet.Refusal
		if errors.As(err, &r) {
			problems = append(problems, unsupported("annotation "+k.key.Name(), r.Error()+" (nothing of the snippet is applied)"))
			continue
		}
		if _, set := annotations.Satisfy.Get(values); set && res.Satisfy != "" {
			// nginx.tmpl writes the annotation's satisfy after the
			// snippet: nginx refuses the second ("is duplicate").
			problems = append(problems, unsupported("annotation "+k.key.Name(),
				"directive satisfy: the satisfy annotation already sets it in the location, and nginx refuses a second (nothing of the snippet is applied)"))
			continue
		}
		if len(res.UnlessRealIP) > 0 && opts.config.realIP() {
			d := res.UnlessRealIP[0]
			r := &snippet.Refusal{Directive: d.Directive, Line: d.Line, Why: configmap.RealIPRefusal}
			problems = append(problems, unsupported("annotation "+k.key.Name(), r.Error()+" (nothing of the snippet is applied)"))
			continue
		}
		*k.res = res
	}
	// The ConfigMap's location-snippet follows the configuration-snippet
	// in every location: one rewrite phase, so translated together.
	if cfg := opts.config.snippets(); cfg.Location != nil {
		src, _ := annotations.ConfigurationSnippet.Get(values)
		switch {
		case out.location == nil && !cfg.Location.Contextual:
			out.location = cfg.Location
		default:
			// Translated again where the Ingress's location differs
			// from the one the ConfigMap's was translated for.
			text, key, why := cfg.LocationText, "ConfigMap key location-snippet", "in this Ingress's location: "
			if out.location != nil {
				text = src + "\n" + text
				key, why = "annotation "+annotations.ConfigurationSnippet.Name(), "followed by the ConfigMap's location-snippet (lines counted over both): "
			}
			res, err := snippet.Translate(snippet.LocationContext, text, where)
			var r *snippet.Refusal
			if errors.As(err, &r) {
				out.location = nil
				problems = append(problems, unsupported(key, why+r.Error()+" (nothing of the snippet is applied)"))
				break
			}
			out.location = res
		}
	}
	if src, ok := annotations.AuthSnippet.Get(values); ok && strings.TrimSpace(src) != "" {
		key := "annotation " + annotations.AuthSnippet.Name()
		switch mode {
		case configmap.SnippetsRefused:
			problems = append(problems, unsupported(key, "the ConfigMap's annotations-risk-level is below Critical, so ingress-nginx rejects an Ingress carrying this Critical annotation"))
		case configmap.SnippetsDropped:
			problems = append(problems, problemf("SnippetDropped", "%s: dropped, as ingress-nginx drops it while the ConfigMap's allow-snippet-annotations is false", key))
		default:
			if _, ok := annotations.AuthURL.Get(values); !ok {
				problems = append(problems, problemf("SnippetIgnored", "%s: ignored without auth-url, as ingress-nginx ignores it", key))
				break
			}
			headers, _, err := snippet.TranslateAuth(src)
			var r *snippet.Refusal
			if errors.As(err, &r) {
				problems = append(problems, unsupported(key, r.Error()+" (nothing of the snippet is applied)"))
				break
			}
			out.auth = headers
		}
	}
	return out, problems
}

// checkLocationSnippet refuses a configuration-snippet (clearing it)
// whose error_page takes a status the location answers itself, where
// nginx would answer with the error page and ingress-xds does not
// translate it, or that reads the auth service's answer in a directive
// not translated beside auth-url. Otherwise those directives have no
// effect, as in nginx (snippet.Result.ErrorPages, UnlessExternalAuth).
func checkLocationSnippet(g *groups) []problem {
	loc := g.snippets.location
	if loc == nil {
		return nil
	}
	key := "annotation " + annotations.ConfigurationSnippet.Name()
	refuse := func(d snippet.DirectiveRef, why string) []problem {
		g.snippets.location = nil
		r := &snippet.Refusal{Directive: d.Directive, Line: d.Line, Why: why}
		return []problem{unsupported(key, r.Error()+" (nothing of the snippet is applied)")}
	}
	if r := g.access.rateLimit; r != nil && len(r.Exempt) > 0 && len(loc.RequestRates) > 0 {
		return refuse(*loc.LimitReq, "beside limit-allowlist, which exempts addresses from the annotations' limits alone: not translated")
	}
	if g.externalAuth != nil && len(loc.UnlessExternalAuth) > 0 {
		return refuse(loc.UnlessExternalAuth[0], "it reads the auth service's answer, which with auth-url is not translated here")
	}
	if len(loc.CookieFlags) > 0 {
		// nginx edits the backend's Set-Cookie lines alone, before
		// headers-more and add_header write theirs; Envoy's router writes
		// a route's headers into the response before any filter sees it.
		cookie := setsCookie(&loc.Edits.Response) || setsCookie(&ir.HeaderChanges{Set: g.customHeaders.set})
		for _, b := range loc.Branches {
			cookie = cookie || b.Outcome.Edits != nil && setsCookie(&b.Outcome.Edits.Response)
		}
		if cookie {
			return refuse(*loc.CookieFlagsAt, "beside a Set-Cookie of more_set_headers, add_header always or custom-headers, which nginx leaves as it is and Envoy's route would hand to the cookie filter: not translated")
		}
	}
	if loc.Body != nil {
		// nginx's sub_filter rewrites the text of the location's return
		// too (ingress-nginx's default_type is text/html); a route that
		// answers here has no upstream response to rewrite.
		for _, b := range loc.Branches {
			if d := b.Outcome.Direct; d != nil && d.Body != "" {
				return refuse(*loc.SubFilterAt, "beside a return with a text, which nginx would rewrite too: not translated")
			}
		}
	}
	if len(loc.ErrorPages) == 0 {
		return nil
	}
	answers := locationAnswers(g)
	for _, ep := range loc.ErrorPages {
		if g.snippets.intercepted {
			return refuse(ep.DirectiveRef, "custom-http-errors makes nginx intercept the backend's answers, which error_page then takes: not translated")
		}
		for _, c := range ep.Codes {
			if why, ok := answers[c]; ok {
				return refuse(ep.DirectiveRef, fmt.Sprintf("the location answers %d itself (%s), which nginx would replace with the error page: not translated", c, why))
			}
		}
	}
	return nil
}

// locationAnswers are the statuses nginx answers itself in an Ingress's
// location, each with what makes it: the ones any proxying location
// can give, and those of the groups and the snippet.
func locationAnswers(g *groups) map[int]string {
	out := map[int]string{
		400: "a malformed request", 408: "a client too slow to send its body", 413: "a body over the size limit",
		500: "an internal error", 502: "a backend that cannot be reached", 503: "no endpoint ready", 504: "a backend too slow to answer",
	}
	add := func(code uint32, why string) {
		if _, ok := out[int(code)]; !ok && code != 0 {
			out[int(code)] = why
		}
	}
	if g.access.ipRules != nil {
		add(403, "its allow and deny lists")
	}
	if g.access.rateLimit != nil {
		add(g.access.rateLimit.Status, "its rate limit")
	}
	if g.connections != nil {
		add(g.connections.Status, "its connection limit")
	}
	if g.basicAuth.basic != nil {
		add(401, "basic authentication")
	}
	if g.externalAuth != nil {
		add(401, "auth-url")
		add(403, "auth-url")
	}
	if r := g.redirect.intent.every; r != nil {
		add(r.Code, "its redirect")
	}
	if g.redirect.https != nil {
		add(g.redirect.https.Code, "the redirect to HTTPS")
	}
	if g.redirect.intent.appRoot != "" {
		add(302, "app-root")
	}
	if g.redirect.intent.fromToWWW {
		add(308, "from-to-www-redirect")
	}
	loc := g.snippets.location
	if loc.Access != nil {
		add(403, "the snippet's allow and deny")
	}
	add(loc.LimitReqStatus, "its rate limit")
	add(loc.LimitConnStatus, "its connection limit")
	for _, b := range loc.Branches {
		switch o := b.Outcome; {
		case o.Direct != nil:
			add(o.Direct.Status, "the snippet's return")
		case o.Redirect != nil:
			add(o.Redirect.Code, "the snippet's redirect")
		}
	}
	return out
}

// withSnippetRates adds a configuration-snippet's limit_req rates to the
// route's rate limit (nginx applies every limit_req of the location).
func withSnippetRates(r *ir.RateLimit, s snippetsConfig) *ir.RateLimit {
	if s.location == nil || len(s.location.RequestRates) == 0 {
		return r
	}
	if r == nil {
		return &ir.RateLimit{Rates: slices.Clone(s.location.RequestRates), Status: s.limitStatus}
	}
	c := *r
	c.Rates = slices.Concat(r.Rates, s.location.RequestRates)
	return &c
}

// SnippetOptions is what a configuration-snippet's location is, as the
// Ingress and its annotations (parsed by the registry) make it: for
// audit, which shows the verdicts the front-end's translation gives.
func SnippetOptions(values *annotations.Values, ing *networkingv1.Ingress) snippet.Options {
	return snippetOptions(values, ing)
}

// snippetOptions is what a configuration-snippet's location is, as the
// Ingress and its annotations make it.
func snippetOptions(values *annotations.Values, ing *networkingv1.Ingress) snippet.Options {
	var o snippet.Options
	o.Backend, _ = annotations.BackendProtocol.Get(values)
	_, o.ProxySSLSecret = annotations.ProxySSLSecret.Get(values)
	o.Vars = locationVars(ing)
	o.RelativeRedirects, _ = annotations.RelativeRedirects.Get(values)
	return o
}

// locationVars are the variables ingress-nginx's template sets in each
// of an Ingress's locations (nginx.tmpl: set $namespace, $ingress_name,
// $service_name, $service_port) and nginx's $server_name (the host; "_"
// for a rule without one), each where it holds one value in every
// location of the Ingress.
func locationVars(ing *networkingv1.Ingress) map[string]string {
	vars := map[string]string{"namespace": ing.Namespace, "ingress_name": ing.Name}
	services, ports, hosts := map[string]bool{}, map[string]bool{}, map[string]bool{}
	backend := func(b networkingv1.IngressBackend) {
		if b.Service == nil {
			services[""] = true
			return
		}
		services[b.Service.Name] = true
		port := b.Service.Port.Name
		if port == "" {
			port = strconv.Itoa(int(b.Service.Port.Number))
		}
		ports[port] = true
	}
	for _, r := range ing.Spec.Rules {
		hosts[cmp.Or(r.Host, "_")] = true
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			backend(p.Backend)
		}
	}
	if b := ing.Spec.DefaultBackend; b != nil {
		hosts["_"] = true
		backend(*b)
	}
	for name, set := range map[string]map[string]bool{"service_name": services, "service_port": ports, "server_name": hosts} {
		if len(set) != 1 {
			continue
		}
		for v := range set {
			if v != "" && !strings.HasPrefix(v, "*.") {
				vars[name] = v
			}
		}
	}
	return vars
}

// mergeAuthSnippet adds auth-snippet's headers to those of the request to
// the auth service (auth-proxy-set-headers'), the snippet's last: nginx
// writes it after the template's list.
func mergeAuthSnippet(e *ir.ExternalAuth, headers []ir.Header) *ir.ExternalAuth {
	if e == nil || len(headers) == 0 {
		return e
	}
	c := *e
	set := slices.Clone(e.ProxySetHeaders)
	for _, h := range headers {
		set = slices.DeleteFunc(set, func(o ir.Header) bool { return strings.EqualFold(o.Name, h.Name) })
		set = append(set, h)
	}
	slices.SortFunc(set, func(a, b ir.Header) int { return strings.Compare(a.Name, b.Name) })
	c.ProxySetHeaders = set
	return &c
}

// mergeAuthHeaders gives auth-url's check the request headers a
// configuration-snippet makes from its answer (auth_request_set). Without
// auth-url nginx never sets those variables: a header is then its text
// alone, and one that comes out empty removes the client's.
func mergeAuthHeaders(e *ir.ExternalAuth, loc *snippet.Result) (*ir.ExternalAuth, *ir.HeaderChanges) {
	if loc == nil || len(loc.Edits.AuthHeaders) == 0 {
		return e, nil
	}
	if e != nil {
		c := *e
		c.UpstreamHeaders = loc.Edits.AuthHeaders
		return &c, nil
	}
	static := &ir.HeaderChanges{}
	for _, h := range loc.Edits.AuthHeaders {
		var text strings.Builder
		for _, p := range h.Parts {
			text.WriteString(p.Text)
		}
		if text.Len() > 0 {
			static.Set = append(static.Set, ir.Header{Name: h.Name, Value: text.String()})
		} else {
			static.Remove = append(static.Remove, strings.ToLower(h.Name))
		}
	}
	return nil, static
}

// mergeSnippetPolicy merges a configuration-snippet's edits and access
// rules into the route policy, by nginx's order in ingress-nginx's
// location: the template's allow and deny come first in one first-match
// list, so an allowlist annotation (ending in deny all) leaves the
// snippet's rules nothing to match, and a denylist's ranges are refused
// before them; the snippet's headers-more directives run before the
// custom-headers annotation's, which wins for the same name.
func mergeSnippetPolicy(p *ir.RoutePolicy, loc *snippet.Result) {
	if loc == nil {
		return
	}
	p.RequestHeaders = mergeHeaderChanges(&loc.Edits.Request, p.RequestHeaders)
	p.ResponseHeaders = mergeHeaderChanges(&loc.Edits.Response, p.ResponseHeaders)
	p.NoAccessLog = p.NoAccessLog || loc.NoAccessLog
	limitStatuses(p, loc)
	p.ResponseRewrite = withCookieFlags(p.ResponseRewrite, loc.CookieFlags)
	if loc.Body != nil {
		var c ir.ResponseRewrite
		if p.ResponseRewrite != nil {
			c = *p.ResponseRewrite
		}
		c.Body = loc.Body
		p.ResponseRewrite = &c
	}
}

// withCookieFlags is rw (proxy-cookie-domain and -path, proxy-redirect-*)
// with a configuration-snippet's proxy_cookie_flags rules, a new value;
// rules none of which has a flag change nothing and are left out.
func withCookieFlags(rw *ir.ResponseRewrite, rules []ir.CookieFlagsRule) *ir.ResponseRewrite {
	if !slices.ContainsFunc(rules, func(r ir.CookieFlagsRule) bool { return len(r.Flags) > 0 }) {
		return rw
	}
	var c ir.ResponseRewrite
	if rw != nil {
		c = *rw
	}
	c.CookieFlags = rules
	return &c
}

// setsCookie says whether headers set or add a Set-Cookie line that
// Envoy's router writes into the response (more_set_headers, add_header
// always, custom-headers), before the filter that edits the backend's
// cookies sees it.
func setsCookie(h *ir.HeaderChanges) bool {
	if h == nil {
		return false
	}
	return slices.ContainsFunc(slices.Concat(h.Set, h.Add), func(x ir.Header) bool { return strings.EqualFold(x.Name, "Set-Cookie") })
}

// mergeSnippetAccess adds a configuration-snippet's allow and deny to the
// route's address rules, before satisfy decides how they combine with
// the authentication.
func mergeSnippetAccess(p *ir.RoutePolicy, loc *snippet.Result) {
	if loc == nil {
		return
	}
	if a := loc.Access; a != nil {
		switch {
		case p.IPRules == nil:
			p.IPRules = a
		case len(p.IPRules.Allow) == 0:
			rules := &ir.IPRules{Deny: append(slices.Clone(p.IPRules.Deny), a.Deny...), Allow: a.Allow}
			p.IPRules = rules
		}
	}
}

// limitStatuses sets the statuses of the limits' refusals a snippet's
// limit_req_status and limit_conn_status give (nginx's, at the level the
// snippet is, over the ConfigMap's at http level).
func limitStatuses(p *ir.RoutePolicy, s *snippet.Result) {
	if r := p.RateLimit; r != nil && s.LimitReqStatus != 0 {
		c := *r
		c.Status = s.LimitReqStatus
		p.RateLimit = &c
	}
	if l := p.Connections; l != nil && s.LimitConnStatus != 0 {
		c := *l
		c.Status = s.LimitConnStatus
		p.Connections = &c
	}
}

// mergeHeaderChanges is first's changes then later's: later's Set wins
// for a name both set, and later's expiry over first's.
func mergeHeaderChanges(first *ir.HeaderChanges, later *ir.HeaderChanges) *ir.HeaderChanges {
	if later == nil {
		if first == nil || len(first.Remove)+len(first.Set)+len(first.Add)+len(first.AddOnSuccess) == 0 && first.Expires == nil {
			return nil
		}
		c := *first
		return &c
	}
	out := &ir.HeaderChanges{
		Remove:       slices.Concat(first.Remove, later.Remove),
		Add:          slices.Concat(first.Add, later.Add),
		AddOnSuccess: slices.Concat(first.AddOnSuccess, later.AddOnSuccess),
		Expires:      cmp.Or(later.Expires, first.Expires),
	}
	for _, h := range first.Set {
		if !slices.ContainsFunc(later.Set, func(o ir.Header) bool { return strings.EqualFold(o.Name, h.Name) }) {
			out.Set = append(out.Set, h)
		}
	}
	out.Set = append(out.Set, later.Set...)
	return out
}

// snippetVariants are the routes a configuration-snippet's branches add
// before route: its match with the branch's conditions, and the branch's
// outcome. An answer (return, a redirecting rewrite) comes from nginx's
// rewrite phase, before its access checks, authentication, limits and
// redirect to HTTPS, so those are off on its route; the headers stay.
func snippetVariants(route *ir.Route, loc *snippet.Result, custom []ir.Header) []*ir.Route {
	if loc == nil || len(loc.Branches) == 0 || route.Action.Forward == nil {
		return nil
	}
	var out []*ir.Route
	for _, b := range loc.Branches {
		v := *route
		v.Match.Headers = append(slices.Clone(route.Match.Headers), b.When...)
		v.Policy = outcomePolicy(route.Policy, b.Outcome, custom)
		applyOutcome(&v, b.Outcome)
		if len(b.When) == 0 {
			// Every request takes it: it is the route.
			*route = v
			return out
		}
		out = append(out, &v)
	}
	return out
}

// applyOutcome makes route's action the outcome's.
func applyOutcome(route *ir.Route, o snippet.Outcome) {
	switch {
	case o.Redirect != nil:
		r := *o.Redirect
		route.Action = ir.Action{Redirect: &r}
	case o.Direct != nil:
		d := *o.Direct
		route.Action = ir.Action{Direct: &d}
	}
}

// outcomePolicy is the policy of a route that ends in o; custom are the
// custom-headers annotation's, set after an if block's headers as after
// the location's.
func outcomePolicy(p *ir.RoutePolicy, o snippet.Outcome, custom []ir.Header) *ir.RoutePolicy {
	var c ir.RoutePolicy
	if p != nil {
		c = *p
	}
	if o.Edits != nil {
		c.RequestHeaders = mergeHeaderChanges(&o.Edits.Request, customOnly(p))
		var annotation *ir.HeaderChanges
		if len(custom) > 0 {
			annotation = &ir.HeaderChanges{Set: custom}
		}
		c.ResponseHeaders = mergeHeaderChanges(&o.Edits.Response, annotation)
	}
	if o.Rewrite != nil {
		rw := ir.Rewrite{Regex: o.Rewrite}
		if c.Rewrite != nil {
			rw.Host = c.Rewrite.Host
		}
		c.Rewrite = &rw
	}
	if o.Answers() {
		c.HTTPSRedirect, c.IPRules, c.Auth, c.RateLimit, c.Connections = nil, nil, nil, nil, nil
		c.Timeouts, c.Retries, c.Rewrite, c.Mirrors, c.RequestBody, c.Affinity, c.ErrorPages = nil, nil, nil, nil, nil, nil, nil
		c.ResponseRewrite, c.Hash, c.ResponseRate = nil, nil, nil
	}
	if reflectZero(&c) {
		return nil
	}
	return &c
}

// customOnly is the request headers of p that are not a snippet's: none
// here beyond connection-proxy-header's, which the snippet's if keeps.
func customOnly(p *ir.RoutePolicy) *ir.HeaderChanges {
	if p == nil || p.RequestHeaders == nil {
		return nil
	}
	for _, h := range p.RequestHeaders.Set {
		if strings.EqualFold(h.Name, "Connection") {
			return &ir.HeaderChanges{Set: []ir.Header{h}}
		}
	}
	return nil
}
