package xds

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// cacheClient plays go-control-plane's server for one stream and one type,
// the way its sotw and delta servers drive a cache: it opens a watch, takes
// the answer, records what the client now holds, and opens the next watch,
// as an ACK would. held is what the client holds, by name.
type cacheClient struct {
	name    string
	delta   bool
	typeURL string
	// names is the subscription; nil means wildcard.
	names []string

	sub     stream.Subscription
	version string // SotW: the version last received
	nonce   string
	held    map[string]*anypb.Any
	sotwOut chan cache.Response
	dOut    chan cache.DeltaResponse
	cancel  func()
	answers int
	// slow clients acknowledge a response only at the next drain, after
	// the next change: the change lands between a response and its ACK.
	slow, ackDue bool
	// lag makes a slow client wait this many more drains (changes)
	// before it acknowledges; waiting counts them down.
	lag, waiting int
	// stale says that the last drain waited: changes may have come that
	// the client was not sent.
	stale bool
	// stream, when set, binds each request to that stream, as the
	// request callback does (makebeforebreak.go); nack makes the next
	// request a rejection of the last response.
	stream *streamKey
	nack   bool
	// follow, when set, gives a SotW client's names before each request,
	// as the codec gives them (sotwheld_test.go).
	follow func() []string
}

func newCacheClient(name string, delta bool, typeURL string, names []string) *cacheClient {
	c := &cacheClient{
		name: name, delta: delta, typeURL: typeURL, names: names, held: map[string]*anypb.Any{},
		sotwOut: make(chan cache.Response, 1), dOut: make(chan cache.DeltaResponse, 1),
	}
	if delta {
		c.sub = stream.NewDeltaSubscription(names, nil, nil, true)
	} else {
		c.sub = stream.NewSotwSubscription(names, true)
	}
	return c
}

// watch opens the next watch, as the server does on each request.
func (c *cacheClient) watch(t testing.TB, rc *resourceCache, subscribe, unsubscribe []string) {
	t.Helper()
	if c.cancel != nil {
		c.cancel()
	}
	var err error
	if c.delta {
		c.sub.UpdateResourceSubscriptions(subscribe, unsubscribe)
		for _, name := range unsubscribe {
			delete(c.held, name) // Envoy drops what it no longer asks for
		}
		req := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: c.typeURL, ResponseNonce: c.nonce,
			ResourceNamesSubscribe: subscribe, ResourceNamesUnsubscribe: unsubscribe}
		if c.nack {
			req.ErrorDetail = &status.Status{Message: "rejected"}
		}
		if c.stream != nil {
			rc.bind(req, *c.stream)
		}
		c.cancel, err = rc.CreateDeltaWatch(req, c.sub, c.dOut)
	} else {
		if c.follow != nil {
			c.names = c.follow()
		}
		c.sub.SetResourceSubscription(c.names)
		// Envoy drops what it no longer asks for.
		if c.names != nil {
			asked := make(map[string]bool, len(c.names))
			for _, name := range c.names {
				asked[name] = true
			}
			for name := range c.held {
				if !asked[name] {
					delete(c.held, name)
				}
			}
		}
		req := &discoveryv3.DiscoveryRequest{TypeUrl: c.typeURL, VersionInfo: c.version, ResponseNonce: c.nonce, ResourceNames: c.names}
		if c.nack {
			// The version rejected, as the request callback rewrites a NACK.
			req.ErrorDetail = &status.Status{Message: "rejected"}
		}
		if c.stream != nil {
			rc.bind(req, *c.stream)
		}
		c.cancel, err = rc.CreateWatch(req, c.sub, c.sotwOut)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// drain takes every answer there is, opening a new watch after each.
func (c *cacheClient) drain(t testing.TB, rc *resourceCache) {
	t.Helper()
	c.stale = false
	if c.ackDue {
		if c.waiting > 0 {
			c.waiting--
			c.stale = true
			return
		}
		c.ackDue = false
		c.watch(t, rc, nil, nil)
	}
	for {
		select {
		case r := <-c.sotwOut:
			out, err := r.GetDiscoveryResponse()
			if err != nil {
				t.Fatal(err)
			}
			c.answers++
			c.nonce = fmt.Sprint(c.answers)
			c.version = out.GetVersionInfo()
			if cache.ResourceRequiresFullStateInSotw(c.typeURL) {
				c.held = map[string]*anypb.Any{} // the whole state
			}
			for _, a := range out.GetResources() {
				c.held[decodedName(t, c.typeURL, a)] = a
			}
			c.sub.SetReturnedResources(r.GetReturnedResources())
		case r := <-c.dOut:
			out, err := r.GetDeltaDiscoveryResponse()
			if err != nil {
				t.Fatal(err)
			}
			c.answers++
			c.nonce = fmt.Sprint(c.answers)
			for _, res := range out.GetResources() {
				c.held[res.GetName()] = res.GetResource()
			}
			for _, name := range out.GetRemovedResources() {
				delete(c.held, name)
			}
			c.sub.SetReturnedResources(r.GetReturnedResources())
		default:
			return
		}
		if c.slow {
			c.ackDue, c.waiting = true, c.lag
			return
		}
		c.watch(t, rc, nil, nil)
	}
}

func decodedName(t testing.TB, typeURL string, a *anypb.Any) string {
	t.Helper()
	m, err := a.UnmarshalNew()
	if err != nil {
		t.Fatalf("%s: %v", typeURL, err)
	}
	return cache.GetResourceName(m)
}

// check compares what the client holds with the snapshot, restricted to
// its subscription: the same names, and each the same message. A
// state-of-the-world client cannot be told that a route or load assignment
// is gone (Envoy drops one when nothing refers to it any more): those it
// still holds are not counted.
func (c *cacheClient) check(t *testing.T, snap *Snapshot) {
	t.Helper()
	want := maps.Clone(snap.GetResources(c.typeURL)) // shared: edited below
	held := maps.Clone(c.held)
	if !c.delta && !cache.ResourceRequiresFullStateInSotw(c.typeURL) {
		for name := range held {
			if _, ok := want[name]; !ok {
				delete(held, name)
			}
		}
	}
	if c.names != nil {
		keep := map[string]bool{}
		for _, n := range c.names {
			keep[n] = true
		}
		for n := range want {
			if !keep[n] {
				delete(want, n)
			}
		}
	}
	if got, wantNames := sortedKeys(held), sortedKeys(want); !slices.Equal(got, wantNames) {
		t.Fatalf("%s holds %v, want %v", c.name, got, wantNames)
	}
	for name, a := range held {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(m, want[name]) {
			t.Fatalf("%s holds another %s than the snapshot's:\n%v\nwant\n%v", c.name, name, m, want[name])
		}
	}
}

// TestCacheClientsFollowEveryChange publishes a random sequence of
// configurations (clusters added, removed, their endpoints changed) and
// checks that state-of-the-world and delta clients, wildcard and named,
// always end up holding exactly the snapshot's resources that they
// subscribe to, whether they were up to date when the change came (answered
// from the changed names alone) or connect afterwards (answered from a full
// comparison).
func TestCacheClientsFollowEveryChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := quietServer()
	f := fixture{listenerPort: 10000, clusters: map[string][]string{}}
	endpoint := func() string { return fmt.Sprintf("127.0.0.%d:%d", 1+rng.IntN(3), 8000+rng.IntN(3)) }
	for i := range 8 {
		f.clusters[fmt.Sprintf("c%d", i)] = []string{endpoint()}
	}

	var clients []*cacheClient
	for _, delta := range []bool{false, true} {
		p := map[bool]string{false: "sotw", true: "delta"}[delta]
		clients = append(clients,
			newCacheClient(p+"-cds", delta, resource.ClusterType, nil),
			newCacheClient(p+"-lds", delta, resource.ListenerType, nil),
			newCacheClient(p+"-rds", delta, resource.RouteType, []string{fixtureRoute}),
			// By name, every cluster's, as Envoy asks (updated below).
			newCacheClient(p+"-eds-all", delta, resource.EndpointType, sortedKeys(f.clusters)),
			newCacheClient(p+"-eds-some", delta, resource.EndpointType, []string{"c1", "c3", "c9", "c12"}),
		)
		slowCDS := newCacheClient(p+"-cds-slow", delta, resource.ClusterType, nil)
		slowEDS := newCacheClient(p+"-eds-slow", delta, resource.EndpointType, []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"})
		slowCDS.slow, slowEDS.slow = true, true
		// Slower: two changes land between a response and its ACK.
		slowerCDS := newCacheClient(p+"-cds-slower", delta, resource.ClusterType, nil)
		slowerEDS := newCacheClient(p+"-eds-slower", delta, resource.EndpointType, []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"})
		for _, c := range []*cacheClient{slowerCDS, slowerEDS} {
			c.slow, c.lag = true, 1
		}
		clients = append(clients, slowCDS, slowEDS, slowerCDS, slowerEDS,
			// Subscribes to and unsubscribes from load assignments as it goes.
			newCacheClient(p+"-eds-toggling", delta, resource.EndpointType, []string{"c0", "c4"}))
	}
	for _, c := range clients {
		c.watch(t, s.cache, c.names, nil) // before the first snapshot: waits
	}
	for step := range 200 {
		switch op := rng.IntN(10); {
		case op < 6: // endpoints of one cluster change
			names := sortedKeys(f.clusters)
			name := names[rng.IntN(len(names))]
			f.clusters[name] = []string{endpoint(), endpoint()}[:1+rng.IntN(2)]
		case op < 8: // a cluster comes
			f.clusters[fmt.Sprintf("c%d", rng.IntN(16))] = []string{endpoint()}
		default: // a cluster goes
			if names := sortedKeys(f.clusters); len(names) > 1 {
				delete(f.clusters, names[rng.IntN(len(names))])
			}
		}
		if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
			t.Fatal(err)
		}
		snap := s.Snapshot()
		for _, c := range clients {
			c.drain(t, s.cache)
			// The client that follows every cluster changes its
			// subscription as Envoy does when CDS changes.
			if c.name == "sotw-eds-all" || c.name == "delta-eds-all" {
				next := sortedKeys(snap.GetResources(resource.ClusterType))
				if !slices.Equal(next, c.names) {
					var sub, unsub []string
					for _, n := range next {
						if !slices.Contains(c.names, n) {
							sub = append(sub, n)
						}
					}
					for _, n := range c.names {
						if !slices.Contains(next, n) {
							unsub = append(unsub, n)
						}
					}
					c.names = next
					c.watch(t, s.cache, sub, unsub)
					c.drain(t, s.cache)
				}
			}
			if strings.HasSuffix(c.name, "-eds-toggling") {
				name := fmt.Sprintf("c%d", rng.IntN(16))
				var sub, unsub []string
				if i := slices.Index(c.names, name); i >= 0 {
					c.names = slices.Delete(c.names, i, i+1)
					unsub = []string{name}
				} else {
					c.names = append(c.names, name)
					sub = []string{name}
				}
				c.watch(t, s.cache, sub, unsub)
				c.drain(t, s.cache)
			}
			if c.stale {
				continue // has not acknowledged yet, so was sent nothing since
			}
			c.check(t, snap)
		}
		// Now and then a new client connects and must get the same.
		if step%25 == 0 {
			for _, delta := range []bool{false, true} {
				late := newCacheClient(fmt.Sprintf("late-%d-%v", step, delta), delta, resource.EndpointType, []string{"c2", "c5"})
				late.watch(t, s.cache, late.names, nil)
				late.drain(t, s.cache)
				late.check(t, snap)
				late.cancel()
			}
		}
	}
	// Up-to-date clients were answered only when something of theirs
	// changed: the route configuration changes with the cluster list
	// only, so its clients had far fewer answers than the steps.
	for _, c := range clients {
		if c.typeURL == resource.ListenerType && c.answers != 1 {
			t.Errorf("%s answered %d times; the listener never changed", c.name, c.answers)
		}
	}
}

// TestCacheDeltaSendsOnlyWhatChanged: a delta client up to date gets the one
// load assignment that changed, and nothing at all for a change to a
// resource it does not subscribe to.
func TestCacheDeltaSendsOnlyWhatChanged(t *testing.T) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{
		"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}, "c": {"127.0.0.1:3"},
	}}
	s := f.published(t)
	c := newCacheClient("eds", true, resource.EndpointType, []string{"a", "b"})
	c.watch(t, s.cache, c.names, nil)
	r := <-c.dOut
	if got := deltaNames(t, r); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("first answer has %v, want a and b", got)
	}
	c.sub.SetReturnedResources(r.GetReturnedResources())
	c.watch(t, s.cache, nil, nil)

	f.clusters["c"] = []string{"127.0.0.1:4"}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-c.dOut:
		t.Fatalf("answered with %v for a change to c, which it does not subscribe to", deltaNames(t, r))
	default:
	}

	f.clusters["b"] = []string{"127.0.0.1:5"}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-c.dOut:
		if got := deltaNames(t, r); !slices.Equal(got, []string{"b"}) {
			t.Fatalf("answer has %v, want only b", got)
		}
	default:
		t.Fatal("no answer for a change to b")
	}
}

// TestCacheSotWResponseDroppedBeforeSending plays what go-control-plane's
// SotW server does when it takes a request of a type before sending the
// response waiting for it (docs/xds-cache.md, assumption 7): the response
// is never sent (nor its GetReturnedResources called), the watch is
// cancelled, and a new watch is asked for with the client's last version.
// The change that response carried must be sent then.
func TestCacheSotWResponseDroppedBeforeSending(t *testing.T) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}
	s := f.published(t)
	c := newCacheClient("eds", false, resource.EndpointType, []string{"a", "b"})
	c.watch(t, s.cache, nil, nil)
	c.drain(t, s.cache) // holds a and b, with a watch open
	f.clusters["a"] = []string{"127.0.0.1:3"}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.sotwOut: // dropped: the server replaces the watch's channel
	default:
		t.Fatal("the change to a did not answer the open watch")
	}
	c.watch(t, s.cache, nil, nil) // the same version and nonce as before
	select {
	case r := <-c.sotwOut:
		out, err := r.GetDiscoveryResponse()
		if err != nil {
			t.Fatal(err)
		}
		if len(out.GetResources()) != 1 || decodedName(t, c.typeURL, out.GetResources()[0]) != "a" {
			t.Fatalf("the next watch was answered with %d resources, want a", len(out.GetResources()))
		}
	default:
		t.Fatal("the change to a, dropped by the server, was not sent to the next watch")
	}
}

func deltaNames(t *testing.T, r cache.DeltaResponse) []string {
	t.Helper()
	out, err := r.GetDeltaDiscoveryResponse()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, res := range out.GetResources() {
		names = append(names, res.GetName())
	}
	slices.Sort(names)
	return names
}

// TestCacheSharesEncodings: streams are sent the very same encoded bytes, so
// that a change is encoded once however many Envoys are connected, and
// each answer is a new envelope (the server writes a nonce into it).
func TestCacheSharesEncodings(t *testing.T) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}}}
	s := f.published(t)
	var anys []*anypb.Any
	var envelopes []*discoveryv3.DiscoveryResponse
	for i := range 2 {
		c := newCacheClient(fmt.Sprint(i), false, resource.ClusterType, nil)
		c.watch(t, s.cache, nil, nil)
		out, err := (<-c.sotwOut).GetDiscoveryResponse()
		if err != nil {
			t.Fatal(err)
		}
		anys = append(anys, out.GetResources()[0])
		envelopes = append(envelopes, out)
	}
	if anys[0] != anys[1] {
		t.Error("two streams got separate encodings of the same cluster")
	}
	if envelopes[0] == envelopes[1] {
		t.Error("two streams got the same response envelope")
	}
}

// TestCacheFetch: a REST-style fetch gets the current content, filtered to
// the names it gives, and is skipped when it already has the version.
func TestCacheFetch(t *testing.T) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}
	s := f.published(t)
	resp, err := s.cache.Fetch(t.Context(), &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := resp.GetDiscoveryResponse()
	if err != nil {
		t.Fatal(err)
	}
	if len(out.GetResources()) != 1 || decodedName(t, resource.EndpointType, out.GetResources()[0]) != "b" {
		t.Fatalf("fetch of b returned %v", out.GetResources())
	}
	if out.GetVersionInfo() != s.Snapshot().GetVersion(resource.EndpointType) {
		t.Fatalf("fetch returned version %q, snapshot has %q", out.GetVersionInfo(), s.Snapshot().GetVersion(resource.EndpointType))
	}
	_, err = s.cache.Fetch(t.Context(), &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: out.GetVersionInfo()})
	var skip *types.SkipFetchError
	if !errors.As(err, &skip) {
		t.Fatalf("fetch at the current version: got %v, want a skip", err)
	}
}

// TestCacheDeltaWildcardUnsubscribeByName: a delta client of every cluster
// (an explicit wildcard) that also named one and stops naming it is sent
// that cluster again, as the protocol asks (the server marks it held at no
// version), when it was up to date (deltaSince).
func TestCacheDeltaWildcardUnsubscribeByName(t *testing.T) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}
	s := f.published(t)
	c := newCacheClient("cds", true, resource.ClusterType, []string{"*", "a"})
	c.watch(t, s.cache, c.names, nil)
	c.drain(t, s.cache)
	if !c.sub.IsWildcard() || len(c.held) != 2 {
		t.Fatalf("wildcard %t, holds %d clusters, want both", c.sub.IsWildcard(), len(c.held))
	}
	before := c.answers
	c.watch(t, s.cache, nil, []string{"a"})
	c.drain(t, s.cache)
	if c.answers != before+1 || c.held["a"] == nil || c.held["b"] == nil {
		t.Fatalf("answered %d times after unsubscribing from a (held: %v), want once, with a again", c.answers-before, slices.Sorted(maps.Keys(c.held)))
	}
	if v := c.sub.ReturnedResources()["a"]; v != s.Snapshot().GetVersionMap(resource.ClusterType)["a"] {
		t.Errorf("a is held at version %q after it was sent again", v)
	}
}

// TestCacheDeltaResponseLeavesInitialVersions: a delta response brings the
// subscription's own map up to date as it is sent, except the first
// request's, which is the request's initial resource versions: that one
// is left as the client sent it.
func TestCacheDeltaResponseLeavesInitialVersions(t *testing.T) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}
	s := f.published(t)
	initial := map[string]string{"a": "stale"}
	req := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNamesSubscribe: []string{"a", "b"}, InitialResourceVersions: initial}
	sub := stream.NewDeltaSubscription(req.ResourceNamesSubscribe, nil, req.InitialResourceVersions, true)
	out := make(chan cache.DeltaResponse, 1)
	if _, err := s.cache.CreateDeltaWatch(req, sub, out); err != nil {
		t.Fatal(err)
	}
	r := <-out
	next := r.GetNextVersionMap()
	if !maps.Equal(initial, map[string]string{"a": "stale"}) {
		t.Errorf("the request's initial versions became %v", initial)
	}
	want := s.Snapshot().GetVersionMap(resource.EndpointType)
	if next["a"] != want["a"] || next["b"] != want["b"] {
		t.Errorf("the client holds %v after the response, want a and b at %v", next, want)
	}
	// The next response edits that map itself.
	sub.SetReturnedResources(next)
	f.clusters["b"] = []string{"127.0.0.1:3"}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.cache.CreateDeltaWatch(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType, ResponseNonce: "1"}, sub, out); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-out:
		if got := r.GetNextVersionMap(); reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(next).UnsafePointer() || got["b"] != s.Snapshot().GetVersionMap(resource.EndpointType)["b"] {
			t.Errorf("the second response returned a map of its own, or b at %q", got["b"])
		}
	default:
		t.Fatal("no answer for the change to b")
	}
}
