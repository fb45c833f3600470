package echo

import (
	"bytes"
	"net/http"
	"strconv"
)

// maxSized bounds what a bytes=N request may ask for, so that a typo in a
// test does not fill the memory of the machine running it.
const maxSized = 64 << 20

// sized answers a request whose query asks for a body of a known size
// (bytes=N: N bytes of "x", with its Content-Length), and reports whether
// it did: for tests of what a proxy does to a response's pace.
func sized(w http.ResponseWriter, r *http.Request) bool {
	v := r.URL.Query().Get("bytes")
	if v == "" {
		return false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxSized {
		http.Error(w, "bytes: a number from 0 to 64 MiB", http.StatusBadRequest)
		return true
	}
	// No X-Backend: the framework's clients read a body sent with it as
	// echo's JSON.
	w.Header().Del("X-Backend")
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	w.Write(bytes.Repeat([]byte("x"), n))
	return true
}
