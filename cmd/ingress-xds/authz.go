package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"

	"github.com/ingress-xds/ingress-xds/internal/authz"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// defaultAuthzAddress is where the authorisation service listens beside
// each Envoy, and where serve's --authz-address tells Envoy to call it.
const defaultAuthzAddress = envoy.DefaultAuthzAddress

// runAuthz runs the authorisation service Envoy calls over ext_authz
// and ext_proc (package authz) until ctx ends.
func runAuthz(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("authz", flag.ContinueOnError)
	listen := fs.String("listen", defaultAuthzAddress, "address of the ext_authz and ext_proc gRPC server (loopback: only the Envoy of the same pod calls it)")
	cache := authz.DefaultCacheOptions()
	fs.IntVar(&cache.Entries, "cache-entries", cache.Entries, "successful password verifications remembered at most (0: none)")
	fs.DurationVar(&cache.TTL, "cache-ttl", cache.TTL, "how long a successful password verification is remembered")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cache.Entries < 0 || cache.TTL < 0 {
		return fmt.Errorf("--cache-entries and --cache-ttl must not be negative")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *listen, err)
	}
	srv := grpc.NewServer()
	authv3.RegisterAuthorizationServer(srv, authz.NewServer(logger, authz.Options{Cache: cache}))
	// The connection limit (limit-connections) is the same service's
	// ext_proc server, on the same port.
	extprocv3.RegisterExternalProcessorServer(srv, authz.NewConnLimiter(logger))
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	logger.Info("authorisation service listening", "address", lis.Addr().String())
	if err := srv.Serve(lis); err != nil {
		return fmt.Errorf("serving ext_authz: %w", err)
	}
	return nil
}
