package configmap

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's defaults of the brotli keys
// (internal/ingress/controller/config/config.go).
const (
	nginxBrotliLevel     = 4
	nginxBrotliMinLength = 20
	nginxBrotliTypes     = "application/xml+rss application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component"
)

// brotliKeys are the brotli keys read, until Parse makes Settings.Brotli
// of them: nginx.tmpl writes brotli, brotli_comp_level,
// brotli_min_length and brotli_types in its http block with
// enable-brotli only.
type brotliKeys struct {
	on        bool
	level     *int   // nil: unset
	minLength *int64 // nil: unset
	types     []string
}

func enableBrotli(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.brotli.on, value) // connections.go
}

func brotliLevel(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 0 || n > ir.BrotliMaxLevel {
		return fmt.Errorf("not a level from 0 to %d (nginx refuses the configuration): treated as unset (%d)", ir.BrotliMaxLevel, nginxBrotliLevel)
	}
	s.brotli.level = &n
	return nil
}

func brotliMinLength(_ *Table, s *Settings, _, value string) error {
	return minLengthKey(&s.brotli.minLength, value, nginxBrotliMinLength) // gzip.go
}

func brotliTypes(_ *Table, s *Settings, _, value string) error {
	return typesKey(&s.brotli.types, value) // gzip.go
}

// compression is what the keys ask of every route: nil without
// enable-brotli, else the keys' values or ingress-nginx's defaults.
func (b brotliKeys) compression() *ir.Compression {
	if !b.on {
		return nil
	}
	c := &ir.Compression{Level: nginxBrotliLevel, MinLength: nginxBrotliMinLength, ContentTypes: b.types}
	if b.level != nil {
		c.Level = *b.level
	}
	if b.minLength != nil {
		c.MinLength = uint32(*b.minLength)
	}
	if c.ContentTypes == nil {
		c.ContentTypes, _, _ = snippet.GzipTypes(strings.Fields(nginxBrotliTypes))
	}
	return c
}
