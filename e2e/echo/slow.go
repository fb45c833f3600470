package echo

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// slow answers a request whose query asks for a slow response, and reports
// whether it did. wait=D holds the response headers back for D; chunks=N
// then sends N lines, one every every=D (flushed each time), so a test can
// make a response that trickles for longer than a proxy's total timeout
// without ever pausing longer than its idle timeout, or one that pauses
// too long. The delays are the test's inputs, not assertions.
func slow(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if !q.Has("wait") && !q.Has("chunks") {
		return false
	}
	wait, err1 := param(q, "wait", time.ParseDuration)
	every, err2 := param(q, "every", time.ParseDuration)
	chunks, err3 := param(q, "chunks", strconv.Atoi)
	if err1 != nil || err2 != nil || err3 != nil {
		http.Error(w, "wait, every: durations; chunks: a number", http.StatusBadRequest)
		return true
	}
	if !sleep(r, wait) {
		return true
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for i := 1; i <= chunks; i++ {
		if i > 1 && !sleep(r, every) {
			return true
		}
		fmt.Fprintf(w, "chunk %d of %d\n", i, chunks)
		if flusher != nil {
			flusher.Flush()
		}
	}
	return true
}

// param parses a query parameter; an absent one is zero.
func param[T any](q url.Values, name string, parse func(string) (T, error)) (T, error) {
	if v := q.Get(name); v != "" {
		return parse(v)
	}
	var zero T
	return zero, nil
}

// sleep waits for d, or until the client goes away (false).
func sleep(r *http.Request, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		return false
	}
}
