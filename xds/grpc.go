package xds

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/experimental"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/reflection"

	inspectv1 "github.com/ingress-xds/ingress-xds/xds/inspect/v1"
)

// Serve listens on address and serves until ctx is done; see ServeListener.
func (s *Server) Serve(ctx context.Context, address string) error {
	lis, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("listening for xDS on %s: %w", address, err)
	}
	return s.ServeListener(ctx, lis)
}

// ServeListener serves ADS (state of the world and delta), the per-type
// discovery services, CSDS, the Inspector, gRPC health and reflection on lis
// until ctx is done, then stops gracefully: it ends every xDS stream cleanly
// so that each Envoy keeps the configuration it has and reconnects, to this
// replica when it is back or to another one.
func (s *Server) ServeListener(ctx context.Context, lis net.Listener) error {
	grpcServer := s.newGRPCServer()
	// The xDS streams run until this context ends; stopping it is what ends
	// them cleanly on shutdown (the server's own goroutines watch it, and
	// end each stream with status OK: assumption 14 of docs/xds-cache.md).
	streams, endStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer endStreams()
	s.register(grpcServer, streams)

	s.log.Info("serving xDS", "address", lis.Addr().String())
	served := make(chan error, 1)
	go func() { served <- grpcServer.Serve(lowWaterListener{Listener: lis, bytes: sendQueueLowWater}) }()
	select {
	case <-ctx.Done():
		s.stop(grpcServer, endStreams)
		// Serve returns nil once stopped, or ErrServerStopped when the stop
		// came before it had started.
		if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("serving xDS: %w", err)
		}
		return nil
	case err := <-served:
		grpcServer.Stop()
		return fmt.Errorf("serving xDS: %w", err)
	}
}

func (s *Server) newGRPCServer() *grpc.Server {
	o := s.opts
	codec := newResponseCodec(s.cache.lists)
	codec.names = &s.cache.served
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(o.MaxRecvMessageBytes),
		grpc.MaxSendMsgSize(o.MaxSendMessageBytes),
		// One ADS stream per Envoy, but a node may also open per-type
		// streams and CSDS or grpcurl clients come and go.
		grpc.MaxConcurrentStreams(1 << 16),
		// Ping idle connections so that a vanished Envoy (node lost, network
		// cut) is noticed and its watches released.
		grpc.KeepaliveParams(o.keepalive()),
		// Our bootstrap has Envoy ping every 30s (less jitter); allow that,
		// with or without an open stream, rather than answering with GOAWAY
		// too_many_pings.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		experimental.BufferPool(smallBufferPool{mem.DefaultBufferPool()}),
		// Responses send the resources' shared encodings as they are,
		// rather than a copy per stream (codec.go); SotW requests are
		// decoded against the names served (requestnames.go).
		grpc.ForceServerCodecV2(codec),
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	return grpc.NewServer(opts...)
}

// keepalive is the transport's keepalive: pings, and the connections' age.
func (o Options) keepalive() keepalive.ServerParameters {
	p := keepalive.ServerParameters{Time: o.KeepaliveTime, Timeout: o.KeepaliveTimeout}
	if o.MaxConnectionAge > 0 {
		p.MaxConnectionAge, p.MaxConnectionAgeGrace = o.MaxConnectionAge, o.MaxConnectionAgeGrace
	}
	return p
}

// smallBufferPool pools only the buffers gRPC's default pool sizes (up to
// 1 MiB) and leaves larger ones to the garbage collector. gRPC keeps any
// size by default, and a control plane's large buffers are whole responses:
// at scale the route configuration and every cluster, held between
// changes for the next one.
type smallBufferPool struct{ mem.BufferPool }

const largestPooledBuffer = 1 << 20

func (p smallBufferPool) Get(length int) *[]byte {
	if length > largestPooledBuffer {
		b := make([]byte, length)
		return &b
	}
	return p.BufferPool.Get(length)
}

func (p smallBufferPool) Put(b *[]byte) {
	if cap(*b) > largestPooledBuffer {
		return
	}
	p.BufferPool.Put(b)
}

// register serves our cache and callbacks: SotW streams through our own
// server, delta and REST through go-control-plane's (sotwserver.go).
func (s *Server) register(g *grpc.Server, streams context.Context) {
	xdsServer := newXDSServer(streams, s.cache, callbacks{s}, s.log, s.admission, &s.cache.served)
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(g, xdsServer)
	listenerservice.RegisterListenerDiscoveryServiceServer(g, xdsServer)
	routeservice.RegisterRouteDiscoveryServiceServer(g, xdsServer)
	clusterservice.RegisterClusterDiscoveryServiceServer(g, xdsServer)
	endpointservice.RegisterEndpointDiscoveryServiceServer(g, xdsServer)
	secretservice.RegisterSecretDiscoveryServiceServer(g, xdsServer)
	statusservice.RegisterClientStatusDiscoveryServiceServer(g, &csdsServer{s: s, done: streams.Done()})
	inspectv1.RegisterInspectorServer(g, &inspectorServer{s: s})
	healthpb.RegisterHealthServer(g, s.health)
	// Reflection serves the descriptors of everything registered above, so
	// grpcurl needs no .proto files to call or decode any of it.
	reflection.Register(g)
}

// stop ends the streams cleanly (status OK: Envoy keeps its configuration
// and reconnects with backoff), lets unary calls finish, and after
// StopTimeout closes whatever is left.
func (s *Server) stop(g *grpc.Server, endStreams context.CancelFunc) {
	s.health.Shutdown()
	endStreams()
	done := make(chan struct{})
	go func() { g.GracefulStop(); close(done) }()
	timer := time.NewTimer(s.opts.StopTimeout)
	defer timer.Stop()
	select {
	case <-done:
		s.log.Info("xDS server stopped")
	case <-timer.C:
		s.log.Warn("xDS server did not stop gracefully in time; closing connections", "timeout", s.opts.StopTimeout)
		g.Stop()
		<-done
	}
}
