package xds

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// contractHarness is our resource cache and stream callbacks behind the
// servers as register wires them (newXDSServer: our SotW server,
// go-control-plane's delta server), served over gRPC on a loopback port.
// It records, in the order they happen, what the server does to the cache
// and the callbacks and what gRPC hands it, so that the contract test can
// check what the cache assumes of the server (docs/xds-cache.md) on the
// real thing.
type contractHarness struct {
	t      *testing.T
	s      *Server
	conn   *grpc.ClientConn
	events chan contractEvent
	// endServer ends the context the servers run in.
	endServer context.CancelFunc

	mu   sync.Mutex
	gate chan struct{} // when set, the next gateType request waits on it
}

// gateType is a type the cache never has: a request for it is never
// answered, and the harness can hold the stream's goroutine in its
// callback (see arm).
const gateType = resource.ExtensionConfigType

type eventKind string

const (
	evReceived eventKind = "received" // gRPC handed the server a request
	evOpen     eventKind = "open"     // OnStreamOpen / OnDeltaStreamOpen
	evRequest  eventKind = "request"  // OnStreamRequest / OnStreamDeltaRequest
	evGated    eventKind = "gated"    // a gateType request is being held
	evWatch    eventKind = "watch"    // CreateWatch / CreateDeltaWatch returned
	evCancel   eventKind = "cancel"   // a watch's cancel was called
	evResponse eventKind = "response" // OnStreamResponse / OnStreamDeltaResponse
	evClosed   eventKind = "closed"   // OnStreamClosed / OnDeltaStreamClosed
)

// contractEvent is one thing the server did. Which fields are set depends
// on the kind.
type contractEvent struct {
	kind    eventKind
	delta   bool
	stream  int64
	typeURL string
	nonce   string // the request's response_nonce, or the response's nonce
	version string // the request's version_info, or the response's version
	node    *corev3.Node
	// req is the request, by identity (request and watch events).
	req any
	// Watch events: the watch's number (its cancel event has it too),
	// what the subscription said when the watch was asked for, the
	// channel given (identity and capacity) and whether the cache
	// answered at once.
	watch      int64
	returned   map[string]string
	subscribed map[string]struct{}
	wildcard   bool
	channel    uintptr
	capacity   int
	lenBefore  int
	answered   bool
	// Response events: the resources by name with their versions (the
	// response's version in SotW), and what the context carried.
	resources    map[string]string
	sentNames    []string
	sentVersions map[string]string
}

func startContract(t *testing.T) *contractHarness {
	t.Helper()
	h := &contractHarness{t: t, events: make(chan contractEvent, 1<<16)}
	h.s = NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	h.endServer = cancel
	g := grpc.NewServer(grpc.StreamInterceptor(h.intercept))
	xdsServer := newXDSServer(ctx, &recordingCache{resourceCache: h.s.cache, h: h}, recordingCallbacks{callbacks: callbacks{h.s}, h: h}, slog.New(slog.NewTextHandler(io.Discard, nil)), newSotWAdmission(DefaultSotWBudget, realClock{}), &h.s.cache.served)
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(g, xdsServer)
	clusterservice.RegisterClusterDiscoveryServiceServer(g, xdsServer)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve(lis) }()
	h.conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.conn.Close()
		cancel()
		g.Stop()
		if err := <-served; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return h
}

func (h *contractHarness) publish(f fixture) {
	h.t.Helper()
	if _, err := h.s.Publish(context.Background(), f.resources(h.t)); err != nil {
		h.t.Fatalf("publish: %v", err)
	}
}

// client opens an ADS stream, SotW or delta, that ends with the test.
func (h *contractHarness) client(nodeID string, delta bool) (*scripted, context.CancelFunc) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(h.conn)
	c := &scripted{t: h.t, node: &corev3.Node{Id: nodeID}}
	var err error
	if delta {
		c.delta, err = ads.DeltaAggregatedResources(ctx)
	} else {
		c.sotw, err = ads.StreamAggregatedResources(ctx)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return c, cancel
}

func (h *contractHarness) emit(e contractEvent) { h.events <- e }

// next returns the next event that matches, skipping the others. The
// timeout only bounds a hang: the events come in the order the server
// makes them, and no test depends on when.
func (h *contractHarness) next(what string, match func(contractEvent) bool) contractEvent {
	h.t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case e := <-h.events:
			if match(e) {
				return e
			}
		case <-timeout.C:
			h.t.Fatalf("no %s event", what)
			return contractEvent{}
		}
	}
}

// is matches events of a kind and, unless "", a type.
func is(kind eventKind, typeURL string) func(contractEvent) bool {
	return func(e contractEvent) bool { return e.kind == kind && (typeURL == "" || e.typeURL == typeURL) }
}

// arm makes the next gateType request wait in its callback, holding the
// stream's goroutine, until the returned channel is closed.
func (h *contractHarness) arm() chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
	return h.gate
}

func (h *contractHarness) takeGate(typeURL string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if typeURL != gateType {
		return nil
	}
	g := h.gate
	h.gate = nil
	return g
}

// watches counts the watches the cache holds open for a type.
func (h *contractHarness) watches(delta bool, typeURL string) int {
	c := h.s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.watches[typeURL] {
		if w.isDelta() == delta {
			n++
		}
	}
	return n
}

// intercept records each request as gRPC hands it to the server, before
// the server's own goroutines see it.
func (h *contractHarness) intercept(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, receivedRecorder{ServerStream: ss, h: h})
}

type receivedRecorder struct {
	grpc.ServerStream
	h *contractHarness
}

func (r receivedRecorder) RecvMsg(m any) error {
	if err := r.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	e := contractEvent{kind: evReceived}
	switch req := m.(type) {
	case *discoveryv3.DiscoveryRequest:
		e.typeURL, e.nonce = req.GetTypeUrl(), req.GetResponseNonce()
	case *discoveryv3.DeltaDiscoveryRequest:
		e.delta, e.typeURL, e.nonce = true, req.GetTypeUrl(), req.GetResponseNonce()
	}
	r.h.emit(e)
	return nil
}

// recordingCache is our cache, recording each watch and each cancel.
type recordingCache struct {
	*resourceCache
	h     *contractHarness
	watch atomic.Int64
}

func (r *recordingCache) CreateWatch(req *cache.Request, sub cache.Subscription, out chan cache.Response) (func(), error) {
	e := r.watchEvent(false, req.GetTypeUrl(), req, sub, reflect.ValueOf(out).Pointer(), cap(out), len(out))
	e.nonce, e.version, e.node = req.GetResponseNonce(), req.GetVersionInfo(), req.GetNode()
	cancel, err := r.resourceCache.CreateWatch(req, sub, out)
	return r.recorded(e, len(out), cancel), err
}

func (r *recordingCache) CreateDeltaWatch(req *cache.DeltaRequest, sub cache.Subscription, out chan cache.DeltaResponse) (func(), error) {
	e := r.watchEvent(true, req.GetTypeUrl(), req, sub, reflect.ValueOf(out).Pointer(), cap(out), len(out))
	e.nonce, e.node = req.GetResponseNonce(), req.GetNode()
	cancel, err := r.resourceCache.CreateDeltaWatch(req, sub, out)
	return r.recorded(e, len(out), cancel), err
}

// watchEvent is a watch as asked for: what the subscription said before
// the cache saw it, and how full the channel was (before is its length).
func (r *recordingCache) watchEvent(delta bool, typeURL string, req any, sub cache.Subscription, ch uintptr, capacity, before int) contractEvent {
	return contractEvent{
		kind: evWatch, delta: delta, typeURL: typeURL, req: req, watch: r.watch.Add(1),
		returned: maps.Clone(sub.ReturnedResources()), subscribed: maps.Clone(sub.SubscribedResources()), wildcard: sub.IsWildcard(),
		channel: ch, capacity: capacity, lenBefore: before,
	}
}

// recorded emits the watch event and wraps its cancel. No test publishes
// while a watch is being asked for, so a longer channel means the cache
// answered at once.
func (r *recordingCache) recorded(e contractEvent, after int, cancel func()) func() {
	e.answered = after > e.lenBefore
	r.h.emit(e)
	return func() {
		r.h.emit(contractEvent{kind: evCancel, delta: e.delta, typeURL: e.typeURL, watch: e.watch})
		cancel()
	}
}

// recordingCallbacks are our callbacks, recording each call.
type recordingCallbacks struct {
	callbacks
	h *contractHarness
}

func (c recordingCallbacks) OnStreamOpen(ctx context.Context, id int64, typeURL string) error {
	c.h.emit(contractEvent{kind: evOpen, stream: id, typeURL: typeURL})
	return c.callbacks.OnStreamOpen(ctx, id, typeURL)
}

func (c recordingCallbacks) OnStreamClosed(id int64, node *corev3.Node) {
	c.callbacks.OnStreamClosed(id, node)
	c.h.emit(contractEvent{kind: evClosed, stream: id, node: node})
}

func (c recordingCallbacks) OnStreamRequest(id int64, req *discoveryv3.DiscoveryRequest) error {
	c.h.emit(contractEvent{kind: evRequest, stream: id, typeURL: req.GetTypeUrl(), nonce: req.GetResponseNonce(),
		version: req.GetVersionInfo(), node: req.GetNode(), req: req})
	c.hold(id, false, req.GetTypeUrl())
	return c.callbacks.OnStreamRequest(id, req)
}

func (c recordingCallbacks) OnStreamResponse(ctx context.Context, id int64, req *discoveryv3.DiscoveryRequest, resp *discoveryv3.DiscoveryResponse) {
	c.callbacks.OnStreamResponse(ctx, id, req, resp)
	e := contractEvent{kind: evResponse, stream: id, typeURL: resp.GetTypeUrl(), nonce: resp.GetNonce(), version: resp.GetVersionInfo(),
		resources: map[string]string{}}
	if sent, ok := sentListOf(ctx); ok {
		// What the registry is told: a full response's names, or a
		// partial one's names with their versions.
		if sent.full {
			e.sentNames = sent.list.names
		} else {
			e.sentVersions = sentResponse{list: sent.list}.namesSet()
		}
	}
	for _, a := range resp.GetResources() {
		e.resources[resourceName(a.GetValue())] = resp.GetVersionInfo()
	}
	c.h.emit(e)
}

func (c recordingCallbacks) OnDeltaStreamOpen(ctx context.Context, id int64, typeURL string) error {
	c.h.emit(contractEvent{kind: evOpen, delta: true, stream: id, typeURL: typeURL})
	return c.callbacks.OnDeltaStreamOpen(ctx, id, typeURL)
}

func (c recordingCallbacks) OnDeltaStreamClosed(id int64, node *corev3.Node) {
	c.callbacks.OnDeltaStreamClosed(id, node)
	c.h.emit(contractEvent{kind: evClosed, delta: true, stream: id, node: node})
}

func (c recordingCallbacks) OnStreamDeltaRequest(id int64, req *discoveryv3.DeltaDiscoveryRequest) error {
	c.h.emit(contractEvent{kind: evRequest, delta: true, stream: id, typeURL: req.GetTypeUrl(), nonce: req.GetResponseNonce(),
		node: req.GetNode(), req: req})
	c.hold(id, true, req.GetTypeUrl())
	return c.callbacks.OnStreamDeltaRequest(id, req)
}

func (c recordingCallbacks) OnStreamDeltaResponse(id int64, req *discoveryv3.DeltaDiscoveryRequest, resp *discoveryv3.DeltaDiscoveryResponse) {
	c.callbacks.OnStreamDeltaResponse(id, req, resp)
	e := contractEvent{kind: evResponse, delta: true, stream: id, typeURL: resp.GetTypeUrl(), nonce: resp.GetNonce(),
		version: resp.GetSystemVersionInfo(), resources: map[string]string{}}
	for _, r := range resp.GetResources() {
		e.resources[r.GetName()] = r.GetVersion()
	}
	c.h.emit(e)
}

// hold keeps an armed gateType request waiting until its gate opens.
func (c recordingCallbacks) hold(id int64, delta bool, typeURL string) {
	if g := c.h.takeGate(typeURL); g != nil {
		c.h.emit(contractEvent{kind: evGated, delta: delta, stream: id, typeURL: typeURL})
		<-g
	}
}
