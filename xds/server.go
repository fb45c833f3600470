package xds

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/log"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ingress-xds/ingress-xds/translate"
)

// Server holds the current snapshot and serves it over ADS, with CSDS, the
// Inspector, gRPC health and reflection beside it. All Envoys of a
// deployment get the same configuration, so one snapshot serves them all
// and a change is computed once, not once per node; per-node state (what
// each Envoy ACKed or NACKed) is kept per stream by the clients registry.
type Server struct {
	log     *slog.Logger
	opts    Options
	cache   *resourceCache
	clients *clients
	metrics *metrics
	health  *health.Server
	// clock is what the Server reads the time from and waits on (the
	// break-after-make deadlines); tests step a fake one.
	clock clock
	// admission holds back SotW streams of load assignments while their
	// clients are expected to send names (admission.go).
	admission *sotwAdmission

	mu        sync.Mutex
	snapshot  *Snapshot
	snapshots *snapshotter // guarded by mu
	steps     publishSteps // the last Publish's, guarded by mu
	keep      keeping      // removed clusters still published (breakaftermake.go), guarded by mu
}

// Options tune the transport. The zero value of each field means its
// default.
type Options struct {
	// MaxRecvMessageBytes bounds a request. Envoy's requests name the
	// resources they want, which for EDS in a large cluster means tens of
	// thousands of names. Default 64 MiB.
	MaxRecvMessageBytes int
	// MaxSendMessageBytes bounds a response: all listeners or all clusters
	// of a large cluster in one message. Default 512 MiB.
	MaxSendMessageBytes int
	// KeepaliveTime is how long a connection may be idle before the server
	// pings it; KeepaliveTimeout how long it waits for the answer before
	// dropping a dead Envoy and its watches. Defaults 30s and 10s.
	KeepaliveTime, KeepaliveTimeout time.Duration
	// MaxConnectionAge is how long an Envoy's connection lasts before
	// the server asks it to move to a new one (gRPC's GOAWAY, jittered by
	// gRPC by a tenth either way), so that Envoys spread again over the
	// replicas: an Envoy stays on the replica it reached, and after a
	// rollout the replica that stayed up holds every Envoy
	// (docs/install.md, "Envoys across the replicas"). Its streams may finish for
	// MaxConnectionAgeGrace, then the connection is closed and the Envoy,
	// keeping its configuration, reopens its stream on the new connection.
	// Defaults 30m (Istio's) and 10s; negative: connections never age.
	MaxConnectionAge, MaxConnectionAgeGrace time.Duration
	// StopTimeout bounds a graceful stop. Default 10s.
	StopTimeout time.Duration
	// TLS, when set, serves gRPC over TLS with it (see ServerTLS for
	// mutual TLS); nil serves plaintext.
	TLS *tls.Config
	// Answers, when set, is told of every ACK and NACK (observer.go).
	Answers AnswerObserver
	// SotWBudget bounds, in bytes, what the clients of SotW streams of
	// load assignments are expected to send at once: a new stream, or a
	// response of load assignments, waits beyond it (admission.go).
	// Default DefaultSotWBudget.
	SotWBudget int64
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxRecvMessageBytes, 64<<20)
	def(&o.MaxSendMessageBytes, 512<<20)
	defDur(&o.KeepaliveTime, 30*time.Second)
	defDur(&o.KeepaliveTimeout, 10*time.Second)
	defDur(&o.StopTimeout, 10*time.Second)
	if o.MaxConnectionAge == 0 {
		o.MaxConnectionAge = 30 * time.Minute
	}
	defDur(&o.MaxConnectionAgeGrace, 10*time.Second)
	if o.SotWBudget <= 0 {
		o.SotWBudget = DefaultSotWBudget
	}
	return o
}

// NewServer returns a Server with an empty cache: Envoys that connect before
// the first Publish wait rather than receive an empty configuration.
func NewServer(logger *slog.Logger) *Server {
	return NewServerWithOptions(logger, Options{})
}

// NewServerWithOptions is NewServer with transport options.
func NewServerWithOptions(logger *slog.Logger, o Options) *Server {
	hs := health.NewServer()
	// Not serving until the first snapshot: a load balancer or an Envoy
	// health-checking the control plane should pick a replica that has one.
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	o = o.withDefaults()
	admission := newSotWAdmission(o.SotWBudget, realClock{})
	m := newMetrics()
	m.countWaiting(admission)
	return &Server{
		log:       logger,
		opts:      o,
		admission: admission,
		cache:     newResourceCache(logger),
		clients:   newClients(),
		snapshots: newSnapshotter(),
		metrics:   m,
		health:    hs,
		clock:     realClock{},
	}
}

// Publish validates the resources and makes them the snapshot served to every
// Envoy. Only the types whose content changed get a new version, so only
// those are sent: a change to endpoints alone pushes only EDS. Publishing
// content identical to the current snapshot changes no version and sends
// nothing. It returns the snapshot being served.
//
// A cluster r no longer has stays published, with its load assignment,
// until the Envoys have acknowledged the routes that stopped using it
// (break-after-make, breakaftermake.go); the snapshot returned has it.
func (s *Server) Publish(ctx context.Context, r *translate.Resources) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.publishLocked(ctx, r)
}

func (s *Server) publishLocked(_ context.Context, in *translate.Resources) (*Snapshot, error) {
	start := s.now()
	r, kept := s.withKept(in)
	if err := s.snapshots.validate(r); err != nil {
		s.metrics.publishes.WithLabelValues("invalid").Inc()
		return nil, fmt.Errorf("refusing to publish invalid resources: %w", err)
	}
	validated := s.now()
	snap, err := s.snapshots.snapshot(r)
	s.steps = publishSteps{validate: validated.Sub(start), assemble: s.now().Sub(validated)}
	if err != nil {
		s.metrics.publishes.WithLabelValues("invalid").Inc()
		return nil, err
	}
	if s.snapshot != nil && sameVersions(s.snapshot, snap) {
		s.keptPublished(in, kept, s.cache.lastUpdate())
		s.metrics.publishes.WithLabelValues("unchanged").Inc()
		s.metrics.publishSeconds.Observe(s.now().Sub(start).Seconds())
		return s.snapshot, nil
	}
	s.keptPublished(in, kept, s.cache.update(s.snapshots.changedTypes(s.snapshot)))
	first := s.snapshot == nil
	s.snapshot = snap
	now := s.now()
	s.metrics.publishes.WithLabelValues("changed").Inc()
	s.metrics.publishSeconds.Observe(now.Sub(start).Seconds())
	s.metrics.published(snap, resourceCounts(snap), now)
	if first {
		s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	}
	return snap, nil
}

func (s *Server) now() time.Time { return s.clock.Now() }

// ObserveBuild records how long a whole rebuild took, from reading cluster
// state to the snapshot being published. Publish cannot see the translation
// part, so the caller reports it.
func (s *Server) ObserveBuild(d time.Duration) {
	s.metrics.buildSeconds.Observe(d.Seconds())
}

// Snapshot returns the snapshot being served, or nil before the first Publish.
func (s *Server) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot
}

// Ready reports whether a snapshot has been published.
func (s *Server) Ready() bool {
	return s.Snapshot() != nil
}

func goControlPlaneLogger(l *slog.Logger) log.Logger {
	// go-control-plane's debug messages list every resource name: format
	// them only when they will be written (at scale, formatting them was a
	// large share of the CPU).
	debug := func(f string, a ...any) {
		if l.Enabled(context.Background(), slog.LevelDebug) {
			l.Debug(fmt.Sprintf(f, a...), "component", "go-control-plane")
		}
	}
	return log.LoggerFuncs{
		DebugFunc: debug,
		InfoFunc:  debug,
		WarnFunc:  func(f string, a ...any) { l.Warn(fmt.Sprintf(f, a...), "component", "go-control-plane") },
		ErrorFunc: func(f string, a ...any) { l.Error(fmt.Sprintf(f, a...), "component", "go-control-plane") },
	}
}
