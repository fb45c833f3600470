package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/log"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/ingress-xds/ingress-xds/translate"
)

// sharedKey is the one cache key every Envoy maps to: all Envoys of a
// deployment get the same configuration, so one snapshot serves them all and
// a change is computed once, not once per node.
const sharedKey = "ingress-xds"

type sharedNodeHash struct{}

func (sharedNodeHash) ID(*corev3.Node) string { return sharedKey }

// Server holds the current snapshot and serves it over ADS.
type Server struct {
	log   *slog.Logger
	cache cache.SnapshotCache

	mu       sync.Mutex
	snapshot *cache.Snapshot
}

// NewServer returns a Server with an empty cache: Envoys that connect before
// the first Publish wait rather than receive an empty configuration.
func NewServer(logger *slog.Logger) *Server {
	return &Server{
		log:   logger,
		cache: cache.NewSnapshotCache(true, sharedNodeHash{}, goControlPlaneLogger(logger)),
	}
}

// Publish validates the resources and makes them the snapshot served to every
// Envoy. Publishing content identical to the current snapshot changes no
// version and sends nothing. It returns the new snapshot.
func (s *Server) Publish(ctx context.Context, r *translate.Resources) (*cache.Snapshot, error) {
	if err := Validate(r); err != nil {
		return nil, fmt.Errorf("refusing to publish invalid resources: %w", err)
	}
	snap, err := NewSnapshot(r)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.cache.SetSnapshot(ctx, sharedKey, snap); err != nil {
		return nil, fmt.Errorf("setting snapshot: %w", err)
	}
	s.snapshot = snap
	return snap, nil
}

// Snapshot returns the snapshot being served, or nil before the first Publish.
func (s *Server) Snapshot() *cache.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot
}

// Serve listens on address and serves ADS (state of the world and delta) and
// the per-type discovery services until ctx is done, then stops gracefully so
// that Envoys keep their configuration and reconnect elsewhere.
func (s *Server) Serve(ctx context.Context, address string) error {
	lis, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("listening for xDS on %s: %w", address, err)
	}
	return s.ServeListener(ctx, lis)
}

// ServeListener is Serve on an existing listener.
func (s *Server) ServeListener(ctx context.Context, lis net.Listener) error {
	grpcServer := grpc.NewServer(
		grpc.MaxConcurrentStreams(1<<20),
		grpc.MaxRecvMsgSize(64<<20),
		grpc.MaxSendMsgSize(256<<20),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 5 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 15 * time.Second, PermitWithoutStream: true}),
	)
	xdsServer := serverv3.NewServer(ctx, s.cache, s.callbacks())
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(grpcServer, xdsServer)
	listenerservice.RegisterListenerDiscoveryServiceServer(grpcServer, xdsServer)
	routeservice.RegisterRouteDiscoveryServiceServer(grpcServer, xdsServer)
	clusterservice.RegisterClusterDiscoveryServiceServer(grpcServer, xdsServer)
	endpointservice.RegisterEndpointDiscoveryServiceServer(grpcServer, xdsServer)
	secretservice.RegisterSecretDiscoveryServiceServer(grpcServer, xdsServer)

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		done := make(chan struct{})
		go func() { grpcServer.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			// Streams are long-lived; do not wait for Envoys forever.
			grpcServer.Stop()
		}
	}()
	s.log.Info("serving xDS", "address", lis.Addr().String())
	err := grpcServer.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	<-stopped
	return err
}

func (s *Server) callbacks() serverv3.Callbacks {
	return serverv3.CallbackFuncs{
		StreamOpenFunc: func(ctx context.Context, id int64, typeURL string) error {
			s.log.Debug("xDS stream opened", "stream", id, "type", typeURL)
			return nil
		},
		StreamClosedFunc: func(id int64, node *corev3.Node) {
			s.log.Info("xDS stream closed", "stream", id, "node", node.GetId())
		},
		StreamRequestFunc: func(id int64, req *discoverygrpc.DiscoveryRequest) error {
			if req.ErrorDetail != nil {
				s.log.Error("envoy rejected configuration (NACK)", "node", req.GetNode().GetId(),
					"type", req.TypeUrl, "version", req.VersionInfo, "nonce", req.ResponseNonce,
					"error", req.ErrorDetail.GetMessage())
			}
			return nil
		},
		DeltaStreamOpenFunc: func(ctx context.Context, id int64, typeURL string) error {
			s.log.Debug("delta xDS stream opened", "stream", id, "type", typeURL)
			return nil
		},
		DeltaStreamClosedFunc: func(id int64, node *corev3.Node) {
			s.log.Info("delta xDS stream closed", "stream", id, "node", node.GetId())
		},
		StreamDeltaRequestFunc: func(id int64, req *discoverygrpc.DeltaDiscoveryRequest) error {
			if req.ErrorDetail != nil {
				s.log.Error("envoy rejected configuration (NACK)", "node", req.GetNode().GetId(),
					"type", req.TypeUrl, "nonce", req.ResponseNonce, "error", req.ErrorDetail.GetMessage())
			}
			return nil
		},
	}
}

func goControlPlaneLogger(l *slog.Logger) log.Logger {
	return log.LoggerFuncs{
		DebugFunc: func(f string, a ...any) { l.Debug(fmt.Sprintf(f, a...), "component", "go-control-plane") },
		InfoFunc:  func(f string, a ...any) { l.Debug(fmt.Sprintf(f, a...), "component", "go-control-plane") },
		WarnFunc:  func(f string, a ...any) { l.Warn(fmt.Sprintf(f, a...), "component", "go-control-plane") },
		ErrorFunc: func(f string, a ...any) { l.Error(fmt.Sprintf(f, a...), "component", "go-control-plane") },
	}
}
