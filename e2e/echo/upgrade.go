package echo

import (
	"io"
	"net/http"
	"strings"
)

// upgrade answers a request for a protocol upgrade (a WebSocket handshake)
// with 101 and then echoes every byte the client sends, so that a test can
// tell the upgraded connection reached the backend. It reports whether it
// did.
func upgrade(w http.ResponseWriter, r *http.Request) bool {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cannot upgrade", http.StatusInternalServerError)
		return true
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return true
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	if buf.Flush() != nil {
		return true
	}
	// Echo until the client closes; what the reader has buffered first.
	io.Copy(conn, buf)
	return true
}
