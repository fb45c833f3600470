package envoy

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matchingv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/matching/v3"
	brotliv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/compression/brotli/compressor/v3"
	gzipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/compression/gzip/compressor/v3"
	compressorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/compressor/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A route's compression (ir.Compression, nginx's gzip) is Envoy's
// compressor filter with the gzip library. The filter's content types and
// minimum length cannot be changed per route (CompressorPerRoute overrides
// only the library), so each setting the listener's routes ask is a filter
// of its own, named by the setting (compressorName), disabled in the
// connection manager and turned on by the routes that ask it. A listener
// whose routes all ask one setting (the ConfigMap's use-gzip) has one
// filter; a listener with no compressed route has none. Turning it on per
// route costs every compressed route a few bytes; turning it off on the
// others instead would cost every route of a listener that compresses a
// few, which is most of them where only a snippet asks.
//
// As ingress-nginx's template sets nginx's gzip (nginx.tmpl, "gzip on"):
//
//   - gzip_comp_level: the library's compression level; window and
//     memory as zlib's defaults, nginx's (Envoy's own are smaller);
//   - gzip_min_length: the minimum Content-Length; a response without one
//     (chunked) is compressed, as nginx does;
//   - gzip_types: Content-Type without its parameters, any case, exactly
//     one of the types (text/html always among them);
//   - gzip_vary on: Envoy adds Vary: Accept-Encoding to each response it
//     could compress, whether or not the client asked;
//   - gzip_proxied any: Envoy compresses whether the request came through
//     a proxy (Via) or not;
//   - nginx compresses only 200, 403 and 404: every other registered
//     status is listed as not compressible;
//   - a response that has Content-Encoding is not compressed again;
//   - a strong ETag is made weak (W/), as nginx does, not removed.
//
// Differences: gzip_http_version 1.1 leaves HTTP/1.0 requests
// uncompressed, and Envoy refuses HTTP/1.0 requests altogether (426);
// Envoy compresses a response without Content-Type, which nginx does not
// (unless gzip_types *), and does not compress one with Cache-Control:
// no-transform, which nginx does.
const compressorFilterPrefix = "envoy.filters.http.compressor."

// compressorName is the filter of setting c.
func compressorName(c *ir.Compression) string { return compressorFilterPrefix + c.Key() }

// uncompressedStatuses are the registered statuses nginx's gzip does not
// compress (ngx_http_gzip_header_filter: 200, 403 and 404 only); those
// without a body are left out.
var uncompressedStatuses = []uint32{
	201, 202, 203, 205, 206, 207, 208, 226,
	300, 301, 302, 303, 305, 307, 308,
	400, 401, 402, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418,
	421, 422, 423, 424, 425, 426, 428, 429, 431, 451,
	500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
}

// gzipSet is the compression settings of a listener's routes, each
// encoded (encodeCompression), sorted and unique, joined by newlines:
// comparable, so that the listener's and chains' caches compare it as
// they compare filterSet.
type gzipSet string

// encodeCompression is c as one line: level, minimum length, the
// clients skipped (skipPrefix and their expression in base64, or
// msie6Word), types.
func encodeCompression(c *ir.Compression) string {
	line := strconv.Itoa(c.Level) + " " + strconv.FormatUint(uint64(c.MinLength), 10) + " "
	if c.SkipMSIE6 {
		line += msie6Word + " "
	}
	if c.SkipUserAgent != "" {
		line += skipPrefix + base64.RawURLEncoding.EncodeToString([]byte(c.SkipUserAgent)) + " "
	}
	return line + strings.Join(c.ContentTypes, " ")
}

// The words of an encoded line that say which clients are skipped; no
// media type starts so.
const (
	msie6Word  = "skip-msie6"
	skipPrefix = "skip-ua:"
)

func decodeCompression(line string) (*ir.Compression, error) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return nil, fmt.Errorf("compression %q", line)
	}
	level, err := strconv.Atoi(f[0])
	if err != nil {
		return nil, err
	}
	min, err := strconv.ParseUint(f[1], 10, 32)
	if err != nil {
		return nil, err
	}
	c := &ir.Compression{Level: level, MinLength: uint32(min)}
	rest := f[2:]
	if len(rest) > 1 && rest[0] == msie6Word {
		c.SkipMSIE6, rest = true, rest[1:]
	}
	if len(rest) > 1 && strings.HasPrefix(rest[0], skipPrefix) {
		re, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(rest[0], skipPrefix))
		if err != nil {
			return nil, fmt.Errorf("compression %q: %w", line, err)
		}
		c.SkipUserAgent, rest = string(re), rest[1:]
	}
	c.ContentTypes = rest
	return c, nil
}

// hostCompressions are the settings of vh's routes served on l.
func hostCompressions(vh *ir.VirtualHost, l listenerSide) gzipSet {
	var lines []string
	var last *ir.Compression
	for _, r := range vh.Routes {
		if r.Policy == nil || r.Policy.Compression == nil || !l.serves(r) || r.Policy.Compression == last {
			continue
		}
		last = r.Policy.Compression
		lines = append(lines, encodeCompression(last))
	}
	return makeGzipSet(lines)
}

func makeGzipSet(lines []string) gzipSet {
	slices.Sort(lines)
	return gzipSet(strings.Join(slices.Compact(lines), "\n"))
}

// internGzip is s, as the string of the first host that had it.
func (c *Renderer) internGzip(s gzipSet) gzipSet {
	if s == "" {
		return s
	}
	if in, ok := c.gzipSets[s]; ok {
		return in
	}
	if c.gzipSets == nil || len(c.gzipSets) > 4096 {
		c.gzipSets = map[gzipSet]gzipSet{} // forget the sets no longer asked
	}
	c.gzipSets[s] = s
	return s
}

// union is both sets'.
func (s gzipSet) union(o gzipSet) gzipSet {
	switch {
	case o == "" || o == s:
		return s
	case s == "":
		return o
	}
	return makeGzipSet(append(strings.Split(string(s), "\n"), strings.Split(string(o), "\n")...))
}

// compressorFilters are the set's filters, disabled in the connection
// manager.
func compressorFilters(s gzipSet) ([]*hcmv3.HttpFilter, error) {
	if s == "" {
		return nil, nil
	}
	var out []*hcmv3.HttpFilter
	for _, line := range strings.Split(string(s), "\n") {
		c, err := decodeCompression(line)
		if err != nil {
			return nil, err
		}
		var cfg *anypb.Any
		if skip := skipClients(c); skip != nil {
			cfg, err = skippingCompressor(c, skip)
		} else {
			cfg, err = anypb.New(compressor(c))
		}
		if err != nil {
			return nil, fmt.Errorf("packing the compressor filter: %w", err)
		}
		out = append(out, &hcmv3.HttpFilter{Name: compressorName(c), ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: cfg}, Disabled: true})
	}
	return out, nil
}

// brotliFilter is the name of a listener's brotli compressor
// (ir.Listener.Brotli): on for every route, ahead of the gzip ones.
const brotliFilter = compressorFilterPrefix + "brotli"

// brotliFilters is l's brotli compressor, none without one. ngx_brotli
// runs ahead of nginx's gzip and takes every response a client accepts br
// for, the q-values aside; Envoy's compressors choose one encoding per
// stream from the client's q-values, brotli on a tie (ChooseFirst). Its
// window is ngx_brotli's (brotli_window 512k, 2^19); the rest is as
// compressor's.
func brotliFilters(l *ir.Listener) ([]*hcmv3.HttpFilter, error) {
	if l.Brotli == nil {
		return nil, nil
	}
	lib, err := anypb.New(&brotliv3.Brotli{
		Quality:    wrapperspb.UInt32(uint32(l.Brotli.Level)),
		WindowBits: wrapperspb.UInt32(19),
	})
	if err != nil {
		return nil, fmt.Errorf("packing the brotli library: %w", err)
	}
	c := compressorWith(l.Brotli, &corev3.TypedExtensionConfig{Name: "brotli", TypedConfig: lib})
	c.ChooseFirst = true
	cfg, err := anypb.New(c)
	if err != nil {
		return nil, fmt.Errorf("packing the brotli compressor filter: %w", err)
	}
	return []*hcmv3.HttpFilter{{Name: brotliFilter, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: cfg}}}, nil
}

// compressor is the filter of setting c.
func compressor(c *ir.Compression) *compressorv3.Compressor {
	lib, err := anypb.New(&gzipv3.Gzip{
		CompressionLevel: gzipv3.Gzip_CompressionLevel(c.Level),
		// zlib's defaults, which nginx's gzip uses.
		WindowBits:  wrapperspb.UInt32(15),
		MemoryLevel: wrapperspb.UInt32(8),
	})
	if err != nil {
		panic(err) // a known message always packs
	}
	return compressorWith(c, &corev3.TypedExtensionConfig{Name: "gzip", TypedConfig: lib})
}

// compressorWith is the filter of setting c with the library lib: the
// statuses, types and lengths nginx's gzip and ngx_brotli alike compress.
func compressorWith(c *ir.Compression, lib *corev3.TypedExtensionConfig) *compressorv3.Compressor {
	var types []*matcherv3.StringMatcher
	for _, t := range c.ContentTypes {
		if t == ir.AnyContentType {
			types = []*matcherv3.StringMatcher{{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: ".*"}}}}
			break
		}
		types = append(types, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: t}, IgnoreCase: true})
	}
	return &compressorv3.Compressor{
		CompressorLibrary: lib,
		ResponseDirectionConfig: &compressorv3.Compressor_ResponseDirectionConfig{
			CommonConfig: &compressorv3.Compressor_CommonDirectionConfig{
				MinContentLength:   wrapperspb.UInt32(c.MinLength),
				ContentTypeMatcher: types,
			},
			WeakenEtagOnCompress:        true,
			UncompressibleResponseCodes: uncompressedStatuses,
		},
	}
}

// compressorOn is the per-route configuration that turns a route's
// compressor of setting c on: the compressor's own, or, for a setting
// that skips some clients (gzipdisable.go), the matcher's, which the
// wrapper around the compressor takes.
func compressorOn(c *ir.Compression) proto.Message {
	if skip := skipClients(c); skip != nil {
		cfg, err := anypb.New(&matchingv3.ExtensionWithMatcherPerRoute{XdsMatcher: skip})
		if err != nil {
			panic(err) // a known message always packs
		}
		return &routev3.FilterConfig{Config: cfg}
	}
	return compressorPerRoute()
}

// compressorPerRoute is the compressor's own per-route configuration
// that turns it on.
func compressorPerRoute() *compressorv3.CompressorPerRoute {
	return &compressorv3.CompressorPerRoute{Override: &compressorv3.CompressorPerRoute_Overrides{
		Overrides: &compressorv3.CompressorOverrides{ResponseDirectionConfig: &compressorv3.ResponseDirectionOverrides{}},
	}}
}
