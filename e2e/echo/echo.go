// Package echo is the test backend: an HTTP server that says who it is and
// what it was asked, so a test (or a person running the demo) can tell which
// backend answered a request.
package echo

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Reply is what every request gets back, as JSON.
type Reply struct {
	Backend string `json:"backend"`
	Host    string `json:"host"`
	Path    string `json:"path"`
	Query   string `json:"query,omitempty"`
	// Header is the request's header as the backend received it, for
	// tests of what the proxy adds or removes.
	Header http.Header `json:"header,omitempty"`
}

// Handler answers every request with a Reply naming backend (with the
// status its query's "status" asks for, from 200 to 599, else 200), or, when its
// query asks for one, a slow response (slow.go) or one of a known size
// (size.go), or, under /auth/, an auth
// service's answer (auth.go), or, to a WebSocket
// handshake, an upgraded connection that echoes (upgrade.go).
func Handler(backend string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", backend)
		if slow(w, r) || sized(w, r) || upgrade(w, r) || auth(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Backend", backend)
		// header=Name:Value sets a response header, for tests of what
		// the proxy does with the backend's own.
		for _, h := range r.URL.Query()["header"] {
			if name, value, ok := strings.Cut(h, ":"); ok {
				w.Header().Set(name, value)
			}
		}
		if code := answerStatus(r); code != 0 {
			w.WriteHeader(code)
		}
		json.NewEncoder(w).Encode(Reply{Backend: backend, Host: r.Host, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header})
	})
}

// answerStatus is the status a request's query asks for ("status=503"),
// for tests of what the proxy does with an upstream's error responses; 0:
// none, or not one from 200 to 599.
func answerStatus(r *http.Request) int {
	code, err := strconv.Atoi(r.URL.Query().Get("status"))
	if err != nil || code < 200 || code > 599 {
		return 0
	}
	return code
}
