package snippet

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// sub_filter and its settings (ngx_http_sub_filter_module) replace text in
// the bodies of the location's responses. They are translated in a
// configuration-snippet (and the ConfigMap's location-snippet), where
// they hold for the Ingress's locations alone. In a server snippet every
// location of the host, whoever's, would inherit them, and a snippet
// location answers itself: refused there.

// isSubFilterDirective says whether name is one of the module's
// directives.
func isSubFilterDirective(name string) bool {
	switch name {
	case "sub_filter", "sub_filter_once", "sub_filter_types", "sub_filter_last_modified":
		return true
	}
	return false
}

// subFilters are one block's sub_filter directives, gathered as nginx
// merges them into the location's configuration.
type subFilters struct {
	pairs []ir.Replace
	// once and lastModified: nil where the block does not set them.
	once, lastModified *bool
	// types are sub_filter_types' lowered; all: "*" was among them.
	types    []string
	all      bool
	typesSet bool
	// at are the directives, in order, whose verdicts wait for the
	// block's end: they depend on whether it has a sub_filter.
	at []nginxconf.Directive
}

// subFilter reads one of the module's directives into s.
func (t *translator) subFilter(s *subFilters, d nginxconf.Directive, lv level) error {
	switch lv {
	case serverLevel:
		return t.refuse(d, "in a server snippet, where every location of the host would inherit it: not translated")
	case snippetLocation:
		return t.refuse(d, "in a snippet's location block: not translated")
	}
	for _, a := range d.Args {
		if !utf8.ValidString(a) {
			return t.refuse(d, "an argument is not UTF-8: not translated")
		}
	}
	flag := func(p **bool) error {
		if *p != nil {
			return t.refuse(d, "is duplicate: nginx refuses it")
		}
		if len(d.Args) != 1 || d.Args[0] != "on" && d.Args[0] != "off" {
			return t.refuse(d, "it must be on or off: nginx refuses it")
		}
		on := d.Args[0] == "on"
		*p = &on
		return nil
	}
	switch d.Name {
	case "sub_filter":
		if len(d.Args) != 2 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		if d.Args[0] == "" {
			return t.refuse(d, "empty search pattern: nginx refuses it")
		}
		if len(s.pairs) == ir.MaxBodyPairs {
			return t.refuse(d, "number of search patterns exceeds %d: nginx refuses it", ir.MaxBodyPairs)
		}
		for _, a := range d.Args {
			if err := t.literal(d, a); err != nil {
				return err
			}
		}
		// nginx lowers the text it looks for and compares the body's
		// bytes lowered (ngx_http_sub_filter, ngx_http_sub_match).
		s.pairs = append(s.pairs, ir.Replace{From: asciiLower(d.Args[0]), To: d.Args[1]})
	case "sub_filter_once":
		if err := flag(&s.once); err != nil {
			return err
		}
	case "sub_filter_last_modified":
		if err := flag(&s.lastModified); err != nil {
			return err
		}
	case "sub_filter_types":
		// ngx_http_types_slot: every directive adds its types (a second
		// is no duplicate); "*" takes every type, after which the rest
		// are ignored.
		if len(d.Args) == 0 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		s.typesSet = true
		for _, a := range d.Args {
			if s.all {
				break
			}
			if a == "*" {
				s.all = true
				break
			}
			typ := asciiLower(a)
			if !isMediaType(typ) {
				return t.refuse(d, "%q is not a media type: not translated", a)
			}
			if typ != "text/html" && !slices.Contains(s.types, typ) {
				s.types = append(s.types, typ)
			}
		}
	}
	s.at = append(s.at, d)
	return nil
}

// literal refuses a sub_filter text that holds a variable: nginx would
// work it out for each request, which is not translated.
func (t *translator) literal(d nginxconf.Directive, a string) error {
	if err := t.nginxKnows(d, a); err != nil {
		return err
	}
	ps, _ := pieces(a) // nginxKnows has read it whole
	for _, p := range ps {
		if p.name != "" {
			return t.refuse(d, "variable $%s: a text worked out for each request: not translated", p.name)
		}
	}
	return nil
}

// result is the block's body substitution, nil without a sub_filter, and
// the verdicts of its directives.
func (t *translator) subFilterResult(s *subFilters) *ir.BodySubstitution {
	if len(s.pairs) == 0 {
		for _, d := range s.at {
			t.verdict(d, NoEffect, "without a sub_filter in the location there is nothing to replace")
		}
		return nil
	}
	for _, d := range s.at {
		note := ""
		if d.Name == "sub_filter" {
			note = "in the bodies of the responses of its types, held whole: one past Envoy's buffer limit (1 MiB) is answered 500, where nginx streams it"
		}
		t.verdict(d, Translated, note)
	}
	b := &ir.BodySubstitution{Pairs: s.pairs, Once: s.once == nil || *s.once}
	b.KeepLastModified = s.lastModified != nil && *s.lastModified
	if s.all {
		b.Types = []string{"*"}
	} else {
		b.Types = s.types
	}
	return b
}

// asciiLower lowers ASCII letters alone, as nginx's ngx_strlow does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isMediaType says whether t is type/subtype, each an HTTP token.
func isMediaType(t string) bool {
	typ, sub, ok := strings.Cut(t, "/")
	return ok && isToken(typ) && isToken(sub)
}
