package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestBrotli checks the ConfigMap's enable-brotli through a real Envoy:
// ingress-nginx's test/e2e/settings/brotli.go ("should only compress
// responses that meet the brotli-min-length condition": brotli-types and
// brotli-min-length, a body one byte short left alone), and what
// ngx_brotli's header filter (ngx_http_brotli_header_filter) decides on
// its own: only 200, 403 and 404, nothing already encoded, text/html
// always, a strong ETag made weak; and, as ngx_brotli runs ahead of
// nginx's gzip and turns it off for the request, a client that accepts
// both gets br, one that accepts gzip alone gzip.
func TestBrotli(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(compressiblePages))
	t.Cleanup(srv.Close)
	backend := serverBackend(t, "pages", srv)
	data := map[string]string{"enable-brotli": "true", "brotli-types": "application/octet-stream", "brotli-min-length": "24", "use-gzip": "true"}
	fm, configure := startConfigMapMode(t, data,
		manifest{"services.yaml", echoServicesYAML(backend)},
		manifest{"ingresses.yaml", compressionIngressesYAML})

	type page = compressedPage
	get := func(query, acceptEncoding string) (page, error) {
		return compressedGet(fm.envoy.HTTPAddress, "plain.gzip.example", "/?"+query, acceptEncoding)
	}
	check := func(t *testing.T, query, acceptEncoding, encoding string) page {
		t.Helper()
		p, err := get(query, acceptEncoding)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if p.encoding != encoding {
			t.Errorf("%s (Accept-Encoding %q): Content-Encoding %q, want %q", query, acceptEncoding, p.encoding, encoding)
		}
		var n int
		for _, kv := range strings.Split(query, "&") {
			if v, ok := strings.CutPrefix(kv, "n="); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if want := strings.Repeat("compress me, ", n/13+1)[:n]; p.encoding == encoding && encoding != "" && p.body != want {
			t.Errorf("%s: a body of %d bytes that is not the backend's %d", query, len(p.body), n)
		}
		return p
	}
	framework.Eventually(t, convergeTimeout, "brotli", func() error {
		p, err := get("type=application/octet-stream&n=24", "br")
		if err == nil && p.encoding != "br" {
			err = fmt.Errorf("status %d, Content-Encoding %q", p.status, p.encoding)
		}
		return err
	})

	t.Run("brotli-types and brotli-min-length", func(t *testing.T) {
		check(t, "type=application/octet-stream&n=24", "br", "br")
		check(t, "type=application/octet-stream&n=23", "br", "")
		check(t, "type=text/html&n=1000", "br", "br") // always
		check(t, "type=text/html&n=100&chunked=1", "br", "br")
		// use-gzip's list has application/json, brotli-types not:
		// ngx_brotli leaves it, gzip takes it.
		check(t, "type=application/json&n=1000", "gzip", "gzip")
		check(t, "type=application/json&n=1000", "gzip, br", "gzip")
	})
	// The difference docs/configmap.md states: ngx_brotli reads no
	// q-value but 0, Envoy chooses the client's preferred encoding.
	t.Run("the stated difference", func(t *testing.T) {
		check(t, "type=text/html&n=1000", "gzip;q=1, br;q=0.5", "gzip")
	})
	t.Run("what ngx_brotli leaves alone", func(t *testing.T) {
		check(t, "type=text/html&n=1000", "", "")
		check(t, "type=text/html&n=1000", "gzip, br;q=0", "gzip")
		check(t, "type=text/html&n=1000&status=500", "br", "")
		check(t, "type=text/html&n=1000&status=404", "br", "br")
		check(t, "type=text/html&n=1000&content-encoding=identity-ish", "br", "identity-ish")
		p := check(t, "type=text/html&n=1000&etag=%22v1%22", "br", "br")
		if p.etag != `W/"v1"` {
			t.Errorf(`ETag %q, want W/"v1"`, p.etag)
		}
	})
	t.Run("br over gzip, gzip alone", func(t *testing.T) {
		check(t, "type=text/html&n=1000", "gzip, deflate, br", "br")
		check(t, "type=text/html&n=1000", "br, gzip", "br")
		check(t, "type=text/html&n=1000", "gzip", "gzip")
	})
	t.Run("brotli-level, and without enable-brotli", func(t *testing.T) {
		configure(map[string]string{"enable-brotli": "true", "brotli-level": "11", "use-gzip": "true"})
		framework.Eventually(t, convergeTimeout, "the defaults' types", func() error {
			p, err := get("type=application/json&n=1000", "br")
			if err == nil && p.encoding != "br" {
				err = fmt.Errorf("Content-Encoding %q", p.encoding)
			}
			return err
		})
		check(t, "type=text/css&n=20", "br", "br")
		check(t, "type=text/css&n=19", "br", "")
		configure(map[string]string{"use-gzip": "true"})
		framework.Eventually(t, convergeTimeout, "gzip alone", func() error {
			p, err := get("type=text/html&n=1000", "gzip, br")
			if err == nil && p.encoding != "gzip" {
				err = fmt.Errorf("Content-Encoding %q", p.encoding)
			}
			return err
		})
	})
}
