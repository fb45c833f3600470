// Command ingress-xds is a Kubernetes Ingress control plane for Envoy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `ingress-xds: a Kubernetes Ingress control plane for Envoy.

Usage:
  ingress-xds serve      [flags]   watch a cluster (or --manifests DIR) and serve xDS
  ingress-xds bootstrap  [flags]   write an Envoy bootstrap that connects to serve
  ingress-xds translate -f PATH    print the Envoy resources serve would publish
  ingress-xds audit      [flags]   before switching from ingress-nginx: each Ingress's annotations, refusals and behaviours (exit 1 if some would be refused);
                                   with --to-gateway-api, the Gateway API objects that express them, checked to route the same
  ingress-xds certgen    [flags]   write a CA and certificates for xDS over mutual TLS
  ingress-xds authz      [flags]   serve the authorisation service Envoy calls beside it (ext_authz)
  ingress-xds version              print the version

Run 'ingress-xds COMMAND -h' for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[2:]
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(ctx, args)
	case "bootstrap":
		err = runBootstrap(args, os.Stdout)
	case "translate":
		err = runTranslate(args, os.Stdout)
	case "audit":
		err = runAudit(ctx, args, os.Stdout)
	case "certgen":
		err = runCertgen(ctx, args, os.Stdout)
	case "authz":
		err = runAuthz(ctx, args)
	case "version", "--version", "-version":
		fmt.Println(version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		// -h or --help: the flag package has printed the command's
		// usage, which is what was asked for.
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ingress-xds %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
