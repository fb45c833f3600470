package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Compression gzips a route's responses for the clients that accept gzip,
// as nginx's gzip module does (ngx_http_gzip_filter_module, with
// ingress-nginx's use-gzip settings: gzip_proxied any, gzip_vary on).
//
// It is a route's (RoutePolicy.Compression), not a listener's: nginx's
// gzip directives are inherited from the http block (the ConfigMap's
// use-gzip keys, every server) into each server (a server-snippet, one
// host) and each location (a configuration-snippet, one Ingress's paths),
// where an inner level's directive overrides the outer's. What a
// location ends with is one setting per route, which the front-end
// resolves; a listener-wide field would need a route-level override
// (including "off") beside it and still be one more field to merge. The
// renderer shares one filter among the routes of equal settings.
type Compression struct {
	// Level is gzip's compression level, 1 (fastest) to 9 (smallest):
	// gzip_comp_level.
	Level int `json:"level"`
	// MinLength is the smallest Content-Length compressed, in bytes
	// (gzip_min_length): a response with a smaller one is sent as it is,
	// and a response without one is compressed.
	MinLength uint32 `json:"minLength,omitempty"`
	// ContentTypes are the media types compressed (gzip_types and
	// nginx's text/html), lower case, "type/subtype" without
	// parameters, sorted and unique; "*" alone: every type.
	ContentTypes []string `json:"contentTypes"`
	// SkipUserAgent, an RE2 expression, leaves uncompressed the
	// responses to a request whose User-Agent it matches anywhere, in any
	// case (nginx's gzip_disable); SkipMSIE6 those of Internet Explorer 4
	// to 6 (gzip_disable msie6). Empty and false: every client's.
	SkipUserAgent string `json:"skipUserAgent,omitempty"`
	SkipMSIE6     bool   `json:"skipMSIE6,omitempty"`
}

// BrotliMaxLevel is brotli's highest quality (its lowest is 0).
const BrotliMaxLevel = 11

// validateBrotli checks c as a listener's brotli compression
// (Listener.Brotli), whose Level is brotli's quality, 0 to 11.
func (c *Compression) validateBrotli() error {
	gzip := *c
	gzip.Level = 1
	var v violations
	if c.Level < 0 || c.Level > BrotliMaxLevel {
		v.add("Level", ErrOutOfRange, "level %d: brotli takes 0 to %d", c.Level, BrotliMaxLevel)
	}
	v.nest("", "", ErrBadValue, gzip.validate())
	return v.join()
}

// AnyContentType is ContentTypes' "every type" (gzip_types *).
const AnyContentType = "*"

// Key identifies the setting: equal settings have the same key.
func (c *Compression) Key() string {
	key := strconv.Itoa(c.Level) + "|" + strconv.FormatUint(uint64(c.MinLength), 10) + "|" + strings.Join(c.ContentTypes, " ")
	if c.SkipMSIE6 || c.SkipUserAgent != "" {
		key += "|" + strconv.FormatBool(c.SkipMSIE6) + "|" + c.SkipUserAgent
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

func (c *Compression) validate() error {
	var v violations
	if c.Level < 1 || c.Level > 9 {
		v.add("Level", ErrOutOfRange, "level %d: gzip takes 1 to 9", c.Level)
	}
	if len(c.ContentTypes) == 0 {
		v.add("ContentTypes", ErrNoOp, "no content type: leave it nil for no compression")
	}
	if !slices.IsSorted(c.ContentTypes) {
		v.add("ContentTypes", ErrUnsorted, "content types not sorted")
	} else if len(slices.Compact(slices.Clone(c.ContentTypes))) != len(c.ContentTypes) {
		v.add("ContentTypes", ErrDuplicate, "a content type listed twice")
	}
	for i, t := range c.ContentTypes {
		if t == AnyContentType {
			if len(c.ContentTypes) != 1 {
				v.add(fmt.Sprintf("ContentTypes[%d]", i), ErrConflict, "* with other types: it alone covers them")
			}
			continue
		}
		if !ValidMediaType(t) {
			v.add(fmt.Sprintf("ContentTypes[%d]", i), ErrBadHeader, "content type %q: not a lower-case type/subtype", t)
		}
	}
	if c.SkipUserAgent != "" {
		if err := validRegex(c.SkipUserAgent); err != nil || !utf8.ValidString(c.SkipUserAgent) {
			v.add("SkipUserAgent", ErrBadRegex, "user agent expression %q: not UTF-8, or %v", c.SkipUserAgent, err)
		}
	}
	return v.join()
}

// ValidMediaType says whether t is a media type as Compression holds one:
// lower case type/subtype, both tokens, no parameters.
func ValidMediaType(t string) bool {
	typ, sub, ok := strings.Cut(t, "/")
	return ok && mediaToken(typ) && mediaToken(sub) && t == strings.ToLower(t)
}

func mediaToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}
