package snippet

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// way is one way through the rewrite phase so far: the conditions it took,
// the variables set gave it, the if block it is in (nginx's "if is evil":
// the last true if's configuration is the request's), and the last
// regular expression that matched (whose captures $1..$9 name).
type way struct {
	when  []ir.HeaderMatch
	vars  map[string][]piece
	edits *Edits
	re    *regex
}

func (w way) with(m ir.HeaderMatch) way {
	w.when = append(slices.Clone(w.when), m)
	return w
}

// run executes a block's rewrite-phase directives for every way through
// them, and returns the ways that do not simply forward.
func (t *translator) run(program []nginxconf.Directive, lv level, block *Edits, loc *regex) ([]Branch, error) {
	var ends []Branch
	vars := map[string][]piece{}
	if lv == locationLevel {
		// The template's own set directives come before the snippet's.
		for name, value := range t.opts.Vars {
			vars[name] = []piece{{text: value}}
			if mentions(program, "$"+name) {
				t.contextual = true
			}
		}
	}
	ways := []way{{vars: vars, re: loc}}
	var err error
	ways, err = t.exec(program, lv, block, ways, &ends)
	if err != nil {
		return nil, err
	}
	for _, w := range ways {
		if w.edits != nil {
			ends = append(ends, Branch{When: w.when, Outcome: Outcome{Edits: w.edits}})
		}
	}
	for i := range ends {
		if ends[i].Outcome.Edits == nil {
			continue
		}
		if ends[i].Outcome.Edits.Empty() && block.Empty() {
			ends[i].Outcome.Edits = nil
		}
	}
	// A way that ends in a plain forward with the block's edits is the
	// route itself.
	ends = slices.DeleteFunc(ends, func(b Branch) bool {
		return !b.Outcome.Answers() && b.Outcome.Rewrite == nil && b.Outcome.Edits == nil
	})
	return simplify(ends), nil
}

// simplify merges two ways that end alike and differ only by one
// condition, held in one and not in the other: that condition decides
// nothing. The ways' conditions are whole (every condition met on the way
// is in them, held or not), so what is left matches the same requests.
func simplify(ends []Branch) []Branch {
	for merged := true; merged; {
		merged = false
	pairs:
		for i := 0; i < len(ends); i++ {
			for j := i + 1; j < len(ends); j++ {
				at, ok := differByOne(ends[i].When, ends[j].When)
				if !ok || !reflect.DeepEqual(ends[i].Outcome, ends[j].Outcome) {
					continue
				}
				ends[i].When = slices.Delete(slices.Clone(ends[i].When), at, at+1)
				ends = slices.Delete(ends, j, j+1)
				merged = true
				break pairs
			}
		}
	}
	return ends
}

// differByOne says whether a and b are the same conditions but for one,
// negated in the other, and where.
func differByOne(a, b []ir.HeaderMatch) (int, bool) {
	if len(a) != len(b) {
		return 0, false
	}
	at := -1
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		n := b[i]
		n.Invert = !n.Invert
		if a[i] != n || at >= 0 {
			return 0, false
		}
		at = i
	}
	return at, at >= 0
}

func (t *translator) exec(program []nginxconf.Directive, lv level, block *Edits, ways []way, ends *[]Branch) ([]way, error) {
	for _, d := range program {
		var next []way
		for _, w := range ways {
			out, err := t.step(d, lv, block, w, ends)
			if err != nil {
				return nil, err
			}
			next = append(next, out...)
		}
		ways = next
		if len(ways)+len(*ends) > maxWays {
			return nil, t.refuse(d, "more than %d ways through the rewrite directives: not translated", maxWays)
		}
	}
	return ways, nil
}

// end ends w with o.
func end(ends *[]Branch, w way, o Outcome) {
	if o.Edits == nil {
		o.Edits = w.edits
	}
	*ends = append(*ends, Branch{When: w.when, Outcome: o})
}

func (t *translator) step(d nginxconf.Directive, lv level, block *Edits, w way, ends *[]Branch) ([]way, error) {
	switch d.Name {
	case "set":
		if len(d.Args) != 2 || !strings.HasPrefix(d.Args[0], "$") || !isVariableName(d.Args[0][1:]) {
			return nil, t.refuse(d, "set takes a $variable and a value")
		}
		v, err := t.setValue(d, w, d.Args[1])
		if err != nil {
			return nil, err
		}
		vars := make(map[string][]piece, len(w.vars)+1)
		for k, val := range w.vars {
			vars[k] = val
		}
		vars[strings.TrimPrefix(d.Args[0], "$")] = v
		w.vars = vars
		t.verdict(d, Translated, "")
		return []way{w}, nil
	case "break":
		end(ends, w, Outcome{})
		t.verdict(d, Translated, "")
		return nil, nil
	case "return":
		o, err := t.returnOutcome(d, w)
		if err != nil {
			return nil, err
		}
		end(ends, w, o)
		t.verdict(d, Translated, "")
		return nil, nil
	case "rewrite":
		return t.rewrite(d, lv, w, ends)
	case "if":
		return t.ifBlock(d, lv, block, w, ends)
	}
	return nil, t.refuse(d, "not translated")
}

// setValue is set's value: text and request variables (a variable set
// earlier stands for its own value).
func (t *translator) setValue(d nginxconf.Directive, w way, s string) ([]piece, error) {
	ps, err := pieces(s)
	if err != nil {
		return nil, t.refuse(d, "%v", err)
	}
	var out []piece
	for _, p := range ps {
		if p.name == "" {
			out = append(out, p)
			continue
		}
		if v, ok := w.vars[p.name]; ok {
			out = append(out, v...)
			continue
		}
		if t.declared[p.name] {
			continue // not set on this way: empty
		}
		if _, ok := conditionHeader(p.name); !ok {
			return nil, t.refuse(d, "variable $%s: %s", p.name, t.unknownVariable(p.name))
		}
		out = append(out, p)
	}
	// Adjacent texts are one.
	var merged []piece
	for _, p := range out {
		if n := len(merged); n > 0 && p.name == "" && merged[n-1].name == "" {
			merged[n-1].text += p.text
			continue
		}
		merged = append(merged, p)
	}
	return merged, nil
}

// ifBlock forks w on the if's condition.
func (t *translator) ifBlock(d nginxconf.Directive, lv level, block *Edits, w way, ends *[]Branch) ([]way, error) {
	c, err := t.condition(d, w)
	if err != nil {
		return nil, err
	}
	var body []nginxconf.Directive
	inner := &Edits{}
	for _, b := range d.Block {
		if isRewriteModule(b.Name) {
			body = append(body, b)
			continue
		}
		if err := t.header(inner, b, lv); err != nil {
			return nil, err
		}
	}
	taken := w
	if c.static == nil || *c.static {
		if c.static == nil {
			taken = w.with(c.match)
		}
		if c.re != nil {
			taken.re = c.re
		}
		// nginx switches the request to the if block's configuration,
		// which inherits the block's.
		if !inner.Empty() || inner.setsAddHeader {
			taken.edits = merge(block, inner)
		} else {
			taken.edits = nil
		}
	}
	var out []way
	switch {
	case c.static != nil && *c.static:
		t.verdict(d, Translated, "")
		return t.exec(body, lv, block, []way{taken}, ends)
	case c.static != nil:
		t.verdict(d, NoEffect, "its condition never holds")
		return []way{w}, nil
	}
	cont, err := t.exec(body, lv, block, []way{taken}, ends)
	if err != nil {
		return nil, err
	}
	out = append(out, cont...)
	not := c.match
	not.Invert = !not.Invert
	out = append(out, w.with(not))
	t.verdict(d, Translated, "")
	return out, nil
}

// cond is an if's condition: a request match, or known at translation
// (static), for a condition on values set gave.
type cond struct {
	match  ir.HeaderMatch
	static *bool
	re     *regex
}

// conditionHeader is the request header (or pseudo-header) whose value an
// nginx variable in a condition is.
func conditionHeader(name string) (string, bool) {
	switch {
	case name == "host" || name == "http_host":
		return ":authority", true
	case name == "request_method":
		return ":method", true
	case name == "scheme":
		return ":scheme", true
	case name == "request_uri":
		return ":path", true
	case name == "uri":
		return ":path", true
	case strings.HasPrefix(name, "http_") && len(name) > len("http_"):
		return headerOfVariable(strings.TrimPrefix(name, "http_")), true
	}
	return "", false
}

// ClientVerifyMatch names, in a branch's conditions, a condition on
// $ssl_client_verify rather than a header: nginx's verdict on the
// client's certificate ("SUCCESS", "FAILED:reason", "NONE" over TLS, ""
// over plain HTTP; ngx_ssl_get_client_verify in
// src/event/ngx_event_openssl.c), which depends on the host's auth-tls,
// a server's setting that a snippet does not know. The front-end decides
// it for each listener (translate/ingress/clientverify.go). It is no
// header name (a parenthesis is not a token character), so that one left
// undecided fails the IR's validation rather than matching a header.
const ClientVerifyMatch = "(ssl_client_verify)"

// rewrittenBeforeRouting says whether Envoy's connection manager replaces
// a request header before routing (X-Forwarded-For and -Proto for a
// client it does not trust, X-Request-ID, its own x-envoy-*): a route
// cannot match the client's.
func rewrittenBeforeRouting(header string) bool {
	switch header {
	case "x-forwarded-proto", "x-forwarded-for", "x-request-id":
		return true
	}
	return strings.HasPrefix(header, "x-envoy-")
}

var (
	staticTrue  = true
	staticFalse = false
)

func (t *translator) condition(d nginxconf.Directive, w way) (cond, error) {
	args := slices.Clone(d.Args)
	if len(args) == 0 || !strings.HasPrefix(args[0], "(") {
		return cond{}, t.refuse(d, "a condition not in parentheses")
	}
	args[0] = strings.TrimPrefix(args[0], "(")
	last := len(args) - 1
	if args[last] == ")" {
		args = args[:last]
	} else if strings.HasSuffix(args[last], ")") {
		args[last] = strings.TrimSuffix(args[last], ")")
	} else {
		return cond{}, t.refuse(d, "a condition not in parentheses")
	}
	if len(args) > 0 && args[0] == "" {
		args = args[1:]
	}
	if len(args) == 0 {
		return cond{}, t.refuse(d, "an empty condition")
	}
	if strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[0], "!-") {
		return cond{}, t.refuse(d, "%s tests the controller pod's files: not translated", args[0])
	}
	if !strings.HasPrefix(args[0], "$") {
		return cond{}, t.refuse(d, "a condition must start with a variable")
	}
	lhs := strings.TrimPrefix(args[0], "$")
	lhs = strings.TrimSuffix(strings.TrimPrefix(lhs, "{"), "}")
	if !isVariableName(lhs) {
		return cond{}, t.refuse(d, "%q is not a variable's name", lhs)
	}
	var op, rhs string
	switch len(args) {
	case 1:
	case 2:
		// "$a =b" is not split by nginx's tokenizer: refuse what is not
		// three arguments.
		return cond{}, t.refuse(d, "a condition of two arguments")
	case 3:
		op, rhs = args[1], args[2]
	default:
		return cond{}, t.refuse(d, "a condition of more than three arguments")
	}
	// A variable set gave: its value, if known at translation; one set
	// only on other ways is empty on this one.
	if _, ok := w.vars[lhs]; !ok && t.declared[lhs] {
		return t.staticCondition(d, "", op, rhs)
	}
	if v, ok := w.vars[lhs]; ok {
		if len(v) == 0 || len(v) == 1 && v[0].name == "" {
			text := ""
			if len(v) == 1 {
				text = v[0].text
			}
			return t.staticCondition(d, text, op, rhs)
		}
		if len(v) != 1 {
			return cond{}, t.refuse(d, "$%s: a condition on a value made of text and request variables: not translated", lhs)
		}
		lhs = v[0].name
	}
	if lhs == "uri" && t.uri != "" {
		return t.staticCondition(d, t.uri, op, rhs)
	}
	header, ok := conditionHeader(lhs)
	if lhs == "ssl_client_verify" {
		// Decided per host and listener by the front-end, which knows the
		// host's auth-tls (ClientVerifyMatch).
		header, ok = ClientVerifyMatch, true
	}
	if !ok {
		return cond{}, t.refuse(d, "variable $%s: %s", lhs, t.unknownVariable(lhs))
	}
	if rewrittenBeforeRouting(header) {
		return cond{}, t.refuse(d, "variable $%s: Envoy sets %s itself before it routes, so the condition would not read the client's, as nginx's does", lhs, header)
	}
	m := ir.HeaderMatch{Name: header, MissingIsEmpty: true}
	switch op {
	case "":
		// A variable alone holds when it is neither empty nor "0".
		m.Value.Regex = `(?s)[^0].*|0.+`
		return cond{match: m}, nil
	case "=", "!=":
		if strings.Contains(rhs, "$") {
			if err := t.nginxKnows(d, rhs); err != nil {
				return cond{}, err
			}
			return cond{}, t.refuse(d, "a comparison with a variable: not translated")
		}
		switch lhs {
		case "host":
			// $host is lower case: an upper-case text never equals it.
			if strings.ToLower(rhs) != rhs {
				c, err := t.staticCondition(d, "", "=", "x")
				if op == "!=" {
					c.static = &staticTrue
				}
				return c, err
			}
			m.Value.Regex = "(?i)" + regexp.QuoteMeta(rhs)
		case "uri":
			m.Value.Regex = regexp.QuoteMeta(rhs) + `(?:\?.*)?`
		default:
			if rhs == "" {
				m.Value.Regex = "" // empty: absent or empty
				m.Value.Exact = ""
				m.Invert = true
				m.Value.Regex = `(?s).+`
				if op == "!=" {
					m.Invert = false
				}
				return cond{match: m}, nil
			}
			m.Value.Exact = rhs
		}
		m.Invert = op == "!="
		return cond{match: m}, nil
	case "~", "~*", "!~", "!~*":
		re, err := compileRegex(rhs, strings.HasSuffix(op, "*"))
		if err != nil {
			return cond{}, t.refuse(d, "regular expression %q: %v", rhs, err)
		}
		if lhs == "uri" {
			m.Value.Regex = re.searchPath()
		} else {
			m.Value.Regex = re.search()
		}
		m.Invert = strings.HasPrefix(op, "!")
		c := cond{match: m}
		if !m.Invert && lhs == "uri" {
			c.re = re
		}
		return c, nil
	}
	return cond{}, t.refuse(d, "operator %q: not translated", op)
}

func (t *translator) staticCondition(d nginxconf.Directive, value, op, rhs string) (cond, error) {
	var holds bool
	switch op {
	case "":
		holds = value != "" && value != "0"
	case "=":
		holds = value == rhs
	case "!=":
		holds = value != rhs
	case "~", "~*", "!~", "!~*":
		re, err := compileRegex(rhs, strings.HasSuffix(op, "*"))
		if err != nil {
			return cond{}, t.refuse(d, "regular expression %q: %v", rhs, err)
		}
		holds = regexp.MustCompile(re.expr()).MatchString(value) != strings.HasPrefix(op, "!")
	default:
		return cond{}, t.refuse(d, "operator %q: not translated", op)
	}
	if strings.Contains(rhs, "$") {
		if op == "=" || op == "!=" {
			if err := t.nginxKnows(d, rhs); err != nil {
				return cond{}, err
			}
		}
		return cond{}, t.refuse(d, "a comparison with a variable: not translated")
	}
	if holds {
		return cond{static: &staticTrue}, nil
	}
	return cond{static: &staticFalse}, nil
}

// regex is an nginx regular expression (PCRE) that RE2 reads the same.
type regex struct {
	src string
	ci  bool
}

// compileRegex takes a PCRE expression that RE2 (Envoy's, and Go's
// regexp) reads alike, and refuses the rest (lookarounds, backreferences,
// possessive quantifiers).
func compileRegex(src string, ci bool) (*regex, error) {
	s := strings.ReplaceAll(src, "(?<", "(?P<")
	s = strings.ReplaceAll(s, "(?P<=", "(?<=") // a lookbehind, refused below
	s = strings.ReplaceAll(s, "(?P<!", "(?<!")
	if _, err := syntax.Parse(s, syntax.Perl); err != nil {
		return nil, fmt.Errorf("not an expression RE2 reads as PCRE does: %v", err)
	}
	if len(s) > 1024 {
		return nil, fmt.Errorf("longer than 1024 bytes")
	}
	return &regex{src: s, ci: ci}, nil
}

func (r *regex) group() string {
	if r.ci {
		return "(?i:" + r.src + ")"
	}
	return "(?:" + r.src + ")"
}

func (r *regex) expr() string { return r.group() }

// search matches a whole value where r matches somewhere in it, as nginx
// searches.
func (r *regex) search() string { return "(?s).*" + r.group() + ".*" }

// searchPath matches a whole :path (with its query) where r matches in the
// path without the query, as nginx's $uri: a "$" that ends r ends the
// path. (The path is the raw one, not nginx's decoded $uri.)
func (r *regex) searchPath() string {
	return "(?s)[^?]*?" + r.endingAtPath() + "[^?]*(?:\\?.*)?"
}

func (r *regex) endingAtPath() string {
	src := r.src
	if strings.HasSuffix(src, "$") && !strings.HasSuffix(src, `\$`) {
		src = strings.TrimSuffix(src, "$") + `(?:$|\?)`
		if r.ci {
			return "(?i:" + src + ")"
		}
		return "(?:" + src + ")"
	}
	return r.group()
}

// wholePath matches a whole path (no query) where r matches in it.
func (r *regex) wholePath() string { return ".*?" + r.group() + ".*" }

// captureStartsWithSlash says whether name is a capture of r ($1..$9)
// whose text starts with a / whenever r matches a path: it is part of
// every match and its expression starts with a literal /, or it opens r,
// anchored at the path's start (^), and cannot be empty, so that it
// starts with the path's own /.
func (r *regex) captureStartsWithSlash(name string) bool {
	n, err := strconv.Atoi(name)
	if err != nil || n < 1 || n > 9 {
		return false
	}
	re, err := syntax.Parse(r.src, syntax.Perl)
	if err != nil {
		return false
	}
	if re.Op == syntax.OpConcat && len(re.Sub) >= 2 && re.Sub[0].Op == syntax.OpBeginText &&
		re.Sub[1].Op == syntax.OpCapture && re.Sub[1].Cap == n && minLength(re.Sub[1]) > 0 {
		return true
	}
	c := findCapture(re, n)
	if c == nil {
		return false
	}
	first := c.Sub[0]
	for first.Op == syntax.OpConcat && len(first.Sub) > 0 {
		first = first.Sub[0]
	}
	return first.Op == syntax.OpLiteral && len(first.Rune) > 0 && first.Rune[0] == '/'
}

// findCapture is capture n of re where every match of re has it; nil
// when re has none, or has it in an alternative or an optional part,
// where it may match nothing and $n be empty.
func findCapture(re *syntax.Regexp, n int) *syntax.Regexp {
	if re.Op == syntax.OpCapture && re.Cap == n {
		return re
	}
	switch {
	case re.Op == syntax.OpConcat, re.Op == syntax.OpCapture, re.Op == syntax.OpPlus,
		re.Op == syntax.OpRepeat && re.Min > 0:
		for _, sub := range re.Sub {
			if c := findCapture(sub, n); c != nil {
				return c
			}
		}
	}
	return nil
}

// minLength is the fewest characters re matches.
func minLength(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLength(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLength(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLength(sub)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minLength(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // empty, anchors, boundaries, star, quest: none needed
}

// rewriteTo is an RE2 substitution that makes the whole path the
// replacement, its $1..$9 being r's captures; ok false for a replacement
// with other variables.
func (r *regex) rewriteTo(replacement []piece) (*ir.RegexRewrite, bool) {
	var b strings.Builder
	for _, p := range replacement {
		if p.name == "" {
			b.WriteString(strings.ReplaceAll(p.text, `\`, `\\`))
			continue
		}
		n, err := strconv.Atoi(p.name)
		if err != nil || n < 1 || n > 9 {
			return nil, false
		}
		b.WriteString(`\` + p.name)
	}
	return &ir.RegexRewrite{Pattern: "^" + r.wholePath() + "$", Substitution: b.String()}, true
}

// rewrite takes nginx's rewrite: when its expression matches the path,
// a redirect, or (break) the request forwarded with its path replaced.
func (t *translator) rewrite(d nginxconf.Directive, lv level, w way, ends *[]Branch) ([]way, error) {
	if len(d.Args) < 2 || len(d.Args) > 3 {
		return nil, t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	flag := ""
	if len(d.Args) == 3 {
		flag = d.Args[2]
	}
	re, err := compileRegex(d.Args[0], false)
	if err != nil {
		return nil, t.refuse(d, "regular expression %q: %v", d.Args[0], err)
	}
	repl := d.Args[1]
	if t.uri != "" {
		// Run again on a known path: the expression decides here.
		if regexp.MustCompile(re.expr()).MatchString(t.uri) {
			return nil, t.refuse(d, "it rewrites %s again", t.uri)
		}
		t.verdict(d, Translated, "")
		return []way{w}, nil
	}
	absolute := strings.HasPrefix(repl, "http://") || strings.HasPrefix(repl, "https://") || strings.HasPrefix(repl, "$scheme")
	var o Outcome
	switch {
	case flag == "redirect" || flag == "permanent" || absolute:
		code := uint32(302)
		if flag == "permanent" {
			code = 301
		}
		keepQuery := true
		if strings.HasSuffix(repl, "?") {
			repl, keepQuery = strings.TrimSuffix(repl, "?"), false
		}
		if strings.Contains(repl, "?") {
			return nil, t.refuse(d, "a replacement with its own query: not translated")
		}
		r, err := t.redirectTo(d, w, re, repl, code, keepQuery)
		if err != nil {
			return nil, err
		}
		o.Redirect = r
	case flag == "break" && lv != serverLevel:
		ps, err := pieces(repl)
		if err != nil || strings.Contains(repl, "?") {
			return nil, t.refuse(d, "replacement %q: not translated", repl)
		}
		rw, ok := re.rewriteTo(ps)
		if !ok || !strings.HasPrefix(repl, "/") {
			return nil, t.refuse(d, "replacement %q: only a path with the expression's captures is translated", repl)
		}
		o.Rewrite = rw
	case flag == "last" && lv == locationLevel:
		// nginx chooses the location again for the new path, which the
		// front-end does among the host's locations; Envoy routes once,
		// so the path must be known here.
		ps, err := pieces(repl)
		if err != nil || len(ps) != 1 || ps[0].name != "" || !strings.HasPrefix(repl, "/") || strings.Contains(repl, "?") {
			return nil, t.refuse(d, "replacement %q: a rewrite that selects the location again is translated to a literal path only, without a query", repl)
		}
		o.Rewrite, _ = re.rewriteTo(ps)
		o.Reselect = &Reselect{DirectiveRef: DirectiveRef{Directive: d.Name, Line: d.Line}, Path: repl}
	default:
		// No flag: nginx goes on with the next directives on the new
		// path before it chooses the location again; and a server's
		// rewrite chooses the location for the first time.
		return nil, t.refuse(d, "a rewrite that selects the location again without last, or outside a configuration-snippet: not translated")
	}
	m := ir.HeaderMatch{Name: ":path", Value: ir.StringMatch{Regex: re.searchPath()}}
	if matchesEveryPath(re.src) {
		// Matches every path: no condition.
		end(ends, w, o)
		t.verdict(d, Translated, "")
		return nil, nil
	}
	end(ends, w.with(m), o)
	not := m
	not.Invert = true
	t.verdict(d, Translated, "")
	return []way{w.with(not)}, nil
}

// matchesEveryPath says whether src is one of the expressions people write
// to match every path, so that the rewrite needs no condition.
func matchesEveryPath(src string) bool {
	switch src {
	case "^", "^(.*)$", "^/(.*)$", "^(.*)", "^/(.*)", ".*", "^.*$", "^/":
		return true
	}
	return false
}

// returnOutcome takes nginx's return.
func (t *translator) returnOutcome(d nginxconf.Directive, w way) (Outcome, error) {
	if len(d.Args) == 0 || len(d.Args) > 2 {
		return Outcome{}, t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	code, err := strconv.Atoi(d.Args[0])
	if err != nil {
		if len(d.Args) == 1 {
			// return URL: a 302.
			u := d.Args[0]
			if !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "$scheme")) {
				return Outcome{}, t.refuse(d, "%q is neither a status nor an http(s) URL", u)
			}
			r, err := t.redirectTo(d, w, w.re, u, 302, false)
			return Outcome{Redirect: r}, err
		}
		return Outcome{}, t.refuse(d, "status %q is not a number", d.Args[0])
	}
	text := ""
	if len(d.Args) == 2 {
		text = d.Args[1]
	}
	switch {
	case code == 444:
		return Outcome{}, t.refuse(d, "444 closes the connection without an answer, which Envoy cannot")
	case code == 301 || code == 302 || code == 303 || code == 307 || code == 308:
		if text == "" {
			return Outcome{}, t.refuse(d, "a redirect without a URL: not translated")
		}
		r, err := t.redirectTo(d, w, w.re, text, uint32(code), false)
		return Outcome{Redirect: r}, err
	case code < 200 || code > 599:
		return Outcome{}, t.refuse(d, "status %d: not translated", code)
	}
	if hasControlExceptLines(text) {
		return Outcome{}, t.refuse(d, "the text holds control characters")
	}
	ps, err := pieces(text)
	if err != nil {
		return Outcome{}, t.refuse(d, "%v", err)
	}
	for _, p := range ps {
		if p.name != "" {
			return Outcome{}, t.refuse(d, "variable $%s in the text: not translated", p.name)
		}
	}
	o := Outcome{Direct: &ir.DirectResponse{Status: uint32(code), Body: text}}
	if text != "" {
		// nginx's default_type, which ingress-nginx's template writes
		// from the ConfigMap's default-type.
		o.Direct.ContentType = cmp.Or(t.opts.DefaultType, "text/html")
	}
	return o, nil
}

func hasControlExceptLines(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || r == 0x7f })
}

// redirectTo is a redirect to an nginx URL: the request's parts where the
// URL names them by variable ($scheme, $host, $request_uri, $uri,
// $is_args$args), captures ($1...) of re in the path, the rest as
// written. keepQuery appends the request's query (rewrite's own).
func (t *translator) redirectTo(d nginxconf.Directive, w way, re *regex, url string, code uint32, keepQuery bool) (*ir.Redirect, error) {
	if hasControl(url) {
		return nil, t.refuse(d, "the URL holds control characters")
	}
	ps, err := pieces(url)
	if err != nil {
		return nil, t.refuse(d, "%v", err)
	}
	// Variables set gave, known as text, are their text.
	var expanded []piece
	for _, p := range ps {
		if v, ok := w.vars[p.name]; ok && p.name != "" {
			for _, q := range v {
				if q.name != "" {
					return nil, t.refuse(d, "$%s: a redirect to a value set from the request: not translated", p.name)
				}
			}
			expanded = append(expanded, v...)
			continue
		}
		expanded = append(expanded, p)
	}
	ps = expanded
	r := &ir.Redirect{Code: code}
	// Scheme.
	rest := ps
	switch {
	case len(rest) > 0 && rest[0].name == "scheme":
		if len(rest) < 2 || rest[1].name != "" || !strings.HasPrefix(rest[1].text, "://") {
			return nil, t.refuse(d, "URL %q: not translated", url)
		}
		rest = append([]piece{{text: strings.TrimPrefix(rest[1].text, "://")}}, rest[2:]...)
	case len(rest) > 0 && rest[0].name == "" && strings.HasPrefix(rest[0].text, "https://"):
		r.Scheme = "https"
		rest = append([]piece{{text: strings.TrimPrefix(rest[0].text, "https://")}}, rest[1:]...)
	case len(rest) > 0 && rest[0].name == "" && strings.HasPrefix(rest[0].text, "http://"):
		r.Scheme = "http"
		rest = append([]piece{{text: strings.TrimPrefix(rest[0].text, "http://")}}, rest[1:]...)
	case len(rest) > 0 && rest[0].name == "" && strings.HasPrefix(rest[0].text, "/"),
		len(rest) > 0 && re != nil && re.captureStartsWithSlash(rest[0].name):
		// A path: nginx writes it out with the request's scheme and host,
		// or as it is under absolute_redirect off. A replacement that
		// starts with a capture is one where the capture starts with a /
		// ($1/ of ^(.*[^/])$, adding a trailing slash).
		t.contextual = true
		r, err := t.redirectPath(d, r, re, rest, url, keepQuery)
		if err != nil || !t.opts.RelativeRedirects {
			return r, err
		}
		if r.Path != "" && r.StripQuery {
			// A fixed path: sent as written.
			return &ir.Redirect{Location: r.Path, Code: r.Code}, nil
		}
		r.Relative = true
		return r, nil
	default:
		return nil, t.refuse(d, "URL %q: neither http(s):// nor a path", url)
	}
	if rest[0].text == "" {
		rest = rest[1:]
	}
	// Host.
	if len(rest) == 0 {
		return nil, t.refuse(d, "URL %q without a host", url)
	}
	switch {
	case rest[0].name == "host" || rest[0].name == "http_host":
		rest = rest[1:]
	case rest[0].name == "":
		host, path, found := strings.Cut(rest[0].text, "/")
		if host == "" || strings.ContainsAny(host, "?#@ ") {
			return nil, t.refuse(d, "URL %q: host %q", url, host)
		}
		if h, p, ok := strings.Cut(host, ":"); ok {
			port, err := strconv.Atoi(p)
			if err != nil || port < 1 || port > 65535 {
				return nil, t.refuse(d, "URL %q: port %q", url, p)
			}
			host, r.Port = h, uint32(port)
		}
		r.Host = strings.ToLower(host)
		rest = rest[1:]
		if found {
			rest = append([]piece{{text: "/" + path}}, rest...)
		}
	default:
		return nil, t.refuse(d, "URL %q: host $%s: not translated", url, rest[0].name)
	}
	if len(rest) == 0 {
		// No path: the URL's root.
		r.Path = "/"
		r.StripQuery = !keepQuery
		return r, nil
	}
	return t.redirectPath(d, r, re, rest, url, keepQuery)
}

// redirectPath sets the redirect's path (and query) from the URL's path
// pieces.
func (t *translator) redirectPath(d nginxconf.Directive, r *ir.Redirect, re *regex, rest []piece, url string, keepQuery bool) (*ir.Redirect, error) {
	// $is_args$args (or ?$args) at the end keeps the query.
	n := len(rest)
	switch {
	case n >= 2 && rest[n-2].name == "is_args" && rest[n-1].name == "args":
		keepQuery, rest = true, rest[:n-2]
	case n >= 2 && rest[n-2].name == "" && strings.HasSuffix(rest[n-2].text, "?") && rest[n-1].name == "args":
		keepQuery = true
		rest = append(slices.Clone(rest[:n-2]), piece{text: strings.TrimSuffix(rest[n-2].text, "?")})
		if rest[len(rest)-1].text == "" {
			rest = rest[:len(rest)-1]
		}
	}
	if len(rest) == 1 && rest[0].name == "request_uri" {
		// The request's path and query, as they came.
		return r, nil
	}
	if len(rest) == 1 && rest[0].name == "uri" {
		r.StripQuery = !keepQuery
		return r, nil
	}
	literal := true
	for _, p := range rest {
		if p.name != "" {
			literal = false
		}
		if strings.ContainsAny(p.text, "?#") {
			return nil, t.refuse(d, "URL %q: a query or fragment written out: not translated", url)
		}
	}
	if literal {
		var b strings.Builder
		for _, p := range rest {
			b.WriteString(p.text)
		}
		if b.Len() == 0 || !strings.HasPrefix(b.String(), "/") {
			return nil, t.refuse(d, "URL %q: path %q", url, b.String())
		}
		r.Path, r.StripQuery = b.String(), !keepQuery
		return r, nil
	}
	// A path with the request's path in it: $request_uri or $uri after a
	// prefix, or captures.
	n = len(rest)
	if rest[n-1].name == "request_uri" || rest[n-1].name == "uri" {
		prefix := rest[:n-1]
		for _, p := range prefix {
			if p.name != "" {
				return nil, t.refuse(d, "URL %q: variable $%s in the path: not translated", url, p.name)
			}
		}
		if rest[n-1].name == "request_uri" {
			keepQuery = true
		}
		whole := &regex{src: "^(.*)$"}
		rw, _ := whole.rewriteTo(append(slices.Clone(prefix), piece{name: "1"}))
		rw.Pattern = "^(.*)$"
		r.PathRegex, r.StripQuery = rw, !keepQuery
		return r, nil
	}
	if re == nil {
		for _, p := range rest {
			if p.name != "" {
				return nil, t.refuse(d, "URL %q: variable $%s: not translated", url, p.name)
			}
		}
	}
	rw, ok := re.rewriteTo(rest)
	if !ok {
		for _, p := range rest {
			if p.name != "" {
				if _, err := strconv.Atoi(p.name); err != nil {
					return nil, t.refuse(d, "URL %q: variable $%s: not translated", url, p.name)
				}
			}
		}
		return nil, t.refuse(d, "URL %q: not translated", url)
	}
	if !strings.HasPrefix(rw.Substitution, "/") && !re.captureStartsWithSlash(rest[0].name) {
		return nil, t.refuse(d, "URL %q: the path does not start with /", url)
	}
	r.PathRegex, r.StripQuery = rw, !keepQuery
	return r, nil
}

// mentions says whether a directive of ds (or of their blocks) has s in
// an argument.
func mentions(ds []nginxconf.Directive, s string) bool {
	for _, d := range ds {
		for _, a := range d.Args {
			if strings.Contains(a, s) {
				return true
			}
		}
		if mentions(d.Block, s) {
			return true
		}
	}
	return false
}
