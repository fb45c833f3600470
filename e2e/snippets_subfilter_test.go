package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// subFilterPage is the backend's HTML page, its head in capitals.
const subFilterPage = `<html><HEAD><title>t</title></HEAD><a href="/x">x</a><img src="/i.png"><a href="/y">y</a></html>`

// TestSnippetsSubFilter proves a configuration-snippet's sub_filter
// through a real Envoy against what nginx does with the backend's body.
// ingress-nginx has no test of the directive (its nginx is built
// --with-http_sub_module, images/nginx/rootfs/build.sh); the expectations
// are nginx's documentation
// (https://nginx.org/en/docs/http/ngx_http_sub_filter_module.html) and its
// code, src/http/modules/ngx_http_sub_filter_module.c:
// ngx_http_sub_header_filter rewrites a response of its types alone
// (text/html always, a Content-Type compared up to a charset parameter,
// ngx_http_upstream_copy_content_type), leaves one of Content-Length 0
// alone, and clears Content-Length, Last-Modified and ETag (with
// sub_filter_last_modified on, keeps Last-Modified and weakens ETag,
// ngx_http_weak_etag); ngx_http_sub_parse compares the body's bytes
// lowered with the lowered texts, replaces at the leftmost position the
// first pair written that matches there and goes on after it, across the
// backend's writes; with sub_filter_once on (the default) each pair is
// replaced once.
func TestSnippetsSubFilter(t *testing.T) {
	framework.Heavy(t)
	framework.FindTools(t)
	envoy := startHandlerEnvoy(t, "pages", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Backend", "pages")
		h.Set("Last-Modified", "Wed, 02 Dec 2026 10:00:00 GMT")
		h.Set("ETag", `"v1"`)
		switch r.URL.Path {
		case "/page":
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Content-Length", strconv.Itoa(len(subFilterPage)))
			fmt.Fprint(w, subFilterPage)
		case "/split":
			// The head's text across two writes, each flushed: the
			// response is chunked, and nginx matches across its buffers.
			h.Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><he")
			w.(http.Flusher).Flush()
			fmt.Fprint(w, "ad></head></html>")
		case "/script.js":
			h.Set("Content-Type", "application/javascript")
			fmt.Fprint(w, `var a = "<head>"; var b = "<head>"; var c = "abc abcd";`)
		case "/style.css":
			h.Set("Content-Type", "text/css")
			fmt.Fprint(w, `/* <head> href="/x" */`)
		case "/params":
			// Not text/html to nginx: only a charset parameter is cut.
			h.Set("Content-Type", "text/html;level=1")
			fmt.Fprint(w, subFilterPage)
		case "/big":
			h.Set("Content-Type", "text/html")
			h.Set("Content-Length", strconv.Itoa(len("<head>")+2<<20))
			fmt.Fprint(w, "<head>"+strings.Repeat("x", 2<<20))
		case "/empty":
			h.Set("Content-Type", "text/html")
			h.Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
		}
	}, subFilterIngressesYAML)
	get := func(t *testing.T, host, path string) snippetAnswer {
		t.Helper()
		var a snippetAnswer
		framework.Eventually(t, convergeTimeout, host+path+" served", func() error {
			a = snippetRequest(t, envoy, http.MethodGet, host, path, nil)
			if a.status != http.StatusOK || a.header.Get("X-Backend") != "pages" {
				return fmt.Errorf("GET %s%s: status %d from %q, want 200 from the backend", host, path, a.status, a.header.Get("X-Backend"))
			}
			return nil
		})
		if cl := a.header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(a.body)) {
			t.Errorf("GET %s%s: Content-Length %s for a body of %d bytes", host, path, cl, len(a.body))
		}
		return a
	}
	type want struct {
		body, etag, lastModified string
	}
	check := func(t *testing.T, a snippetAnswer, w want) {
		t.Helper()
		if a.body != w.body {
			t.Errorf("body\n got %q\nwant %q", a.body, w.body)
		}
		if got := a.header.Get("ETag"); got != w.etag {
			t.Errorf("ETag %q, want %q", got, w.etag)
		}
		if got := a.header.Get("Last-Modified"); got != w.lastModified {
			t.Errorf("Last-Modified %q, want %q", got, w.lastModified)
		}
	}
	const lastModified = "Wed, 02 Dec 2026 10:00:00 GMT"

	// The corpus's Spark UI snippet, shortened: every occurrence, in any
	// case, and the validators gone.
	t.Run("every occurrence, in any case, validators removed", func(t *testing.T) {
		check(t, get(t, "spark.subfilter.test", "/page"), want{
			body: `<html><head><base href="/spark/"><title>t</title></HEAD><a href="x">x</a><img src="i.png"><a href="y">y</a></html>`,
		})
	})
	t.Run("across the backend's writes", func(t *testing.T) {
		check(t, get(t, "spark.subfilter.test", "/split"), want{body: `<html><head><base href="/spark/"></head></html>`})
	})
	t.Run("a response of another type passes as sent", func(t *testing.T) {
		check(t, get(t, "spark.subfilter.test", "/style.css"), want{body: `/* <head> href="/x" */`, etag: `"v1"`, lastModified: lastModified})
	})
	t.Run("a parameter other than charset makes another type", func(t *testing.T) {
		check(t, get(t, "spark.subfilter.test", "/params"), want{body: subFilterPage, etag: `"v1"`, lastModified: lastModified})
	})
	// The difference docs/snippets.md states: Envoy holds the body whole
	// to rewrite it, and answers 500 past its buffer limit (the
	// listener's, 1 MiB), where nginx streams the body through.
	t.Run("a body past Envoy's buffer limit is answered 500", func(t *testing.T) {
		if a := snippetRequest(t, envoy, http.MethodGet, "spark.subfilter.test", "/big", nil); a.status != http.StatusInternalServerError {
			t.Errorf("GET /big (2 MiB of text/html): status %d, want 500", a.status)
		}
	})
	t.Run("an empty response keeps its validators", func(t *testing.T) {
		check(t, get(t, "spark.subfilter.test", "/empty"), want{etag: `"v1"`, lastModified: lastModified})
	})
	// sub_filter_once's default: the first href alone; Last-Modified kept
	// and the ETag weakened by sub_filter_last_modified on.
	t.Run("once by default, Last-Modified kept", func(t *testing.T) {
		check(t, get(t, "once.subfilter.test", "/page"), want{
			body:         `<html><HEAD><title>t</title></HEAD><a href="/app/x">x</a><img src="/i.png"><a href="/y">y</a></html>`,
			etag:         `W/"v1"`,
			lastModified: lastModified,
		})
	})
	// sub_filter_types adds application/javascript; at "abc" the first
	// pair written ("ab") wins over the longer, and once replaced it is
	// not looked for again, so the later "abcd" takes "abc".
	t.Run("the type added, the first pair written at a position", func(t *testing.T) {
		check(t, get(t, "once.subfilter.test", "/script.js"), want{
			body:         `var a = "<HEAD>"; var b = "<head>"; var c = "1c 2d";`,
			etag:         `W/"v1"`,
			lastModified: lastModified,
		})
	})
}

const subFilterIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: spark
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_set_header Accept-Encoding "";
      sub_filter_last_modified off;
      sub_filter '<head>' '<head><base href="/spark/">';
      sub_filter 'href="/' 'href="';
      sub_filter 'src="/' 'src="';
      sub_filter_once off;
spec:
  rules:
  - host: spark.subfilter.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: pages, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: once
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      sub_filter 'HREF="/' 'href="/app/';
      sub_filter '<head>' '<HEAD>';
      sub_filter 'ab' '1';
      sub_filter 'abc' '2';
      sub_filter_types application/javascript;
      sub_filter_last_modified on;
spec:
  rules:
  - host: once.subfilter.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: pages, port: {number: 80}}}}]}
`
