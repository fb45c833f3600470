package xds

import (
	"net/http"
)

// HealthHandler serves /healthz (the process is alive) and /readyz (ready
// reports true: the sources have synced and the first snapshot is built, so
// an Envoy connecting now gets real configuration, never an empty one).
func HealthHandler(ready func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready: waiting for the sources to sync and the first snapshot\n", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}

// HTTPHandler serves /healthz, /readyz and /metrics. Ready means sourceReady
// (every informer has synced) and a snapshot published: the caller's own
// flag may be set before or after Publish, and both must hold.
func (s *Server) HTTPHandler(sourceReady func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", HealthHandler(func() bool { return sourceReady() && s.Ready() }))
	mux.Handle("/metrics", s.metrics.handler())
	return mux
}
