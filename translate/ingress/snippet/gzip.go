package snippet

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Gzip are one level's gzip directives (ngx_http_gzip_module): the http
// block's (the ConfigMap's use-gzip keys), a server's (a server-snippet)
// or a location's (a configuration-snippet). A field left zero is not set
// at that level, and the outer level's holds (Under), as nginx inherits
// each directive on its own.
type Gzip struct {
	// On is gzip on or off; nil: not set.
	On *bool `json:",omitempty"`
	// Level is gzip_comp_level, 1 to 9; 0: not set.
	Level int `json:",omitempty"`
	// MinLength is gzip_min_length in bytes; nil: not set.
	MinLength *uint32 `json:",omitempty"`
	// Types are gzip_types' media types, lower case (text/html, which
	// nginx adds to every gzip_types, among them), or "*" alone; nil:
	// not set.
	Types []string `json:",omitempty"`
	// SkipUserAgent and SkipMSIE6 are gzip_disable's: an RE2 expression
	// of the User-Agents whose responses are not compressed, and
	// msie6's mask (ir.Compression); empty and false: not set.
	SkipUserAgent string `json:",omitempty"`
	SkipMSIE6     bool   `json:",omitempty"`
}

// nginx's own defaults, where no level sets the directive
// (ngx_http_gzip_filter_module.c): gzip_comp_level 1, gzip_min_length 20,
// gzip_types text/html.
const (
	nginxGzipLevel     = 1
	nginxGzipMinLength = 20
)

// IsZero says whether the level sets no gzip directive.
func (g Gzip) IsZero() bool {
	return g.On == nil && g.Level == 0 && g.MinLength == nil && g.Types == nil && g.SkipUserAgent == "" && !g.SkipMSIE6
}

// Under is g with outer's directives where g sets none.
func (g Gzip) Under(outer Gzip) Gzip {
	if g.On == nil {
		g.On = outer.On
	}
	if g.Level == 0 {
		g.Level = outer.Level
	}
	if g.MinLength == nil {
		g.MinLength = outer.MinLength
	}
	if g.Types == nil {
		g.Types = outer.Types
	}
	if g.SkipUserAgent == "" && !g.SkipMSIE6 {
		g.SkipUserAgent, g.SkipMSIE6 = outer.SkipUserAgent, outer.SkipMSIE6
	}
	return g
}

// Compression is what the directives ask of a location, with nginx's
// defaults for those no level sets; nil when gzip is off.
func (g Gzip) Compression() *ir.Compression {
	if g.On == nil || !*g.On {
		return nil
	}
	c := &ir.Compression{Level: g.Level, MinLength: nginxGzipMinLength, ContentTypes: g.Types, SkipUserAgent: g.SkipUserAgent, SkipMSIE6: g.SkipMSIE6}
	if c.Level == 0 {
		c.Level = nginxGzipLevel
	}
	if g.MinLength != nil {
		c.MinLength = *g.MinLength
	}
	if c.ContentTypes == nil {
		c.ContentTypes = []string{"text/html"}
	}
	return c
}

// GzipTypes reads gzip_types' arguments (or the ConfigMap's gzip-types,
// split at white space) as nginx does: lower case, text/html added, "*"
// for every type; ok is false for one that is no type/subtype.
func GzipTypes(args []string) (types []string, bad string, ok bool) {
	out := []string{"text/html"}
	for _, a := range args {
		if a == ir.AnyContentType {
			return []string{ir.AnyContentType}, "", true
		}
		t := strings.ToLower(a)
		if !ir.ValidMediaType(t) {
			return nil, a, false
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out), "", true
}

// ParseSize reads an nginx size (ngx_parse_size): bytes, or k, m or g of
// them.
func ParseSize(s string) (uint32, bool) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "m") || strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "g") || strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n*mult > 1<<32-1 {
		return 0, false
	}
	return uint32(n * mult), true
}

// isGzipDirective says whether name is one of ngx_http_gzip_module's
// directives.
func isGzipDirective(name string) bool { return name == "gzip" || strings.HasPrefix(name, "gzip_") }

// gzip translates one of the gzip module's directives into the block's
// settings, which the front-end resolves with the outer levels'.
func (t *translator) gzip(g *Gzip, seen map[string]bool, d nginxconf.Directive, lv level) error {
	if lv == snippetLocation {
		return t.refuse(d, "compression in a snippet's location block: not translated")
	}
	if seen[d.Name] && d.Name != "gzip_types" {
		return t.refuse(d, "is duplicate: nginx refuses it")
	}
	seen[d.Name] = true
	onOff := func() (bool, bool) {
		if len(d.Args) != 1 || d.Args[0] != "on" && d.Args[0] != "off" {
			return false, false
		}
		return d.Args[0] == "on", true
	}
	switch d.Name {
	case "gzip":
		on, ok := onOff()
		if !ok {
			return t.refuse(d, "gzip takes on or off")
		}
		g.On = &on
		if on {
			t.verdict(d, Translated, "responses gzipped (Envoy's compressor) for the clients that accept gzip, as nginx's gzip with ingress-nginx's use-gzip settings "+
				"(gzip_proxied any, gzip_vary on); without the ConfigMap's use-gzip nginx's defaults differ: a request through a proxy (Via) is compressed here, not by nginx, and Vary is added")
		} else {
			t.verdict(d, Translated, "responses not compressed here")
		}
	case "gzip_comp_level":
		n, err := strconv.Atoi(strings.Join(d.Args, " "))
		if err != nil || n < 1 || n > 9 {
			return t.refuse(d, "gzip_comp_level takes 1 to 9: nginx refuses it")
		}
		g.Level = n
		t.verdict(d, Translated, "")
	case "gzip_min_length":
		if len(d.Args) != 1 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		n, ok := ParseSize(d.Args[0])
		if !ok {
			return t.refuse(d, "not a size: nginx refuses it")
		}
		g.MinLength = &n
		t.verdict(d, Translated, "a response with a smaller Content-Length is not compressed; one without is")
	case "gzip_types":
		if len(d.Args) == 0 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		types, bad, ok := GzipTypes(d.Args)
		if !ok {
			return t.refuse(d, "%q: not a media type (type/subtype) translated", bad)
		}
		if g.Types != nil && !(len(g.Types) == 1 && g.Types[0] == ir.AnyContentType) {
			// A second gzip_types adds to the first.
			prev := slices.Clone(g.Types)
			if len(types) == 1 && types[0] == ir.AnyContentType {
				prev = types
			} else {
				prev = append(prev, types...)
				slices.Sort(prev)
				prev = slices.Compact(prev)
			}
			types = prev
		}
		g.Types = types
		t.verdict(d, Translated, "the Content-Type without its parameters, in any case (text/html always)")
	case "gzip_vary":
		on, ok := onOff()
		if !ok {
			return t.refuse(d, "gzip_vary takes on or off")
		}
		if !on {
			return t.refuse(d, "off: Envoy's compressor always adds Vary: Accept-Encoding")
		}
		t.verdict(d, Translated, "Envoy's compressor adds Vary: Accept-Encoding to every response it could compress")
	case "gzip_proxied":
		if len(d.Args) != 1 || d.Args[0] != "any" {
			return t.refuse(d, "only gzip_proxied any is translated (Envoy's compressor does not read Via)")
		}
		t.verdict(d, Translated, "a request that came through a proxy is compressed as any other")
	case "gzip_http_version":
		if len(d.Args) != 1 || d.Args[0] != "1.0" && d.Args[0] != "1.1" {
			return t.refuse(d, "gzip_http_version takes 1.0 or 1.1: nginx refuses it")
		}
		t.verdict(d, NoEffect, "Envoy refuses HTTP/1.0 requests (426) and compresses HTTP/1.1 and HTTP/2")
	case "gzip_buffers":
		t.verdict(d, NoEffect, "nginx's buffers for compressing; Envoy's are its own")
	default:
		return t.refuse(d, "not translated")
	}
	return nil
}
