package xds

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	sotwserver "github.com/envoyproxy/go-control-plane/pkg/server/sotw/v3"
	streamv3 "github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// xdsServer is go-control-plane's server for delta and REST, with our own
// server for state-of-the-world streams (sotwServer).
type xdsServer struct {
	serverv3.Server
	sotw *sotwServer
}

// newXDSServer serves c through callbacks cb until ctx ends (assumption
// 14). We do not use go-control-plane's WithOrderedADS: SotW types go out in
// no particular order (assumption 8). SotW streams of load assignments
// hold a place in admission while their clients are expected to send the
// names served (admission.go); nil admits every stream at once.
func newXDSServer(ctx context.Context, c cache.Cache, cb serverv3.Callbacks, logger *slog.Logger, admission *sotwAdmission, served *servedNames) xdsServer {
	return xdsServer{
		Server: serverv3.NewServer(ctx, c, cb, sotwserver.WithLogger(goControlPlaneLogger(logger))),
		sotw:   &sotwServer{ctx: ctx, cache: c, cb: cb, log: logger, admission: admission, served: served},
	}
}

func (x xdsServer) StreamAggregatedResources(s discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return x.sotw.serve(s, resource.AnyType)
}

func (x xdsServer) StreamListeners(s listenerservice.ListenerDiscoveryService_StreamListenersServer) error {
	return x.sotw.serve(s, resource.ListenerType)
}

func (x xdsServer) StreamRoutes(s routeservice.RouteDiscoveryService_StreamRoutesServer) error {
	return x.sotw.serve(s, resource.RouteType)
}

func (x xdsServer) StreamClusters(s clusterservice.ClusterDiscoveryService_StreamClustersServer) error {
	return x.sotw.serve(s, resource.ClusterType)
}

func (x xdsServer) StreamEndpoints(s endpointservice.EndpointDiscoveryService_StreamEndpointsServer) error {
	return x.sotw.serve(s, resource.EndpointType)
}

func (x xdsServer) StreamSecrets(s secretservice.SecretDiscoveryService_StreamSecretsServer) error {
	return x.sotw.serve(s, resource.SecretType)
}

// sotwServer serves state-of-the-world streams, ADS and one type each. It
// is go-control-plane's SotW server as the cache relies on it (the
// assumptions of docs/xds-cache.md, which the contract test checks on this
// one), with one difference: a request's names are kept as the list it
// gives (sotwSubscription), not copied into a set. A SotW Envoy names
// every load assignment in each request of the type, and go-control-plane
// made a set of them for every request and kept the last one per stream:
// half of what a SotW client cost the control plane, and a set of every
// name per Envoy per change to collect (docs/benchmarks.md, "Issue 31:
// what a SotW client costs").
type sotwServer struct {
	ctx       context.Context
	cache     cache.ConfigWatcher
	cb        serverv3.Callbacks
	log       *slog.Logger
	streams   atomic.Int64 // SotW streams are numbered apart from delta's (assumption 9)
	admission *sotwAdmission
	served    *servedNames
}

// sotwWatch is a stream's open watch of a type.
type sotwWatch struct {
	cancel   func()
	response chan cache.Response // room for one (assumption 5)
	sub      *sotwSubscription
	nonce    string // of the last response of the type sent
}

// sotwStream is one stream's state; its goroutine alone touches it.
type sotwStream struct {
	id      int64
	str     streamv3.Stream
	cb      serverv3.Callbacks
	node    *corev3.Node // of the first request: Envoy sends it once
	nonce   int64
	watches map[string]*sotwWatch
	// ctx ends with the stream or the server.
	ctx context.Context
	// admission, for a stream of load assignments, holds back its first
	// requests and its load assignments while other clients are expected
	// to send names (admission.go); admitted is the stream's place in it
	// until its client answers the load assignments last sent.
	admission *sotwAdmission
	served    *servedNames
	admitted  *admissionTicket
}

// admit waits for the stream's place in the admission budget, weighed as
// what its client is expected to send: the names of every load
// assignment served, that many times, and the floor. It does nothing for
// a stream not of load assignments, or one that has its place.
func (st *sotwStream) admit(times int64) error {
	if st.admission == nil || st.admitted.holds() {
		return nil
	}
	weight := int64(admissionFloor)
	if st.served != nil {
		weight += times * st.served.index(resource.EndpointType).encodedSize()
	}
	t, err := st.admission.admit(st.ctx, weight)
	if err != nil {
		return err
	}
	st.admitted = t
	return nil
}

// serve runs one stream: its requests one at a time, in order, each
// through the request callback and then the cache (assumptions 1 and 2),
// and the cache's responses as they come, one at a time (assumption 18).
func (s *sotwServer) serve(str streamv3.Stream, defaultType string) error {
	ctx, cancel := context.WithCancel(str.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	st := &sotwStream{id: s.streams.Add(1), str: str, cb: s.cb, node: &corev3.Node{}, watches: map[string]*sotwWatch{}, ctx: ctx}
	if s.admission != nil && (defaultType == resource.AnyType || defaultType == resource.EndpointType) {
		st.admission, st.served = s.admission, s.served
	}
	defer st.close()
	if err := s.cb.OnStreamOpen(str.Context(), st.id, defaultType); err != nil {
		return err
	}
	// Nothing is read before the stream is admitted: what its client
	// sent waits in its flow-control window (admission.go). Its first
	// requests may name every load assignment, and so may its answer
	// to them.
	if err := st.admit(2); err != nil {
		if s.ctx.Err() != nil {
			return nil // the server's context ended: status OK (assumption 14)
		}
		return err
	}
	requests := make(chan *discoveryv3.DiscoveryRequest)
	go s.receive(str, requests)

	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(requests)},
	}
	for {
		// Among ready watches, reflect.Select picks at random: no order
		// across types is promised (assumption 8).
		chosen, value, ok := reflect.Select(cases)
		switch chosen {
		case 0:
			return nil // the server's context ended: status OK (assumption 14)
		case 1:
			if !ok {
				return nil // the client closed the stream, or it failed
			}
			changed, err := s.handle(st, value.Interface().(*discoveryv3.DiscoveryRequest), defaultType)
			if err != nil {
				return err
			}
			if changed {
				cases = cases[:2]
				for _, w := range st.watches {
					cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.response)})
				}
			}
		default:
			if !ok || value.IsNil() {
				return status.Errorf(codes.Unavailable, "resource watch %d failed", chosen)
			}
			if err := st.send(value.Interface().(cache.Response)); err != nil {
				if s.ctx.Err() != nil {
					return nil // the server's context ended while the response waited for admission
				}
				return err
			}
		}
	}
}

// receive hands the stream's requests to its goroutine until the stream
// or the server ends.
func (s *sotwServer) receive(str streamv3.Stream, requests chan<- *discoveryv3.DiscoveryRequest) {
	defer close(requests)
	for {
		req, err := str.Recv()
		if err != nil {
			return
		}
		select {
		case requests <- req:
		case <-str.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// handle takes one request: it reports whether the stream's watches
// changed (a stale request changes nothing).
func (s *sotwServer) handle(st *sotwStream, req *discoveryv3.DiscoveryRequest, defaultType string) (bool, error) {
	if req == nil {
		return false, status.Errorf(codes.Unavailable, "empty request")
	}
	if req.GetNode() != nil {
		st.node = req.GetNode()
	} else {
		req.Node = st.node // before the callback (assumption 9)
	}
	switch {
	case defaultType == resource.AnyType && req.GetTypeUrl() == "":
		return false, status.Errorf(codes.InvalidArgument, "type URL is required for ADS")
	case req.GetTypeUrl() == "":
		req.TypeUrl = defaultType
	}
	if err := s.cb.OnStreamRequest(st.id, req); err != nil {
		return false, err
	}
	typeURL := req.GetTypeUrl()
	var sub *sotwSubscription
	if w, ok := st.watches[typeURL]; ok {
		if w.nonce != "" && req.GetResponseNonce() != w.nonce {
			// It answers an older response than the last one sent: the
			// watch stays as it is (assumption 4).
			s.log.Debug("xDS request with a stale nonce ignored", "stream", st.id, "protocol", protocolSotW, "type", typeURL)
			return false, nil
		}
		if typeURL == resource.EndpointType && w.nonce != "" {
			// The client has answered the load assignments last sent:
			// what it was expected to send is read (admission.go).
			st.admitted.release()
			st.admitted = nil
		}
		// Cancelled before its subscription changes, so the cache never
		// answers a watch whose subscription is being changed (assumption
		// 3). Its channel goes with it: a response still waiting there is
		// dropped, and its map never returned (assumption 7).
		w.cancel()
		sub = w.sub
		sub.subscribe(req.GetResourceNames())
	} else {
		sub = newSotwSubscription(req.GetResourceNames())
	}
	response := make(chan cache.Response, 1)
	cancel, err := s.cache.CreateWatch(req, sub, response)
	if err != nil {
		return false, fmt.Errorf("watch of %s on stream %d: %w", typeURL, st.id, err)
	}
	st.watches[typeURL] = &sotwWatch{cancel: cancel, response: response, sub: sub}
	return true, nil
}

// send sends a response with a nonce of the stream's, after keeping what
// it says the client now holds for the next watch of its type (assumption
// 6) and calling the response callback (assumption 15).
func (st *sotwStream) send(resp cache.Response) error {
	if resp == nil {
		return errors.New("missing response")
	}
	out, err := resp.GetDiscoveryResponse()
	if err != nil {
		return err
	}
	typeURL := resp.GetRequest().GetTypeUrl()
	if typeURL == resource.EndpointType {
		// Its client will answer naming them all again: it waits for a
		// place in the admission budget (admission.go).
		if err := st.admit(1); err != nil {
			return err
		}
	}
	st.nonce++
	out.Nonce = strconv.FormatInt(st.nonce, 10)
	w, ok := st.watches[typeURL]
	if !ok {
		return fmt.Errorf("no watch of %s for a response", typeURL)
	}
	w.sub.returned = resp.GetReturnedResources()
	w.nonce = out.Nonce
	st.cb.OnStreamResponse(resp.GetContext(), st.id, resp.GetRequest(), out)
	return st.str.Send(out)
}

// close cancels every watch, then tells the callbacks, with the node of
// the first request (assumptions 3 and 9).
func (st *sotwStream) close() {
	st.admitted.release()
	for _, w := range st.watches {
		w.cancel()
	}
	st.cb.OnStreamClosed(st.id, st.node)
}

// sotwSubscription is what a SotW stream's requests of a type subscribe
// to, kept as the last request's list of names rather than a set of them.
// A request naming each served resource once is decoded to the content's
// own list (requestnames.go); the cache then gives the subscription that
// content's index (indexBy), and asks it whether it names a resource
// without a set (subscribes). The set is made only when something asks for
// it (SubscribedResources), which a client that names every resource of a
// content does not cause.
//
// Wildcards are go-control-plane's: a request naming nothing, before any
// request named something, subscribes to everything (assumption 17), as
// does one naming "*".
type sotwSubscription struct {
	names    []string
	set      map[string]struct{} // names without "*", when made
	index    *nameIndex          // names's own, when names is a content's list
	wildcard bool
	legacy   bool // no request has named anything yet
	returned map[string]string
}

var _ cache.Subscription = (*sotwSubscription)(nil)

func newSotwSubscription(names []string) *sotwSubscription {
	s := &sotwSubscription{legacy: true, wildcard: len(names) == 0, returned: map[string]string{}}
	s.subscribe(names)
	return s
}

// subscribe makes a request's names the subscription. What the client
// holds that the request no longer names is forgotten, so that a name
// asked for again is sent again (assumption 13).
func (s *sotwSubscription) subscribe(names []string) {
	if s.legacy {
		if len(names) == 0 {
			return
		}
		s.legacy = false
	}
	s.names, s.set, s.index = names, nil, nil
	s.wildcard = slices.Contains(names, wildcardName)
	if s.wildcard || len(s.returned) == 0 {
		return
	}
	set := s.SubscribedResources()
	for name := range s.returned {
		if _, ok := set[name]; !ok {
			delete(s.returned, name)
		}
	}
}

// indexBy notes that sub's names are the list x indexes, if they are and
// sub is ours: it then answers for its names through x.
func indexBy(sub cache.Subscription, x *nameIndex) {
	if s, ok := sub.(*sotwSubscription); ok && x != nil && sameList(s.names, x.names) {
		s.index = x
	}
}

func (s *sotwSubscription) SubscribedResources() map[string]struct{} {
	if s.set == nil {
		s.set = make(map[string]struct{}, len(s.names))
		for _, name := range s.names {
			if name != wildcardName {
				s.set[name] = struct{}{}
			}
		}
	}
	return s.set
}

func (s *sotwSubscription) IsWildcard() bool                     { return s.wildcard }
func (s *sotwSubscription) ReturnedResources() map[string]string { return s.returned }

// subscribes says whether sub names name.
func subscribes(sub cache.Subscription, name string) bool {
	if s, ok := sub.(*sotwSubscription); ok && s.index != nil {
		_, ok := s.index.lookup(name)
		return ok
	}
	_, ok := sub.SubscribedResources()[name]
	return ok
}

// subscribedCount is how many names sub names.
func subscribedCount(sub cache.Subscription) int {
	if s, ok := sub.(*sotwSubscription); ok && s.index != nil {
		return len(s.names)
	}
	return len(sub.SubscribedResources())
}

// subscribedNames is the names sub names, each once.
func subscribedNames(sub cache.Subscription) iter.Seq[string] {
	if s, ok := sub.(*sotwSubscription); ok && s.index != nil {
		return slices.Values(s.names)
	}
	return maps.Keys(sub.SubscribedResources())
}
