package load

import (
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
)

// The backend process: this executable, started inside the namespace with
// these variables set, serves the echo backend instead of doing anything
// else (serveBackendIfAsked runs before main or the tests).
const (
	backendAddressEnv = "INGRESS_LOAD_BACKEND_ADDRESS"
	backendNameEnv    = "INGRESS_LOAD_BACKEND_NAME"
	// backendCountPath answers with the number of other requests served.
	backendCountPath = "/__requests"
)

func init() { serveBackendIfAsked() }

func serveBackendIfAsked() {
	address := os.Getenv(backendAddressEnv)
	if address == "" {
		return
	}
	var served atomic.Int64
	handler := echo.Handler(os.Getenv(backendNameEnv))
	err := http.ListenAndServe(address, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == backendCountPath {
			fmt.Fprintln(w, served.Load())
			return
		}
		served.Add(1)
		handler.ServeHTTP(w, r)
	}))
	fmt.Fprintln(os.Stderr, "backend:", err)
	os.Exit(1)
}
