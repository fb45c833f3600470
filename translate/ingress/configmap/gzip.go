package configmap

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's defaults of the gzip keys
// (internal/ingress/controller/config/config.go).
const (
	nginxGzipLevel     = 1
	nginxGzipMinLength = 256
	nginxGzipTypes     = "application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component"
)

// gzipKeys are the gzip keys read, until Parse makes the http level of
// them: nginx.tmpl writes gzip_comp_level, gzip_min_length and gzip_types
// in its http block only with use-gzip.
type gzipKeys struct {
	on        bool
	level     int    // 0: unset
	minLength *int64 // nil: unset
	types     []string
	// skipUserAgent and skipMSIE6 are gzip-disable (gzipDisable).
	skipUserAgent string
	skipMSIE6     bool
}

func useGzip(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.gzip.on, value) // connections.go
}

func gzipLevel(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 1 || n > 9 {
		return fmt.Errorf("not a level from 1 to 9 (nginx refuses the configuration): treated as unset (1)")
	}
	s.gzip.level = n
	return nil
}

func gzipMinLength(_ *Table, s *Settings, _, value string) error {
	return minLengthKey(&s.gzip.minLength, value, nginxGzipMinLength)
}

func gzipTypes(_ *Table, s *Settings, _, value string) error {
	return typesKey(&s.gzip.types, value)
}

// gzipDisable reads gzip-disable as nginx.tmpl writes it, gzip_disable
// "value": one argument, nginx's msie6 mask or a regular expression
// (PCRE, which RE2 must read alike: lookarounds and backreferences are
// reported, the key treated as unset).
func gzipDisable(_ *Table, s *Settings, _, value string) error {
	v := strings.TrimSpace(value)
	switch {
	case v == "":
		return nil
	case v == "msie6":
		s.gzip.skipMSIE6 = true
		return nil
	case !utf8.ValidString(v) || len(v) > ir.MaxRegexLength:
		return fmt.Errorf("not an expression RE2 can take: treated as unset (every client's responses compressed)")
	}
	if _, err := syntax.Parse(v, syntax.Perl); err != nil {
		return fmt.Errorf("not an expression RE2 reads as PCRE does (%v): treated as unset (every client's responses compressed)", err)
	}
	s.gzip.skipUserAgent = v
	return nil
}

// minLengthKey reads a minimum length of bytes (gzip-min-length,
// brotli-min-length) into *to; one that does not parse leaves it unset.
func minLengthKey(to **int64, value string, unset int) error {
	n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil || n < 0 || n > 1<<32-1 {
		return fmt.Errorf("not a number of bytes: treated as unset (%d)", unset)
	}
	*to = &n
	return nil
}

// typesKey reads a list of media types (gzip-types, brotli-types) as
// nginx reads gzip_types' and brotli_types' arguments: text/html always
// among them, * for every type.
func typesKey(to *[]string, value string) error {
	types, bad, ok := snippet.GzipTypes(strings.Fields(value))
	if !ok || len(strings.Fields(value)) == 0 {
		return fmt.Errorf("%q is not a media type (type/subtype): treated as unset (ingress-nginx's list)", bad)
	}
	*to = types
	return nil
}

// httpLevel is what nginx.tmpl writes in the http block: with use-gzip,
// gzip on and the keys' values or ingress-nginx's defaults; without it,
// nothing (nginx's own defaults hold for a snippet's gzip on).
func (g gzipKeys) httpLevel() snippet.Gzip {
	if !g.on {
		return snippet.Gzip{}
	}
	on := true
	out := snippet.Gzip{On: &on, Level: nginxGzipLevel, Types: g.types, SkipUserAgent: g.skipUserAgent, SkipMSIE6: g.skipMSIE6}
	if g.level != 0 {
		out.Level = g.level
	}
	n := uint32(nginxGzipMinLength)
	if g.minLength != nil {
		n = uint32(*g.minLength)
	}
	out.MinLength = &n
	if out.Types == nil {
		out.Types, _, _ = snippet.GzipTypes(strings.Fields(nginxGzipTypes))
	}
	return out
}

// finishGzip sets the http level and what it asks of a location that
// sets nothing of its own.
func (s *Settings) finishGzip() {
	s.Gzip = s.gzip.httpLevel()
	s.Compression = s.Gzip.Compression()
}
