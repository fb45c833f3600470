package samerouting

import (
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// describer writes a route's match and what it does as text in which two
// routes that route alike read alike.
type describer struct {
	// backendOf is each cluster's backend.
	backendOf map[string]string
}

// match is a route's match: path, then headers and query parameters by
// name.
func (d describer) match(m ir.Match) string {
	path := m.Path
	if m.PathType == ir.PathRegex {
		path = canonicalRegex(path)
	}
	parts := []string{fmt.Sprintf("%s %s", m.PathType, path)}
	var headers []string
	for _, h := range m.Headers {
		s := "header " + strings.ToLower(h.Name) + stringMatch(h.Value)
		if h.Invert {
			s = "not " + s
		}
		if h.MissingIsEmpty {
			s += " (missing is empty)"
		}
		headers = append(headers, s)
	}
	slices.Sort(headers)
	var query []string
	for _, q := range m.Query {
		query = append(query, "query "+q.Name+stringMatch(q.Value))
	}
	slices.Sort(query)
	return strings.Join(append(append(parts, headers...), query...), ", ")
}

func stringMatch(s ir.StringMatch) string {
	switch {
	case s.Exact != "":
		return "=" + s.Exact
	case s.Regex != "":
		return "~" + canonicalRegex(s.Regex)
	}
	return " present"
}

// canonicalRegex is an RE2 expression in the simplified form RE2 prints,
// so that `(?i)(?:/foo).*` and `(?i)/foo.*` are one; an expression RE2
// refuses is kept as written.
func canonicalRegex(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return expr
	}
	return re.Simplify().String()
}

// does is what a route does with what it matches, on a protocol's
// listeners of its host.
func (d describer) does(r *ir.Route, vh *ir.VirtualHost, p ir.Protocol) string {
	pol := r.Policy
	if pol == nil {
		pol = &ir.RoutePolicy{}
	}
	if h := pol.HTTPSRedirect; p == ir.HTTP && h != nil && (!h.OnlyWithCertificate || vh.Certificate != "") {
		return redirect(&ir.Redirect{Scheme: "https", Port: h.Port, StripTrailingSlash: h.StripTrailingSlash, Code: h.Code})
	}
	switch a := r.Action; {
	case a.Redirect != nil:
		return redirect(a.Redirect)
	case a.Direct != nil:
		return fmt.Sprintf("answer %d", a.Direct.Status)
	case a.Forward != nil:
		return strings.Join(append([]string{d.forward(a.Forward)}, d.edits(pol)...), "; ")
	}
	return "nothing"
}

// forward is the backends and their shares of the requests (a share of
// no weight takes none; one backend takes all).
func (d describer) forward(f *ir.Forward) string {
	var total uint32
	var shares []ir.WeightedCluster
	for _, wc := range f.Clusters {
		if wc.Weight > 0 || len(f.Clusters) == 1 {
			shares = append(shares, wc)
			total += wc.Weight
		}
	}
	var out []string
	for _, wc := range shares {
		s := d.backendOf[wc.Cluster]
		if s == "" {
			s = "cluster " + wc.Cluster + " (not listed)"
		}
		if len(shares) > 1 {
			g := gcd(wc.Weight, total)
			s += fmt.Sprintf(" %d/%d", wc.Weight/g, total/g)
		}
		for _, e := range headerChanges("its request", wc.RequestHeaders) {
			s += " (" + e + ")"
		}
		for _, e := range headerChanges("its response", wc.ResponseHeaders) {
			s += " (" + e + ")"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return "forward to " + strings.Join(out, " and ")
}

func gcd(a, b uint32) uint32 {
	for b != 0 {
		a, b = b, a%b
	}
	if a == 0 {
		return 1
	}
	return a
}

// edits are what a forwarding route changes of the request and its
// response.
func (d describer) edits(p *ir.RoutePolicy) []string {
	var out []string
	if rw := p.Rewrite; rw != nil {
		if rw.Host != "" {
			out = append(out, "Host set to "+rw.Host)
		}
		switch {
		case rw.Prefix != "":
			out = append(out, "the matched prefix replaced by "+rw.Prefix)
		case rw.Regex != nil:
			out = append(out, pathRewrite(rw.Regex))
		}
	}
	out = append(out, headerChanges("request", p.RequestHeaders)...)
	out = append(out, headerChanges("response", p.ResponseHeaders)...)
	for _, m := range p.Mirrors {
		s := fmt.Sprintf("%d%% mirrored to %s", m.Percent, d.backendOf[m.Cluster])
		if m.Host != "" {
			s += " as host " + m.Host
		}
		if m.Path != nil {
			s += fmt.Sprintf(" at %s then %s", m.Path.Prefix, m.Path.Then)
		}
		if m.NoBody {
			s += " without body"
		}
		out = append(out, s)
	}
	if c := p.CORS; c != nil {
		out = append(out, cors(c))
	}
	return append(out, access(p)...)
}

// access is who may reach the route's backends: not routing as such,
// but a converted route that drops it serves what the Ingress guarded,
// so it counts as a difference rather than as a policy left out.
func access(p *ir.RoutePolicy) []string {
	var out []string
	if a := p.Auth; a != nil {
		var kinds []string
		if a.Basic != nil {
			kinds = append(kinds, "basic")
		}
		if a.External != nil {
			kinds = append(kinds, "external")
		}
		if a.Address != nil {
			kinds = append(kinds, fmt.Sprintf("addresses allow %v deny %v", a.Address.Allow, a.Address.Deny))
		}
		join := " and "
		if a.Any {
			join = " or "
		}
		out = append(out, "access by "+strings.Join(kinds, join)+" authentication")
	}
	if r := p.IPRules; r != nil {
		out = append(out, fmt.Sprintf("access by address: allow %v deny %v", r.Allow, r.Deny))
	}
	if p.RateLimit != nil {
		out = append(out, "rate limited")
	}
	if p.Connections != nil {
		out = append(out, "connections limited")
	}
	return out
}

var groupRef = regexp.MustCompile(`\\[0-9]`)

// pathRewrite is a regular expression rewrite of the path. One that
// matches from the start to the end of every path its route matches
// (anchored at the start, ending in .*) and names no group replaces the
// whole path, however its pattern is spelled.
func pathRewrite(rw *ir.RegexRewrite) string {
	pattern := strings.TrimPrefix(rw.Pattern, "(?i)")
	if !groupRef.MatchString(rw.Substitution) && strings.HasPrefix(pattern, "^") &&
		(strings.HasSuffix(pattern, ".*") || strings.HasSuffix(pattern, ".*$")) {
		return "path set to " + rw.Substitution
	}
	return fmt.Sprintf("path rewritten by %s to %s", canonicalRegex(rw.Pattern), rw.Substitution)
}

// headerChanges lists header edits, each header name in lower case.
func headerChanges(what string, h *ir.HeaderChanges) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, n := range h.Remove {
		out = append(out, fmt.Sprintf("%s header %s removed", what, strings.ToLower(n)))
	}
	for _, kind := range []struct {
		verb    string
		headers []ir.Header
	}{{"set", h.Set}, {"added", h.Add}, {"added on success", h.AddOnSuccess}} {
		for _, x := range kind.headers {
			out = append(out, fmt.Sprintf("%s header %s %s to %q", what, strings.ToLower(x.Name), kind.verb, headerValue(x)))
		}
	}
	if e := h.Expires; e != nil {
		out = append(out, fmt.Sprintf("%s expiry %+v", what, *e))
	}
	slices.Sort(out)
	return out
}

func headerValue(h ir.Header) string {
	if len(h.Parts) == 0 {
		return h.Value
	}
	var b strings.Builder
	for _, p := range h.Parts {
		if p.Var == "" {
			b.WriteString(p.Text)
			continue
		}
		fmt.Fprintf(&b, "${%s", p.Var)
		if p.Name != "" {
			b.WriteString(":" + p.Name)
		}
		b.WriteString("}")
	}
	return b.String()
}

// redirect is a redirect's Location and status. A Location written whole
// is taken apart into the parts the other fields say, its query dropped
// (it is sent as it is); a port that is its scheme's own is no port.
func redirect(r *ir.Redirect) string {
	scheme, host, port, path := r.Scheme, r.Host, fmt.Sprint(r.Port), r.Path
	stripQuery := r.StripQuery
	if r.Location != "" {
		u, err := url.Parse(r.Location)
		if err != nil {
			return fmt.Sprintf("redirect %d to %s", r.Code, r.Location)
		}
		scheme, host, port, path, stripQuery = u.Scheme, u.Hostname(), u.Port(), u.Path, true
		if path == "" && host != "" {
			path = "/" // http://example.com is http://example.com/
		}
	}
	if port == "0" || scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	parts := []string{fmt.Sprintf("redirect %d", r.Code)}
	add := func(name, value string) {
		if value != "" {
			parts = append(parts, name+" "+value)
		}
	}
	add("scheme", scheme)
	add("host", host)
	add("port", port)
	if r.ListenerPort {
		parts = append(parts, "the listener's port")
	}
	add("path", path)
	if r.PathRegex != nil {
		parts = append(parts, pathRewrite(r.PathRegex))
	}
	if r.StripTrailingSlash {
		parts = append(parts, "a trailing / dropped")
	}
	if stripQuery {
		parts = append(parts, "the query dropped")
	} else {
		parts = append(parts, "the query kept")
	}
	return strings.Join(parts, ", ")
}

// cors is a CORS policy as the headers it makes.
func cors(c *ir.CORS) string {
	var origins []string
	if c.AnyOrigin {
		origins = []string{"any"}
	}
	for _, o := range c.AllowOrigins {
		origins = append(origins, strings.TrimPrefix(stringMatch(o), "="))
	}
	s := fmt.Sprintf("CORS origins %s, methods %q, headers %q, expose %q, max age %d, credentials %v",
		strings.Join(origins, " "), c.AllowMethods, c.AllowHeaders, c.ExposeHeaders, c.MaxAgeSeconds, c.AllowCredentials)
	if c.PreflightsOnly {
		s += ", preflights only"
	} else {
		s += ", every OPTIONS answered"
	}
	if c.EchoWildcards {
		s += ", wildcards echoed"
	}
	return s
}
