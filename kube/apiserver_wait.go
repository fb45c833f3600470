package kube

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// APIServerWait makes the informers' reads wait out an API server that
// cannot be reached, rather than fail.
//
// client-go's reflectors back off after each failed list or watch, up to
// 30 s with as much again of jitter, and the backoff grows through an
// outage: after an API server restart the control plane would serve what
// changed meanwhile only up to a minute after the API server was back
// (docs/failure-modes.md). A read whose connection cannot be made is
// instead tried again every Interval until it can, or until its own
// context or Stop ends, so the reflectors see a slow request rather than
// an error, never back off, and resume within Interval of the API
// server's return. Only reads (GET) are held, and only where no
// connection was made, so nothing sent is sent twice; writes, and every
// other error, reach client-go as they are. It wraps the informers' client alone:
// leader election and status keep their own deadlines.
type APIServerWait struct {
	// Interval between two tries of a read; 0: one second.
	Interval time.Duration
	// Clock paces the tries; the real clock when nil. Tests step a fake.
	Clock clock.Clock
	// Stop, once closed, ends every wait with the read's error: a read
	// made without a context of its own (client-go's discovery) would
	// otherwise wait past the process's shutdown.
	Stop   <-chan struct{}
	Logger *slog.Logger

	mu    sync.Mutex
	since time.Time // when reads began to wait; zero: the API server answers
}

// Wrap is the transport wrapper for rest.Config.Wrap.
func (w *APIServerWait) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return w.roundTrip(next, req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (w *APIServerWait) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Body != nil && req.Body != http.NoBody {
		return next.RoundTrip(req)
	}
	for {
		resp, err := next.RoundTrip(req.Clone(req.Context()))
		if err == nil {
			w.reached()
			return resp, err
		}
		// Another error is not the API server answering: a connection
		// it resets as it goes down ends a read in flight so, and must
		// not end the outage it begins.
		if !unreachable(err) {
			return resp, err
		}
		w.waiting(err)
		select {
		case <-req.Context().Done():
			return nil, err
		case <-w.Stop:
			return nil, err
		case <-w.clock().After(w.interval()):
		}
	}
}

// unreachable says whether err is a connection that could not be made
// (refused, no route, timed out): the request was not sent.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// waiting notes that reads wait for the API server, logging it once per
// outage.
func (w *APIServerWait) waiting(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.since.IsZero() {
		return
	}
	w.since = w.clock().Now()
	w.logger().Warn("API server unreachable: the informers wait for it, and Envoys keep the configuration they have", "error", err, "retry", w.interval())
}

// reached notes that the API server answered a read.
func (w *APIServerWait) reached() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		return
	}
	w.logger().Info("API server reachable again: the informers resume", "unreachable_for", w.clock().Since(w.since).Round(time.Millisecond))
	w.since = time.Time{}
}

func (w *APIServerWait) interval() time.Duration {
	if w.Interval > 0 {
		return w.Interval
	}
	return time.Second
}

func (w *APIServerWait) clock() clock.Clock {
	if w.Clock != nil {
		return w.Clock
	}
	return clock.RealClock{}
}

func (w *APIServerWait) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.New(slog.DiscardHandler)
}
