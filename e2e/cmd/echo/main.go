// Command echo runs test backends: echo -listen 127.0.0.1:9001=coffee,127.0.0.1:9002=tea
// serves, on each address, replies naming the backend.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9001=echo", "comma-separated ADDRESS=NAME pairs")
	flag.Parse()
	errs := make(chan error)
	for _, pair := range strings.Split(*listen, ",") {
		addr, name, ok := strings.Cut(pair, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "echo: %q is not ADDRESS=NAME\n", pair)
			os.Exit(2)
		}
		go func() { errs <- http.ListenAndServe(addr, echo.Handler(name)) }()
	}
	log.Fatal(<-errs)
}
