package snippet

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// cookieFlags reads proxy_cookie_flags off | cookie [flag ...]
// (ngx_http_proxy_module, nginx 1.19.3 on:
// https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_cookie_flags):
// the flags of the upstream's Set-Cookie lines whose name matches, the
// first matching directive of the block applying. nginx reads it in http,
// server and location blocks, not in an if; a block's list replaces the
// outer one's whole, and off (alone in its block) cancels it
// (ngx_http_proxy_cookie_flags, ngx_conf_merge_ptr_value in
// ngx_http_proxy_merge_loc_conf). ingress-nginx's template writes none,
// so a configuration-snippet's is the location's only one.
func (t *translator) cookieFlags(res *Result, off *bool, d nginxconf.Directive, lv level) error {
	if len(d.Args) < 1 || len(d.Args) > 4 {
		return t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	if *off {
		return t.refuse(d, "after proxy_cookie_flags off in the same block: nginx refuses it (is duplicate)")
	}
	if len(d.Args) == 1 {
		if d.Args[0] != "off" {
			return t.refuse(d, "invalid parameter %q (a cookie needs a flag, or off alone): nginx refuses it", d.Args[0])
		}
		if res.CookieFlagsAt != nil {
			return t.refuse(d, "off after another proxy_cookie_flags of the block: nginx refuses it (is duplicate)")
		}
		*off = true
		res.CookieFlagsAt = &DirectiveRef{Directive: d.Name, Line: d.Line}
		if lv == serverLevel {
			return t.refuse(d, "in a server-snippet: not translated")
		}
		t.verdict(d, NoEffect, "it cancels the outer levels' proxy_cookie_flags, and none reaches the location")
		return nil
	}
	name, err := cookieName(d.Args[0])
	if err != nil {
		return t.refuse(d, "cookie %q: %v", d.Args[0], err)
	}
	var flags []ir.CookieFlag
	var ignored []string
	for _, a := range d.Args[1:] {
		ps, err := pieces(a)
		if err != nil {
			return t.refuse(d, "flag %q: %v", a, err)
		}
		if len(ps) > 1 || len(ps) == 1 && ps[0].name != "" {
			return t.refuse(d, "flag %q: a variable: not translated", a)
		}
		f := ir.CookieFlag(strings.ToLower(a))
		if !isCookieFlag(f) {
			// ngx_http_proxy_rewrite_cookie_flags evaluates the flags
			// at run time and skips one it does not know (a debug log
			// line); the directive still matches and ends the search.
			ignored = append(ignored, a)
			continue
		}
		flags = append(flags, f)
	}
	if res.CookieFlagsAt == nil {
		res.CookieFlagsAt = &DirectiveRef{Directive: d.Name, Line: d.Line}
	}
	switch lv {
	case serverLevel:
		return t.refuse(d, "in a server-snippet (every location of the host without its own would inherit it): not translated")
	case snippetLocation:
		t.verdict(d, NoEffect, "the location answers every request itself: nothing is proxied")
		return nil
	}
	res.CookieFlags = append(res.CookieFlags, ir.CookieFlagsRule{Cookie: name, Flags: flags})
	note := "on the backend's Set-Cookie lines (not those of add_header, more_set_headers or session affinity), the block's first matching proxy_cookie_flags applying"
	if len(ignored) > 0 {
		note += fmt.Sprintf("; %s: nginx knows no such flag and ignores it", strings.Join(ignored, ", "))
	}
	t.verdict(d, Translated, note)
	return nil
}

// isCookieFlag says whether nginx knows f (ngx_http_proxy_cookie_flags_masks,
// compared in any case).
func isCookieFlag(f ir.CookieFlag) bool { return slices.Contains(ir.CookieFlags(), f) }

// cookieName is what proxy_cookie_flags's cookie argument matches: a
// name, which nginx compares in any case, or after "~" a regular
// expression, which nginx compiles caseless (its "~" is the only form:
// there is no "~*") and searches in the name. Envoy's Lua has no regular
// expressions, so an expression is translated where it amounts to a
// test on the name as text: the whole name (^name$), its start (^name),
// its end (name$), any part (name), or every cookie ("~" alone, or "^").
func cookieName(arg string) (ir.CookieName, error) {
	src, isRegex := strings.CutPrefix(arg, "~")
	if !isRegex {
		ps, err := pieces(arg)
		if err != nil {
			return ir.CookieName{}, fmt.Errorf("%v: nginx refuses it", err)
		}
		if len(ps) > 1 || len(ps) == 1 && ps[0].name != "" {
			return ir.CookieName{}, fmt.Errorf("a variable: not translated")
		}
		if !cookieText(arg) {
			return ir.CookieName{}, fmt.Errorf("not a cookie name (printable ASCII without spaces or \";\"): not translated")
		}
		return ir.CookieName{Match: ir.CookieNameExact, Text: arg}, nil
	}
	if strings.HasPrefix(src, "*") {
		return ir.CookieName{}, fmt.Errorf("proxy_cookie_flags has no \"~*\" (its \"~\" is already caseless): nginx reads %q as the expression and refuses it", src)
	}
	if _, err := compileRegex(src, true); err != nil {
		return ir.CookieName{}, fmt.Errorf("regular expression %q: %v", src, err)
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return ir.CookieName{}, fmt.Errorf("regular expression %q: %v", src, err)
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	start, end := false, false
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		start, subs = true, subs[1:]
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		end, subs = true, subs[:len(subs)-1]
	}
	text := ""
	switch {
	case len(subs) == 0:
	case len(subs) == 1 && subs[0].Op == syntax.OpEmptyMatch:
	case len(subs) == 1 && subs[0].Op == syntax.OpLiteral:
		text = string(subs[0].Rune)
	default:
		return ir.CookieName{}, fmt.Errorf("regular expression %q: only a literal name, ^ and $ are translated (Envoy's Lua filter has no regular expressions)", src)
	}
	if text != "" && !cookieText(text) {
		return ir.CookieName{}, fmt.Errorf("regular expression %q: its text is not printable ASCII without spaces or \";\": not translated", src)
	}
	switch {
	case start && end && text == "":
		return ir.CookieName{}, fmt.Errorf("regular expression %q: it matches a cookie without a name alone: not translated", src)
	case start && end:
		return ir.CookieName{Match: ir.CookieNameExact, Text: text}, nil
	case start:
		return ir.CookieName{Match: ir.CookieNamePrefix, Text: text}, nil
	case end:
		return ir.CookieName{Match: ir.CookieNameSuffix, Text: text}, nil
	}
	return ir.CookieName{Match: ir.CookieNameContains, Text: text}, nil
}

// cookieText says whether s may be a cookie name's text in the IR.
func cookieText(s string) bool {
	return !strings.ContainsFunc(s, func(c rune) bool { return c < 0x21 || c > 0x7e || c == ';' })
}
