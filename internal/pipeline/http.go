package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTPOptions say what the process-wide HTTP endpoints serve.
type HTTPOptions struct {
	// Ready answers /readyz: 200 when it reports true, 503 otherwise.
	Ready func() bool
	// Metrics are served on /metrics, in Prometheus' text format.
	Metrics prometheus.Gatherer
	// Profiles also serves net/http/pprof's handlers under /debug/pprof/,
	// for measuring a live process.
	Profiles bool
}

// Handler serves /healthz (the process is alive), /readyz and /metrics,
// and with Profiles /debug/pprof/.
func Handler(o HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !o.Ready() {
			http.Error(w, "not ready: waiting for the sources to sync and the first snapshot\n", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	// The handler counts its own failures (promhttp_metric_handler_errors_total)
	// in a registry of its own, served beside the metrics it was given: the
	// registry that owns those stays the only one writing to it.
	own := prometheus.NewRegistry()
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{o.Metrics, own}, promhttp.HandlerOpts{Registry: own}))
	if o.Profiles {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// ServeHTTP serves h on address until ctx is done, then shuts down,
// giving requests in flight a moment to finish.
func ServeHTTP(ctx context.Context, address string, h http.Handler) error {
	srv := &http.Server{Addr: address, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving http on %s: %w", address, err)
	}
	return nil
}
