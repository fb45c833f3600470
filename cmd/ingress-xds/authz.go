package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/ingress-xds/ingress-xds/internal/authz"
	"github.com/ingress-xds/ingress-xds/kube"
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
	metricsAddress := fs.String("metrics-address", "", "address serving /metrics: ingress-nginx's request metrics, counted from Envoy's gRPC access log (empty: not served; the Envoy's pod's port, as ingress-nginx's :10254)")
	controllerClass := fs.String("controller-class", kube.DefaultControllerName, "the request metrics' controller_class label: serve's --controller-class")
	// ingress-nginx's flags of its request metrics.
	metricsOpts := authz.DefaultRequestMetricsOptions()
	metricsOpts.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := metricsOpts.Validate(); err != nil {
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
	// ingress-nginx's request metrics: Envoy's gRPC access log, on the
	// same port, counted and served on --metrics-address.
	metrics := authz.NewRequestMetrics(logger, authz.Controller{Namespace: podNamespace(), Class: *controllerClass, Pod: os.Getenv("POD_NAME")}, metricsOpts)
	accesslogv3.RegisterAccessLogServiceServer(srv, metrics)
	if *metricsAddress != "" {
		mlis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *metricsAddress)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", *metricsAddress, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(metrics.Gatherer(), promhttp.HandlerOpts{}))
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(mlis) }()
		go func() {
			<-ctx.Done()
			_ = hs.Close()
		}()
		logger.Info("request metrics served", "address", mlis.Addr().String())
	}
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
