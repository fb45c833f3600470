package snippet

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// maxWays bounds the ways through a block's rewrite phase (each if doubles
// them): past it a snippet is refused rather than made into that many
// routes.
const maxWays = 32

// level is the block a directive sits in.
type level int

const (
	serverLevel     level = iota // a server snippet's top
	locationLevel                // a location of the Ingress (configuration-snippet)
	snippetLocation              // a location block of a server snippet
)

// Translate reads src as nginx reads a snippet in ctx and translates it,
// or refuses it (a *Refusal) with the first directive it cannot translate
// whole; opts say what the location of a configuration-snippet is. A
// refused snippet's Result holds only the verdicts up to the refusal, for
// audit.
func Translate(ctx Context, src string, opts Options) (*Result, error) {
	ds, err := nginxconf.Parse(src)
	if err != nil {
		return &Result{}, &Refusal{Why: fmt.Sprintf("not nginx syntax: %v", err)}
	}
	t := &translator{declared: declared(ds), opts: opts}
	lv := locationLevel
	if ctx == ServerContext {
		lv = serverLevel
	}
	res, err := t.block(ds, lv, nil)
	if err == nil {
		err = t.again(ds, res.Branches)
	}
	if err != nil {
		var r *Refusal
		if errors.As(err, &r) && !r.nginxRefuses() {
			if r.Nginx = nginxRefusesToo(ds, lv, opts); r.Nginx != nil {
				n := r.Nginx
				t.verdicts = append(t.verdicts, Verdict{Line: n.Line, Directive: n.Directive, Verdict: Refused, Note: n.Why})
			}
		}
		return &Result{Verdicts: settle(t.verdicts)}, err
	}
	res.Verdicts = settle(t.verdicts)
	res.Contextual = t.contextual
	res.UnlessExternalAuth = t.unlessAuth
	res.UnlessRealIP = t.unlessRealIP
	return res, nil
}

// again runs the location's rewrite phase once more for each path a
// rewrite ... last chose the location again for, as nginx does when it
// chooses this location again: its conditions on $uri and its rewrites
// then read the new path, known here. The snippet is refused unless that
// run forwards the path as it is, which the front-end's forward with the
// new path assumes (a second cycle, or if blocks that would switch the
// request's configuration, are not translated).
func (t *translator) again(ds []nginxconf.Directive, branches []Branch) error {
	done := map[string]bool{}
	for _, b := range branches {
		r := b.Outcome.Reselect
		if r == nil || done[r.Path] {
			continue
		}
		done[r.Path] = true
		u := &translator{declared: t.declared, opts: t.opts, uri: r.Path}
		res, err := u.block(ds, locationLevel, nil)
		why := ""
		switch {
		case err != nil:
			why = err.Error()
			var inner *Refusal
			if errors.As(err, &inner) && inner.Directive != "" {
				why = fmt.Sprintf("its %s (line %d): %s", inner.Directive, inner.Line, inner.Why)
			}
		case len(res.Branches) > 0:
			why = "its rewrite directives would not simply forward it"
		default:
			continue
		}
		refusal := &Refusal{Directive: r.Directive, Line: r.Line,
			Why: fmt.Sprintf("if nginx chooses this location again for %s, %s: not translated", r.Path, why)}
		t.verdicts = append(t.verdicts, Verdict{Line: r.Line, Directive: r.Directive, Verdict: Refused, Note: refusal.Why})
		return refusal
	}
	return nil
}

// settle keeps one verdict per directive (a directive runs once per way
// through the rewrite phase): translated where any way translated it,
// in the order of the lines.
func settle(vs []Verdict) []Verdict {
	rank := map[string]int{NoEffect: 0, Translated: 1, Refused: 2}
	type at struct {
		line int
		name string
	}
	best := map[at]int{}
	var out []Verdict
	for _, v := range vs {
		k := at{v.Line, v.Directive}
		i, ok := best[k]
		if !ok {
			best[k] = len(out)
			out = append(out, v)
			continue
		}
		if rank[v.Verdict] > rank[out[i].Verdict] || rank[v.Verdict] == rank[out[i].Verdict] && out[i].Note == "" {
			out[i] = v
		}
	}
	slices.SortStableFunc(out, func(a, b Verdict) int { return a.Line - b.Line })
	return out
}

type translator struct {
	verdicts []Verdict
	// authVars are auth_request_set's variables: the auth answer's
	// header each holds, by variable name.
	authVars map[string]string
	// declared are the variables some set of the snippet declares: on a
	// way through the rewrite phase that did not set one, it is empty
	// (nginx's uninitialised variable, whose warning ingress-nginx turns
	// off).
	declared map[string]bool
	// opts are the location's; contextual records that they decided a
	// directive's fate.
	opts       Options
	contextual bool
	// unlessAuth are the snippet's directives of no effect without
	// auth-url (Result.UnlessExternalAuth).
	unlessAuth []DirectiveRef
	// unlessRealIP are those of no effect while nginx's realip module is
	// off (Result.UnlessRealIP).
	unlessRealIP []DirectiveRef
	// passed are the headers the block's proxy_pass_header passes, which
	// its proxy_hide_header then does not hide.
	passed map[string]bool
	// uri, when set, is $uri known at translation: the path a rewrite
	// ... last chose the location again for, on which the location's
	// rewrite phase runs again (again).
	uri string
}

// declared lists the variables the set directives of ds (and of their
// blocks) declare.
func declared(ds []nginxconf.Directive) map[string]bool {
	out := map[string]bool{}
	var walk func([]nginxconf.Directive)
	walk = func(ds []nginxconf.Directive) {
		for _, d := range ds {
			if d.Name == "set" && len(d.Args) == 2 && strings.HasPrefix(d.Args[0], "$") {
				out[d.Args[0][1:]] = true
			}
			walk(d.Block)
		}
	}
	walk(ds)
	return out
}

func (t *translator) verdict(d nginxconf.Directive, verdict, note string) {
	t.verdicts = append(t.verdicts, Verdict{Line: d.Line, Directive: d.Name, Verdict: verdict, Note: note})
}

// refuse is the refusal of d, recorded among the verdicts.
func (t *translator) refuse(d nginxconf.Directive, format string, args ...any) error {
	why := fmt.Sprintf(format, args...)
	t.verdict(d, Refused, why)
	return &Refusal{Directive: d.Name, Line: d.Line, Why: why}
}

// block translates the directives of one block; loc is the location's
// regular expression for a regex location block (its captures), or nil.
func (t *translator) block(ds []nginxconf.Directive, lv level, loc *regex) (*Result, error) {
	res := &Result{}
	var program []nginxconf.Directive
	var access []accessRule
	// auth_request_set is configuration: its variables hold wherever the
	// block's directives read them.
	for _, d := range ds {
		if d.Name != "auth_request_set" {
			continue
		}
		if err := t.authRequestSet(d, lv); err != nil {
			return nil, err
		}
	}
	var expiresAt *nginxconf.Directive
	outerPassed := t.passed
	defer func() { t.passed = outerPassed }()
	t.passed = map[string]bool{}
	for _, d := range ds {
		if d.Name == "proxy_pass_header" && len(d.Args) == 1 {
			t.passed[strings.ToLower(d.Args[0])] = true
		}
	}
	gzipSeen := map[string]bool{}
	cookieOff := false
	var subs subFilters
	for _, d := range ds {
		if err := t.checkArgs(d); err != nil {
			return nil, err
		}
		switch {
		case d.Name == "auth_request_set":
			continue
		case isGzipDirective(d.Name):
			if err := t.gzip(&res.Gzip, gzipSeen, d, lv); err != nil { // gzip.go
				return nil, err
			}
		case d.Name == "limit_req":
			r, err := t.limitReq(d, lv)
			if err != nil {
				return nil, err
			}
			if r != nil {
				res.RequestRates = append(res.RequestRates, *r)
				if res.LimitReq == nil {
					res.LimitReq = &DirectiveRef{Directive: d.Name, Line: d.Line}
				}
			}
		case d.Name == "proxy_cookie_flags":
			if err := t.cookieFlags(res, &cookieOff, d, lv); err != nil { // cookie.go
				return nil, err
			}
		case isSubFilterDirective(d.Name):
			if err := t.subFilter(&subs, d, lv); err != nil { // subfilter.go
				return nil, err
			}
		case d.Name == "expires":
			if err := t.expires(&res.Edits, d); err != nil {
				return nil, err
			}
			expiresAt = &d
		case d.Name == "error_page":
			ep, err := t.errorPage(d, lv)
			if err != nil {
				return nil, err
			}
			res.ErrorPages = append(res.ErrorPages, ep)
		case d.Name == "limit_req_status" || d.Name == "limit_conn_status":
			code, err := strconv.Atoi(strings.Join(d.Args, " "))
			if err != nil || code < 400 || code > 599 {
				return nil, t.refuse(d, "a status from 400 to 599, as nginx takes")
			}
			if d.Name == "limit_req_status" {
				res.LimitReqStatus = uint32(code)
			} else {
				res.LimitConnStatus = uint32(code)
			}
			t.verdict(d, Translated, "the status of the requests limit-rps, limit-rpm or limit-connections refuse here")
		case d.Name == "satisfy":
			if lv != locationLevel {
				return nil, t.refuse(d, "outside a configuration-snippet: not translated")
			}
			if len(d.Args) != 1 || d.Args[0] != "any" && d.Args[0] != "all" {
				return nil, t.refuse(d, "satisfy takes any or all")
			}
			res.Satisfy = d.Args[0]
			t.verdict(d, Translated, "")
		case d.Name == "access_log":
			if len(d.Args) != 1 || d.Args[0] != "off" {
				return nil, t.refuse(d, "an access log of its own (a file and a format): not translated; only access_log off is")
			}
			res.NoAccessLog = true
			t.verdict(d, Translated, "")
		case isRewriteModule(d.Name):
			if d.Name == "if" {
				if err := t.checkIfBody(d, lv); err != nil {
					return nil, err
				}
			}
			program = append(program, d)
		case isHeaderDirective(d.Name):
			if err := t.header(&res.Edits, d, lv); err != nil {
				return nil, err
			}
		case d.Name == "allow" || d.Name == "deny":
			r, err := t.accessRule(d)
			if err != nil {
				return nil, err
			}
			access = append(access, r)
		case d.Name == "location":
			if lv == snippetLocation {
				return nil, t.refuse(d, "a location inside a snippet's location: not translated")
			}
			if lv == locationLevel && (len(d.Args) != 2 || d.Args[0] != "~" && d.Args[0] != "~*") {
				// nginx refuses a nested = or prefix location outside the
				// path of the location around it, and this snippet is
				// in the location of each of the Ingress's paths.
				return nil, t.refuse(d, "a nested = or prefix location: not translated (nginx takes one only inside the path of every location the snippet is in); nested regular expression locations are")
			}
			l, err := t.location(d)
			if err != nil {
				return nil, err
			}
			if lv == locationLevel && l.NoAccessLog {
				return nil, t.refuse(d, "access_log off in a nested location: not translated")
			}
			res.Locations = append(res.Locations, *l)
		default:
			if err := t.other(d, lv); err != nil {
				return nil, err
			}
		}
	}
	if e := res.Edits.Response; expiresAt != nil && e.Expires != nil {
		// nginx writes expires' headers before add_header's, and
		// headers-more's apart: translated only where nothing else of
		// the block writes them.
		for _, h := range slices.Concat(e.Set, e.Add) {
			if strings.EqualFold(h.Name, "Cache-Control") || strings.EqualFold(h.Name, "Expires") {
				return nil, t.refuse(*expiresAt, "beside a %s of the block's other than add_header without always: not translated", h.Name)
			}
		}
	}
	if res.Body = t.subFilterResult(&subs); res.Body != nil {
		i := slices.IndexFunc(subs.at, func(d nginxconf.Directive) bool { return d.Name == "sub_filter" })
		res.SubFilterAt = &DirectiveRef{Directive: subs.at[i].Name, Line: subs.at[i].Line}
	}
	if len(access) > 0 {
		rules, err := t.ipRules(access)
		if err != nil {
			return nil, err
		}
		res.Access = rules
	}
	branches, err := t.run(program, lv, &res.Edits, loc)
	if err != nil {
		return nil, err
	}
	if lv == locationLevel && len(res.Locations) > 0 {
		// nginx chooses a nested location before the rewrite phase of
		// the one around it, which it then never runs: its branches come
		// first, matched by its path.
		nested, err := nestedBranches(res.Locations, &res.Edits)
		if err != nil {
			return nil, err
		}
		branches = append(nested, branches...)
		res.Locations = nil
	}
	res.Branches = branches
	return res, nil
}

// nestedBranches are the branches of a location's nested locations, each
// conditioned on the nested location's path. A nested location inherits
// the headers of the one around it (outer), as nginx's do.
func nestedBranches(locs []Location, outer *Edits) ([]Branch, error) {
	var out []Branch
	for _, l := range locs {
		var path ir.HeaderMatch
		switch l.Modifier {
		case "=":
			path = ir.HeaderMatch{Name: ":path", Value: ir.StringMatch{Regex: "(?s)" + regexp.QuoteMeta(l.Path) + `(?:\?.*)?`}}
		case "~", "~*":
			re := &regex{src: l.regexSrc, ci: l.Modifier == "~*"}
			path = ir.HeaderMatch{Name: ":path", Value: ir.StringMatch{Regex: re.searchPath()}}
		default:
			path = ir.HeaderMatch{Name: ":path", Value: ir.StringMatch{Regex: "(?s)" + regexp.QuoteMeta(l.Path) + ".*"}}
		}
		answered := false
		for _, b := range l.Branches {
			if !b.Outcome.Answers() {
				continue
			}
			o := b.Outcome
			o.Edits = merge(outer, &l.Edits)
			if b.Outcome.Edits != nil {
				o.Edits = merge(outer, b.Outcome.Edits)
			}
			out = append(out, Branch{When: append([]ir.HeaderMatch{path}, b.When...), Outcome: o})
			if len(b.When) == 0 {
				answered = true
			}
		}
		if !answered {
			// Refused by its access rules (location() checked it).
			out = append(out, Branch{When: []ir.HeaderMatch{path}, Outcome: Outcome{Direct: &ir.DirectResponse{Status: 403}, Edits: merge(outer, &l.Edits)}})
		}
	}
	return out, nil
}

// authRequestSet takes auth_request_set $v $upstream_http_NAME: $v holds
// the auth service's NAME header once auth-url's subrequest answered.
func (t *translator) authRequestSet(d nginxconf.Directive, lv level) error {
	if lv != locationLevel {
		return t.refuse(d, "outside a configuration-snippet: not translated")
	}
	if len(d.Args) != 2 || !strings.HasPrefix(d.Args[0], "$") || !isVariableName(d.Args[0][1:]) {
		return t.refuse(d, "auth_request_set takes a $variable and a value")
	}
	name, ok := strings.CutPrefix(d.Args[1], "$upstream_http_")
	if !ok || !isVariableName(name) {
		return t.refuse(d, "a value other than one $upstream_http_* variable: not translated")
	}
	if t.authVars == nil {
		t.authVars = map[string]string{}
	}
	t.authVars[d.Args[0][1:]] = headerOfVariable(name)
	t.verdict(d, Translated, "with auth-url; without it the variable is empty, as in nginx")
	return nil
}

// usesAuthVar says whether s reads an auth_request_set variable.
func (t *translator) usesAuthVar(s string) bool {
	ps, err := pieces(s)
	if err != nil {
		return false
	}
	for _, p := range ps {
		if _, ok := t.authVars[p.name]; ok && p.name != "" {
			return true
		}
	}
	return false
}

// checkArgs refuses control characters in a directive's arguments (and
// its block's), but for the line breaks and tabs of a return's text and
// of sub_filter's texts, which are bodies: no header, path or expression
// may carry one.
func (t *translator) checkArgs(d nginxconf.Directive) error {
	for i, a := range d.Args {
		if d.Name == "return" && i == 1 || d.Name == "sub_filter" {
			if hasControlExceptLines(a) {
				return t.refuse(d, "the text holds control characters")
			}
			continue
		}
		if hasControl(a) {
			return t.refuse(d, "an argument holds control characters")
		}
	}
	for _, b := range d.Block {
		if err := t.checkArgs(b); err != nil {
			return err
		}
	}
	return nil
}

// checkIfBody refuses what nginx refuses in an if block, and what this
// translation does not take there.
func (t *translator) checkIfBody(d nginxconf.Directive, lv level) error {
	for _, b := range d.Block {
		switch {
		case isRewriteModule(b.Name):
			if b.Name == "if" {
				return t.refuse(b, "an if inside an if: nginx refuses it")
			}
		case isHeaderDirective(b.Name):
			if lv == serverLevel {
				return t.refuse(b, "not allowed in a server's if: nginx refuses it")
			}
			if !ifHeaderDirectives[b.Name] {
				return t.refuse(b, "not allowed in an if: nginx refuses it")
			}
		case b.Name == "allow" || b.Name == "deny" || b.Name == "proxy_cookie_flags" || isSubFilterDirective(b.Name):
			return t.refuse(b, "not allowed in an if: nginx refuses it")
		default:
			return t.refuse(b, "inside an if: not translated")
		}
	}
	return nil
}

func isRewriteModule(name string) bool {
	switch name {
	case "set", "if", "return", "rewrite", "break":
		return true
	}
	return false
}

// location translates a server snippet's location block.
func (t *translator) location(d nginxconf.Directive) (*Location, error) {
	if d.Block == nil {
		return nil, t.refuse(d, "a location without a block")
	}
	l := &Location{Line: d.Line, Raw: strings.Join(d.Args, " ")}
	var re *regex
	switch {
	case len(d.Args) == 2 && d.Args[0] == "=":
		l.Modifier, l.Path = "=", d.Args[1]
	case len(d.Args) == 2 && (d.Args[0] == "~" || d.Args[0] == "~*"):
		r, err := compileRegex(d.Args[1], d.Args[0] == "~*")
		if err != nil {
			return nil, t.refuse(d, "regular expression %q: %v", d.Args[1], err)
		}
		re = r
		l.Modifier, l.Path, l.regexSrc = d.Args[0], r.wholePath(), r.src
	case len(d.Args) == 1 && strings.HasPrefix(d.Args[0], "/"):
		l.Path = d.Args[0]
	case len(d.Args) == 1 && strings.HasPrefix(d.Args[0], "@"):
		return nil, t.refuse(d, "a named location, reached only by nginx's internal redirects: not translated")
	default:
		return nil, t.refuse(d, "location %q: only =, ~, ~* and plain prefix locations are translated", l.Raw)
	}
	if l.Modifier != "~" && l.Modifier != "~*" && (hasControl(l.Path) || !strings.HasPrefix(l.Path, "/")) {
		return nil, t.refuse(d, "location path %q does not start with /", l.Path)
	}
	res, err := t.block(d.Block, snippetLocation, re)
	if err != nil {
		return nil, err
	}
	// A snippet location that does not answer serves nginx's static
	// files (ingress-nginx's build has none to serve) or proxies: only
	// the answering ones are translated, and a request that no branch
	// answers is refused by the location's access rules alone.
	answered := false
	for _, b := range res.Branches {
		if len(b.When) == 0 && b.Outcome.Answers() {
			answered = true
		}
	}
	if !answered && !denyAll(res.Access) {
		return nil, t.refuse(d, "location %s: a location that does not answer every request with return (it would serve files or proxy in nginx): not translated", l.Raw)
	}
	l.Result = *res
	t.verdict(d, Translated, "")
	return l, nil
}

// denyAll says whether rules refuse every address.
func denyAll(r *ir.IPRules) bool {
	if r == nil || len(r.Allow) > 0 {
		return false
	}
	for _, d := range r.Deny {
		if d == "0.0.0.0/0" {
			return true
		}
	}
	return false
}

// other takes the directives that are neither rewrite, header nor access
// directives: those whose nginx semantics here are none, and the rest,
// refused.
func (t *translator) other(d nginxconf.Directive, lv level) error {
	switch d.Name {
	case "chunked_transfer_encoding":
		if len(d.Args) == 1 && d.Args[0] == "on" {
			t.verdict(d, NoEffect, "nginx's default: responses of unknown length are chunked, as Envoy's are")
			return nil
		}
		return t.refuse(d, "off (close-delimited responses): Envoy always frames them")
	case "real_ip_header", "real_ip_recursive":
		// ngx_http_realip_module does nothing without set_real_ip_from,
		// which ingress-nginx's template writes (at http level) only
		// under use-forwarded-headers, enable-real-ip or
		// use-proxy-protocol; with it, the directive would choose another
		// header for the client's address on this block alone, which is
		// not translated: the front-end refuses the snippet then.
		if len(d.Args) != 1 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		if v := d.Args[0]; d.Name == "real_ip_recursive" && v != "on" && v != "off" {
			return t.refuse(d, "%q: nginx takes on or off", v)
		}
		if v := d.Args[0]; d.Name == "real_ip_header" && v != "proxy_protocol" && !isToken(v) {
			return t.refuse(d, "%q is not a header's name: not translated", v)
		}
		t.unlessRealIP = append(t.unlessRealIP, DirectiveRef{Directive: d.Name, Line: d.Line})
		t.verdict(d, NoEffect, "nginx's realip module does nothing without set_real_ip_from, which ingress-nginx writes only with use-forwarded-headers, enable-real-ip or use-proxy-protocol (then the snippet is refused)")
		return nil
	case "underscores_in_headers":
		// ngx_http_core_module takes it in http and server blocks alone.
		// In a server it governs the requests that reach the server by
		// its TLS name (the default server's governs the others: headers
		// are read before the Host header chooses a server). With on,
		// nginx keeps a header spelled with underscores, and its $http_*
		// variables then read it as the dashed name
		// (ngx_http_variable_unknown_header in
		// src/http/ngx_http_variables.c turns "-" into "_"): an
		// X_Request_ID becomes ingress-nginx's $http_x_request_id, the
		// request ID the template sends, a condition on $http_x_api_key
		// reads an X_Api_Key. Envoy passes such headers on, but its
		// matches and request IDs read the dashed name alone.
		if lv != serverLevel {
			return t.refuse(d, "nginx takes it in http and server blocks alone: nginx refuses it")
		}
		return t.refuse(d, "nginx's $http_* variables would read a header spelled with underscores as the dashed name (an X_Request_ID as the request ID the template sends), which Envoy's matches and request IDs do not: not translated")
	case "server_tokens":
		// ingress-nginx turns server_tokens off and clears Server at http
		// level (server-tokens: false); in a snippet it changes only
		// nginx's own error pages' signature, which Envoy's do not have.
		t.verdict(d, NoEffect, "ingress-nginx already clears the Server header; only nginx's error pages would change")
		return nil
	case "proxy_connect_timeout", "proxy_send_timeout", "proxy_read_timeout", "proxy_buffering", "proxy_request_buffering",
		"client_max_body_size", "proxy_http_version", "proxy_next_upstream", "proxy_next_upstream_tries", "proxy_next_upstream_timeout",
		"proxy_buffer_size", "proxy_buffers", "proxy_cookie_domain", "proxy_cookie_path", "proxy_redirect":
		if lv == locationLevel {
			// ingress-nginx's template writes each of them in every
			// location (nginx.tmpl): nginx refuses a second one ("is
			// duplicate"), and with it the whole configuration.
			return t.refuse(d, "ingress-nginx's location already sets it, so nginx refuses the configuration (duplicate); its annotation sets it")
		}
		if lv == snippetLocation {
			t.verdict(d, NoEffect, "the location answers every request itself")
			return nil
		}
		t.verdict(d, NoEffect, "each of ingress-nginx's locations sets its own, so a server's has no effect on the Ingress's paths")
		return nil
	}
	switch strings.TrimPrefix(strings.TrimPrefix(d.Name, "proxy_"), "grpc_") {
	case "ssl_name", "ssl_server_name", "ssl_verify", "ssl_verify_depth", "ssl_session_reuse", "ssl_protocols", "ssl_ciphers":
		return t.upstreamSSL(d, lv)
	}
	if grpcModule[d.Name] {
		return t.grpcDirective(d, lv)
	}
	switch d.Name {
	case "proxy_pass_header":
		if len(d.Args) != 1 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		if err := t.checkName(d, d.Args[0]); err != nil {
			return err
		}
		name := strings.ToLower(d.Args[0])
		if name == "date" || name == "server" || name == "x-pad" || strings.HasPrefix(name, "x-accel-") {
			return t.refuse(d, "nginx hides the backend's %s, which this passes: not translated", d.Args[0])
		}
		// ngx_http_proxy_module hides only Date, Server, X-Pad and
		// X-Accel-* by default; the block's proxy_hide_header of the
		// name is cancelled (header()).
		t.verdict(d, NoEffect, "nginx passes the backend's "+d.Args[0]+" already")
		return nil
	case "etag":
		if len(d.Args) != 1 || d.Args[0] != "on" && d.Args[0] != "off" {
			return t.refuse(d, "etag takes on or off")
		}
		t.verdict(d, NoEffect, "etag is for the files nginx serves itself; a backend's ETag passes as sent")
		return nil
	case "limit_req_zone", "limit_conn_zone", "proxy_cache_path", "map", "split_clients", "geo", "upstream", "server":
		return t.refuse(d, "nginx takes it in the http block alone (the ConfigMap's http-snippet): nginx refuses it here")
	case "proxy_cache":
		return t.proxyCache(d)
	case "limit_req_log_level":
		t.verdict(d, NoEffect, "the level of nginx's error log line for a refused request")
		return nil
	}
	if d.IsLua() || strings.Contains(d.Name, "_by_lua") {
		return t.refuse(d, "Lua: not translated")
	}
	return t.refuse(d, "not translated")
}

// templateCacheZone is the cache zone ingress-nginx's template declares
// itself (nginx.tmpl: proxy_cache_path ... keys_zone=auth_cache, for
// auth-cache-key).
const templateCacheZone = "auth_cache"

// proxyCache takes proxy_cache: off is nginx's default, and caching is
// not translated; a zone nobody declares makes nginx refuse the whole
// configuration ("proxy_cache" zone "..." is unknown,
// ngx_http_proxy_merge_loc_conf), which the refusal says.
func (t *translator) proxyCache(d nginxconf.Directive) error {
	if len(d.Args) != 1 {
		return t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	zone := d.Args[0]
	switch {
	case zone == "off":
		t.verdict(d, NoEffect, "nginx's default: ingress-nginx's locations cache nothing")
		return nil
	case strings.Contains(zone, "$") || zone == templateCacheZone || t.opts.CacheZones[zone]:
		return t.refuse(d, "caching: not translated")
	}
	return t.refuse(d, "zone %q is unknown (no proxy_cache_path of the ConfigMap's http-snippet declares it): nginx refuses it", zone)
}

// errorPage reads error_page code ... [=[response]] uri. It changes only
// the answers nginx makes itself in the location (ngx_http_core_module;
// proxy_intercept_errors is off without custom-http-errors, so the
// backend's pass through): the front-end, which knows what the location
// answers, decides between no effect and refusing the snippet.
func (t *translator) errorPage(d nginxconf.Directive, lv level) (ErrorPage, error) {
	ep := ErrorPage{DirectiveRef: DirectiveRef{Directive: d.Name, Line: d.Line}}
	if lv == snippetLocation {
		return ep, t.refuse(d, "in a server-snippet's location: not translated")
	}
	if len(d.Args) < 2 {
		return ep, t.refuse(d, "error_page takes codes and a URI")
	}
	args := d.Args[:len(d.Args)-1]
	if n := len(args); n > 1 && strings.HasPrefix(args[n-1], "=") {
		if code := strings.TrimPrefix(args[n-1], "="); code != "" {
			if c, err := strconv.Atoi(code); err != nil || c < 100 || c > 999 {
				return ep, t.refuse(d, "response %q: nginx takes =code", args[n-1])
			}
		}
		args = args[:n-1]
	}
	for _, a := range args {
		c, err := strconv.Atoi(a)
		if err != nil || c < 300 || c > 599 {
			return ep, t.refuse(d, "code %q: nginx takes codes from 300 to 599", a)
		}
		ep.Codes = append(ep.Codes, c)
	}
	if _, err := pieces(d.Args[len(d.Args)-1]); err != nil {
		return ep, t.refuse(d, "URI: %v", err)
	}
	if lv == serverLevel {
		t.verdict(d, NoEffect, "every location of the host without an error_page of its own inherits it, and there nginx's own answers of these codes alone take it, the backend's passing through (without custom-http-errors): "+
			"no effect where no path of the host answers one of them itself; the Ingress is refused on the host where one does (allow and deny, authentication, limits, a return)")
		return ep, nil
	}
	t.verdict(d, NoEffect, "nginx's own answers of these codes in the location alone take it, and the backend's pass through (without custom-http-errors): "+
		"no effect where the location answers none of them itself; the Ingress is refused where it does (allow and deny, authentication, limits, a return)")
	return ep, nil
}

// sslDefaults are the proxy_ssl_* and grpc_ssl_* values nginx (or
// ingress-nginx's http block) has already.
var sslDefaults = map[string]string{
	"proxy_ssl_verify": "off", "proxy_ssl_server_name": "off", "proxy_ssl_session_reuse": "on",
	"grpc_ssl_verify": "off", "grpc_ssl_server_name": "off", "grpc_ssl_session_reuse": "on",
}

// upstreamSSL takes proxy_ssl_* and grpc_ssl_*: nginx uses them only for
// a TLS backend of its module (proxy_pass to https://, grpc_pass to
// grpcs://), so elsewhere they have no effect; for a TLS backend the
// proxy-ssl-* annotations are the way, and the directive is refused.
func (t *translator) upstreamSSL(d nginxconf.Directive, lv level) error {
	if len(d.Args) == 0 {
		return t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	for _, a := range d.Args {
		if _, err := pieces(a); err != nil {
			return t.refuse(d, "%v", err)
		}
	}
	if def, ok := sslDefaults[d.Name]; ok {
		if len(d.Args) != 1 || d.Args[0] != "on" && d.Args[0] != "off" {
			return t.refuse(d, "%s takes on or off", d.Name)
		}
		if d.Args[0] == def && lv != locationLevel {
			t.verdict(d, NoEffect, "nginx's default already; a location with proxy-ssl-secret sets its own")
			return nil
		}
	}
	switch lv {
	case serverLevel:
		return t.refuse(d, "in a server-snippet it reaches every location of the host with a TLS backend: not translated; the proxy-ssl-* annotations set it per Ingress")
	case snippetLocation:
		t.verdict(d, NoEffect, "the location answers every request itself")
		return nil
	}
	t.contextual = true
	grpc := strings.HasPrefix(d.Name, "grpc_")
	if !grpc && t.opts.ProxySSLSecret {
		return t.refuse(d, "beside proxy-ssl-secret, whose proxy_ssl_* ingress-nginx's location writes (nginx refuses a duplicate): the proxy-ssl-* annotations set it")
	}
	applies := t.opts.Backend == "GRPCS"
	if !grpc {
		applies = t.opts.Backend == "HTTPS" || t.opts.Backend == "AUTO_HTTP"
	}
	if !applies {
		t.verdict(d, NoEffect, "the location's backend is not reached over TLS by "+map[bool]string{true: "grpc_pass (backend-protocol GRPCS)", false: "proxy_pass (backend-protocol HTTPS or AUTO_HTTP)"}[grpc])
		return nil
	}
	if def, ok := sslDefaults[d.Name]; ok && d.Args[0] == def {
		t.verdict(d, NoEffect, "nginx's default already")
		return nil
	}
	return t.refuse(d, "with backend-protocol %s: not translated; the proxy-ssl-* annotations set the backend's TLS", t.opts.Backend)
}

// expires reads expires [modified] time|epoch|max|off
// (ngx_http_headers_filter_module): an expiry on the success statuses.
// A time relative to Last-Modified, a time of day or a variable: refused.
func (t *translator) expires(e *Edits, d nginxconf.Directive) error {
	if len(d.Args) != 1 {
		return t.refuse(d, "expires modified, or a wrong number of arguments: not translated")
	}
	v := d.Args[0]
	switch {
	case v == "off":
		e.Response.Expires = nil
		t.verdict(d, NoEffect, "nginx's default")
		return nil
	case v == "epoch":
		e.Response.Expires = &ir.Expiry{Epoch: true}
	case v == "max":
		e.Response.Expires = &ir.Expiry{Max: true}
	case strings.HasPrefix(v, "@"):
		return t.refuse(d, "a time of day: not translated")
	case strings.Contains(v, "$"):
		return t.refuse(d, "a variable: not translated")
	default:
		sign := int64(1)
		if rest, ok := strings.CutPrefix(v, "-"); ok {
			v, sign = rest, -1
		} else {
			v = strings.TrimPrefix(v, "+")
		}
		secs, ok := nginxSeconds(v)
		if !ok || secs > ir.MaxExpirySeconds {
			return t.refuse(d, "invalid time %q", d.Args[0])
		}
		e.Response.Expires = &ir.Expiry{Seconds: sign * secs}
	}
	t.verdict(d, Translated, "Expires and Cache-Control on 200, 201, 204, 206, 301, 302, 303, 304, 307 and 308, replacing the backend's")
	return nil
}

// nginxSeconds parses a time as nginx's ngx_parse_time does in seconds:
// numbers each followed by a unit, y (365 days), M (30 days), w, d, h, m,
// s, the units in that order, each once; a last number without a unit
// is seconds.
func nginxSeconds(s string) (int64, bool) {
	units := []struct {
		c    byte
		secs int64
	}{{'y', 365 * 86400}, {'M', 30 * 86400}, {'w', 7 * 86400}, {'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}}
	var total int64
	next := 0
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 12 {
			return 0, false
		}
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil {
			return 0, false
		}
		if i == len(s) {
			return total + n, true
		}
		j := next
		for j < len(units) && units[j].c != s[i] {
			j++
		}
		if j == len(units) {
			return 0, false
		}
		total += n * units[j].secs
		next = j + 1
		s = s[i+1:]
	}
	return total, true
}

// limitReq reads limit_req zone=name [burst=n] [nodelay] of a zone the
// ConfigMap's http-snippet declares per client address: what the
// limit-rps and limit-rpm annotations make (ingress-nginx's template
// writes them so, with nodelay), a bucket of burst+1 per client refilled
// at the zone's rate. Without nodelay a burst delays requests, which is
// not translated.
func (t *translator) limitReq(d nginxconf.Directive, lv level) (*ir.RequestRate, error) {
	var zone string
	var burst uint64
	nodelay := false
	for _, a := range d.Args {
		switch {
		case strings.HasPrefix(a, "zone="):
			zone = strings.TrimPrefix(a, "zone=")
		case strings.HasPrefix(a, "burst="):
			n, err := strconv.ParseUint(strings.TrimPrefix(a, "burst="), 10, 32)
			if err != nil {
				return nil, t.refuse(d, "burst %q: nginx takes a number", a)
			}
			burst = n
		case a == "nodelay":
			nodelay = true
		default:
			return nil, t.refuse(d, "%s: not translated", a)
		}
	}
	z, ok := t.opts.Zones[zone]
	if !ok {
		return nil, t.refuse(d, "zone %q: no limit_req_zone of the ConfigMap's http-snippet declares it: nginx refuses it", zone)
	}
	switch lv {
	case serverLevel:
		return nil, t.refuse(d, "in a server-snippet (it reaches the locations without a limit_req of their own): not translated")
	case snippetLocation:
		t.verdict(d, NoEffect, "the location answers every request in the rewrite phase, before limit_req")
		return nil, nil
	}
	if z.Requests == 0 {
		return nil, t.refuse(d, "zone %q is not a limit_req_zone of $binary_remote_addr with a rate: not translated", zone)
	}
	t.contextual = true
	if burst > 0 && !nodelay {
		return nil, t.refuse(d, "without nodelay nginx delays the requests of the burst: not translated (with nodelay it is)")
	}
	t.verdict(d, Translated, fmt.Sprintf("each client's requests: %d per %s, %d at once, as limit-rps and limit-rpm make (a bucket per route, where nginx's zone is shared by the locations that name it)", z.Requests, z.Period, burst+1))
	return &ir.RequestRate{Requests: z.Requests, Period: ir.Duration(z.Period), Bucket: uint32(burst + 1)}, nil
}

// grpcModule are ngx_http_grpc_module's directives of how grpc_pass
// proxies (its headers and TLS are taken apart).
var grpcModule = map[string]bool{
	"grpc_next_upstream": true, "grpc_next_upstream_tries": true, "grpc_next_upstream_timeout": true,
	"grpc_connect_timeout": true, "grpc_send_timeout": true, "grpc_read_timeout": true,
	"grpc_buffer_size": true, "grpc_intercept_errors": true, "grpc_pass_header": true,
	"grpc_ignore_headers": true, "grpc_socket_keepalive": true,
}

// grpcDirective takes a grpc_pass setting: read only by grpc_pass, so of
// no effect in a location that proxies with proxy_pass; with a gRPC
// backend, the template's own timeouts make a second one a duplicate
// nginx refuses, and the rest are not translated.
func (t *translator) grpcDirective(d nginxconf.Directive, lv level) error {
	if len(d.Args) == 0 {
		return t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	if lv != locationLevel {
		return t.refuse(d, "outside a configuration-snippet: not translated")
	}
	t.contextual = true
	if !t.opts.grpc() {
		t.verdict(d, NoEffect, "the location proxies with proxy_pass, not grpc_pass (backend-protocol is not GRPC or GRPCS)")
		return nil
	}
	switch d.Name {
	case "grpc_connect_timeout", "grpc_send_timeout", "grpc_read_timeout":
		return t.refuse(d, "ingress-nginx's gRPC location already sets it, so nginx refuses the configuration (duplicate); the proxy-*-timeout annotations set it")
	}
	return t.refuse(d, "with backend-protocol %s: not translated", t.opts.Backend)
}
