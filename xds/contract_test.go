package xds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"unsafe"

	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestGoControlPlaneContract checks, against go-control-plane's real
// server over a real gRPC connection, each thing our cache and callbacks
// assume of it. Each subtest is named after the item of
// docs/xds-cache.md it checks, so that an upgrade that breaks one fails a
// test that says which.
func TestGoControlPlaneContract(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			for _, a := range contractItems {
				if a.only != "" && a.only != map[bool]string{false: protocolSotW, true: protocolDelta}[delta] {
					continue
				}
				t.Run(a.name, func(t *testing.T) { a.check(t, delta) })
			}
		})
	}
	t.Run("09_stream_ids_open_close_and_node", checkStreamLifecycle)
}

// contractItems are the items that hold for one protocol at a time; only
// names the protocol an item is about when it concerns only one.
var contractItems = []struct {
	name  string
	only  string
	check func(t *testing.T, delta bool)
}{
	{"01_requests_in_order_callback_before_cache", "", checkRequestOrder},
	{"02_callback_and_cache_get_the_same_request", "", checkSameRequest},
	{"03_previous_watch_cancelled_first_all_at_close", "", checkCancels},
	{"04_stale_nonces", "", checkStaleNonce},
	{"05_response_channels", "", checkChannels},
	{"06_returned_resources_come_back", "", checkReturnedRoundTrip},
	{"07_waiting_response_and_a_request_of_its_type", "", checkWaitingResponse},
	{"08_delta_order_across_types", protocolDelta, checkDeltaOrder},
	{"10_versions_and_nonces", "", checkVersionsAndNonces},
	{"11_empty_responses_are_sent", "", checkEmptyResponses},
	{"12_delta_initial_versions_are_held", protocolDelta, checkInitialVersions},
	{"13_sotw_narrower_subscription_forgets", protocolSotW, checkNarrowerSubscription},
	{"14_server_context_ends_streams_ok", "", checkServerContextEnd},
	{"15_response_callback_sees_context_and_nonce", "", checkResponseCallback},
	{"16_fetch", protocolSotW, checkFetch},
	{"17_a_first_request_naming_nothing_is_wildcard", "", checkLegacyWildcard},
}

// twoClusters is the configuration most items use: clusters a and b with
// their load assignments, one listener and one route configuration.
func twoClusters() fixture {
	return fixture{listenerPort: 10001, clusters: map[string][]string{"a": {"10.0.0.1:80"}, "b": {"10.0.0.2:80"}}}
}

// request sends a request for a type: by name (names), or wildcard (nil);
// for SotW it acknowledges last (zero for a first request).
func request(c *scripted, typeURL string, names []string, last response) {
	c.t.Helper()
	if c.delta != nil {
		c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{Node: c.node, TypeUrl: typeURL, ResourceNamesSubscribe: names, ResponseNonce: last.nonce})
		return
	}
	c.sendSotW(&discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: typeURL, ResourceNames: names, VersionInfo: last.version, ResponseNonce: last.nonce})
}

// ackNames acknowledges r asking for names again (SotW names them all in
// every request; delta adds none).
func ackNames(c *scripted, r response, names []string) {
	c.t.Helper()
	if c.delta != nil {
		c.ack(r)
		return
	}
	c.sendSotW(&discoveryv3.DiscoveryRequest{TypeUrl: r.typeURL, ResourceNames: names, VersionInfo: r.version, ResponseNonce: r.nonce})
}

// 1. The server handles a stream's requests one at a time, in order, on
// one goroutine, and calls the request callback for each before it asks
// the cache for a watch.
func checkRequestOrder(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	types := []string{resource.ClusterType, resource.ListenerType, resource.RouteType}
	for _, typeURL := range types {
		request(c, typeURL, nil, response{})
	}
	var got []string
	for len(got) < 2*len(types) {
		e := h.next("request or watch", func(e contractEvent) bool { return e.kind == evRequest || e.kind == evWatch })
		got = append(got, string(e.kind)+" "+typeName(e.typeURL))
	}
	var want []string
	for _, typeURL := range types {
		want = append(want, "request "+typeName(typeURL), "watch "+typeName(typeURL))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the server did %q, want %q", got, want)
	}
}

// 2. The request the callback is handed is the very one the cache is then
// handed: a rewrite in the callback (the version of a first request, of a
// NACK) is what the cache sees.
func checkSameRequest(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	if delta {
		request(c, resource.ClusterType, nil, response{})
	} else {
		// A reconnecting Envoy names the version it runs; the callback
		// clears it on a first request.
		c.sendSotW(&discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: resource.ClusterType, VersionInfo: "version-from-before"})
	}
	req := h.next("request", is(evRequest, resource.ClusterType))
	w := h.next("watch", is(evWatch, resource.ClusterType))
	if w.req != req.req {
		t.Fatalf("the cache was handed another request than the callback")
	}
	if !delta && w.version != "" {
		t.Errorf("the cache saw version %q, want the callback's rewrite to \"\"", w.version)
	}
	// The subscription is made from the request after the callback: the
	// names it holds are the ones the callback made the snapshot's
	// (stream.go, intern).
	request(c, resource.EndpointType, []string{"a", "b"}, response{})
	w = h.next("watch", is(evWatch, resource.EndpointType))
	ts := h.s.cache.types[resource.EndpointType]
	for name := range w.subscribed {
		j, ok := ts.index.lookup(name)
		if !ok || unsafe.StringData(name) != unsafe.StringData(ts.names[j]) {
			t.Errorf("the subscription holds %q as the request's string, not the snapshot's", name)
		}
	}
	if len(w.subscribed) != 2 {
		t.Errorf("the subscription holds %v, want a and b", w.subscribed)
	}
}

// 3. Before asking for the next watch of a type on a stream, the server
// cancels the previous one; when the stream ends it cancels every watch,
// then calls the close callback. The cache holds nothing of it after.
func checkCancels(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, end := h.client("contract", delta)
	request(c, resource.ClusterType, nil, response{})
	first := h.next("watch", is(evWatch, resource.ClusterType))
	c.ack(c.expect(resource.ClusterType))
	e := h.next("cancel or watch", func(e contractEvent) bool { return e.kind == evCancel || e.kind == evWatch })
	if e.kind != evCancel || e.watch != first.watch {
		t.Fatalf("before the next watch the server did %s (watch %d), want the first watch (%d) cancelled", e.kind, e.watch, first.watch)
	}
	second := h.next("watch", is(evWatch, resource.ClusterType))
	if second.answered || h.watches(delta, resource.ClusterType) != 1 {
		t.Fatalf("after the ACK the cache answered (%v) or holds %d watches, want one waiting", second.answered, h.watches(delta, resource.ClusterType))
	}
	end()
	e = h.next("cancel or closed", func(e contractEvent) bool { return e.kind == evCancel || e.kind == evClosed })
	if e.kind != evCancel || e.watch != second.watch {
		t.Fatalf("when the stream ended the server did %s first, want watch %d cancelled", e.kind, second.watch)
	}
	h.next("closed", is(evClosed, ""))
	if n := h.watches(delta, resource.ClusterType); n != 0 {
		t.Errorf("the cache holds %d watches of a closed stream", n)
	}
}

// 4. SotW: once a response of a type is sent, a request of that type
// that does not carry its nonce reaches the callback and not the cache
// (the open watch stays open); the first request after the one that
// answers it is taken whatever its nonce (the next watch starts with
// none). Delta: every request reaches the cache, whatever its nonce.
func checkStaleNonce(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	request(c, resource.ClusterType, nil, response{})
	r := c.expect(resource.ClusterType)
	request(c, resource.ClusterType, nil, response{version: r.version, nonce: "not-a-nonce-we-sent"})
	h.next("the stale request's callback", func(e contractEvent) bool { return e.kind == evRequest && e.nonce == "not-a-nonce-we-sent" })
	// The ordering probe: the next watch is for the stale request, or for
	// this subscription.
	request(c, resource.ListenerType, nil, response{})
	w := h.next("watch", func(e contractEvent) bool {
		return e.kind == evWatch && (e.nonce != "" || e.typeURL == resource.ListenerType)
	})
	switch {
	case !delta && w.typeURL != resource.ListenerType:
		t.Errorf("the cache was asked for a %s watch for a request with a stale nonce", typeName(w.typeURL))
	case delta && (w.typeURL != resource.ClusterType || w.nonce != "not-a-nonce-we-sent"):
		t.Errorf("the delta server did not hand the cache the request with a stale nonce (next watch: %s, nonce %q)", typeName(w.typeURL), w.nonce)
	}
	if delta {
		return
	}
	c.ack(r)
	h.next("the ACK's watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == r.nonce })
	request(c, resource.ClusterType, nil, response{version: r.version, nonce: "not-a-nonce-either"})
	if w := h.next("watch", is(evWatch, resource.ClusterType)); w.nonce != "not-a-nonce-either" {
		t.Errorf("after the ACK the next request was not handed to the cache (watch for nonce %q)", w.nonce)
	}
}

// 5. SotW: each watch gets a channel of its own with room for one
// response. Delta: every watch of a stream shares one channel with room
// for a response of every type. The cache sends at most one response per
// watch, holding its lock, and so never blocks on the channel.
func checkChannels(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	channels := map[uintptr]bool{}
	for _, typeURL := range servedTypes {
		request(c, typeURL, nil, response{})
		w := h.next("watch", is(evWatch, typeURL))
		channels[w.channel] = true
		if !delta && w.capacity < 1 {
			t.Errorf("a SotW %s watch's channel has room for %d responses, want 1", typeName(typeURL), w.capacity)
		}
		if delta && w.capacity < len(servedTypes) {
			t.Errorf("the delta stream's channel has room for %d responses, want one per type (%d)", w.capacity, len(servedTypes))
		}
	}
	if want := map[bool]int{false: len(servedTypes), true: 1}[delta]; len(channels) != want {
		t.Errorf("%d watches were given %d channels, want %d", len(servedTypes), len(channels), want)
	}
}

// 6. What a response says the client holds (GetReturnedResources in SotW,
// GetNextVersionMap in delta) comes back, as the server sent it, as the
// subscription's ReturnedResources at the next watch of the type,
// entries the server knows nothing of (syncedAt) included.
func checkReturnedRoundTrip(t *testing.T, delta bool) {
	h := startContract(t)
	f := twoClusters()
	if !delta {
		// A load assignment the client does not name keeps the map the
		// server's: one naming every load assignment leaves a map the
		// cache keeps for itself (sotwheld.go).
		f.clusters["c"] = []string{"10.0.0.3:80"}
	}
	h.publish(f)
	snap := h.s.Snapshot()
	c, _ := h.client("contract", delta)
	names := []string{"a", "b"}
	request(c, resource.ClusterType, nil, response{})
	request(c, resource.EndpointType, names, response{})
	for range 2 {
		r := c.recv()
		ackNames(c, r, map[string][]string{resource.EndpointType: names}[r.typeURL])
		w := h.next("watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == r.nonce })
		want := map[string]string{}
		switch {
		case !delta && r.typeURL == resource.ClusterType:
			want[syncedAt] = r.version // a full answer to a wildcard subscription
		case !delta:
			all := snap.GetVersionMap(r.typeURL) // a partial answer: each at its own version
			want = map[string]string{"a": all["a"], "b": all["b"]}
		default:
			want = maps.Clone(snap.GetVersionMap(r.typeURL))
			want[syncedAt] = snap.GetVersion(r.typeURL)
		}
		if !maps.Equal(w.returned, want) {
			t.Errorf("%s: the next watch's subscription holds %v, want what the response returned, %v", typeName(r.typeURL), w.returned, want)
		}
	}
	if !delta {
		return
	}
	// A request that changes the subscription (deltaSince): the
	// server applies it before it asks for the watch, dropping from the
	// returned map what is unsubscribed and keeping the cache's entry;
	// unsubscribed while a wildcard, a name stays, held at no version.
	c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNamesSubscribe: []string{"c"}, ResourceNamesUnsubscribe: []string{"b"}})
	w := h.next("watch", is(evWatch, resource.EndpointType))
	want := map[string]string{"a": snap.GetVersionMap(resource.EndpointType)["a"], syncedAt: snap.GetVersion(resource.EndpointType)}
	if !maps.Equal(w.returned, want) || !maps.Equal(w.subscribed, map[string]struct{}{"a": {}, "c": {}}) {
		t.Errorf("after subscribing to c and unsubscribing from b, the watch's subscription holds %v and names %v, want %v and a, c", w.returned, w.subscribed, want)
	}
	// (A wildcard subscription made by naming nothing ignores requests
	// that name nothing to subscribe to: "*" named makes it explicit.)
	c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesSubscribe: []string{"*", "a"}})
	h.next("watch", is(evWatch, resource.ClusterType))
	c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesUnsubscribe: []string{"a"}})
	w = h.next("watch", is(evWatch, resource.ClusterType))
	if v, held := w.returned["a"]; !held || v != "" || w.returned[syncedAt] == "" || !w.wildcard {
		t.Errorf("after a wildcard client unsubscribed from a, the watch's subscription holds %v (wildcard %t), want a at no version and the cache's entry", w.returned, w.wildcard)
	}
}

// 7. SotW: a response waiting in its watch's channel is dropped when the
// server handles a request of the same type first (it gives the next watch
// a new channel); the cache must not have recorded it as held, and answers
// that next watch with what was dropped. Delta: the server sends every
// waiting response before it handles the next request. The harness holds
// the stream's goroutine in a callback while a change is published and a
// request of the same type arrives; which the server then takes first is
// its choice, so SotW rounds run until it has dropped a response.
func checkWaitingResponse(t *testing.T, delta bool) {
	h := startContract(t)
	f := twoClusters()
	h.publish(f)
	c, _ := h.client("contract", delta)
	names := []string{"a", "b"}
	request(c, resource.EndpointType, names, response{})
	last := c.expect(resource.EndpointType)
	ackNames(c, last, names)
	h.next("waiting watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == last.nonce })
	dropped := 0
	for round := 1; round <= 64 && (delta && round <= 8 || !delta && dropped == 0); round++ {
		gate := h.arm()
		request(c, gateType, nil, response{})
		h.next("gated", is(evGated, gateType))
		f.clusters["a"] = []string{fmt.Sprintf("10.0.0.1:%d", 80+round)}
		h.publish(f) // the change now waits in the watch's channel
		want := h.s.Snapshot().GetVersionMap(resource.EndpointType)["a"]
		request(c, resource.EndpointType, names, last) // as Envoy asks again when its clusters change
		h.next("received", func(e contractEvent) bool { return e.kind == evReceived && e.typeURL == resource.EndpointType })
		close(gate)
		first := h.next("response or request", func(e contractEvent) bool {
			return e.typeURL == resource.EndpointType && (e.kind == evResponse || e.kind == evRequest)
		})
		if first.kind == evRequest {
			if delta {
				t.Fatalf("round %d: the delta server handled a request before sending the response waiting for the stream", round)
			}
			dropped++
			w := h.next("watch", is(evWatch, resource.EndpointType))
			if !w.answered {
				t.Fatalf("round %d: the server dropped the waiting response and the cache did not answer the next watch with it", round)
			}
		}
		got := c.expect(resource.EndpointType)
		if !delta && got.version != h.s.Snapshot().GetVersion(resource.EndpointType) || delta && got.resources["a"] != want {
			t.Fatalf("round %d: the client got %v (version %s), want load assignment a at its new version", round, got.resources, got.version)
		}
		if _, ok := got.resources["a"]; !ok {
			t.Fatalf("round %d: the client got %v, want load assignment a", round, got.resources)
		}
		last = got
		ackNames(c, last, names)
		h.next("waiting watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == last.nonce })
	}
	if !delta && dropped == 0 {
		t.Fatal("in 64 rounds the SotW server never handled the request before sending the waiting response: it no longer drops it (docs/xds-cache.md, item 7)")
	}
}

// 8. Delta: the responses an update puts in the stream's channel are sent
// in that order, so that clusters reach Envoy before the listeners and
// routes that use them. (The SotW server picks among its watches'
// channels at random: nothing is assumed of its order.)
func checkDeltaOrder(t *testing.T, delta bool) {
	h := startContract(t)
	f := twoClusters()
	h.publish(f)
	c, _ := h.client("contract", delta)
	order := []string{resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.RouteType}
	for _, typeURL := range slices.Backward(order) {
		request(c, typeURL, nil, response{})
		c.ack(c.expect(typeURL))
		h.next("waiting watch", func(e contractEvent) bool { return e.kind == evWatch && e.typeURL == typeURL && e.nonce != "" })
	}
	// Subscribed to the load assignments before the clusters that read
	// them, the client is sent them again after the clusters
	// (sharededs.go), on its endpoint watch.
	c.ack(c.expect(resource.EndpointType))
	h.next("waiting watch", func(e contractEvent) bool {
		return e.kind == evWatch && e.typeURL == resource.EndpointType && e.nonce != ""
	})
	// A new cluster with its endpoints and route, and another port:
	// every type changes in one update.
	f.clusters["c"] = []string{"10.0.0.3:80"}
	f.listenerPort++
	h.publish(f)
	// The listener and route wait for the new cluster's endpoints to be
	// acknowledged (make-before-break, makebeforebreak.go), and then come
	// in the same order.
	var got []string
	for range order {
		r := c.recv()
		got = append(got, r.typeURL)
		if r.typeURL == resource.EndpointType {
			c.ack(r)
		}
	}
	if !slices.Equal(got, order) {
		t.Errorf("the delta server sent %v, want the order the cache answered, %v", got, order)
	}
}

// 9. SotW and delta streams are numbered by counters of their own, from
// 1; the open callback comes before the stream's first request, the close
// callback once, after its watches are cancelled, with the node of the
// stream's first request (the only one that carries it).
func checkStreamLifecycle(t *testing.T) {
	h := startContract(t)
	h.publish(twoClusters())
	for _, delta := range []bool{false, true} {
		c, end := h.client("node-"+protocolOf(streamKey{delta: delta}), delta)
		request(c, resource.ClusterType, nil, response{})
		open := h.next("open", is(evOpen, ""))
		req := h.next("request", is(evRequest, ""))
		if open.delta != delta || open.stream != 1 || req.stream != 1 {
			t.Errorf("the first %s stream opened as stream %d (request on %d), want 1", protocolOf(streamKey{delta: delta}), open.stream, req.stream)
		}
		r := c.expect(resource.ClusterType)
		c.ack(r) // no node: Envoy sends it on the first request only
		h.next("waiting watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == r.nonce })
		end()
		h.next("cancel", is(evCancel, resource.ClusterType))
		closed := h.next("closed", is(evClosed, ""))
		if closed.stream != 1 || closed.node.GetId() != c.node.GetId() {
			t.Errorf("stream closed as %d with node %q, want 1 with %q", closed.stream, closed.node.GetId(), c.node.GetId())
		}
	}
	// Exactly one close per stream: the probe is a third stream, whose
	// open comes after any further close of the first two.
	c, _ := h.client("probe", false)
	request(c, resource.ClusterType, nil, response{})
	if e := h.next("open or closed", func(e contractEvent) bool { return e.kind == evOpen || e.kind == evClosed }); e.kind != evOpen {
		t.Errorf("a stream was closed twice")
	}
}

// 10. Versions and nonces: the server sends the cache's version as it is
// and sets a nonce of its own, new for each response of the stream; the
// version a SotW client echoes reaches the cache as sent. Delta resources
// carry the cache's per-resource versions.
func checkVersionsAndNonces(t *testing.T, delta bool) {
	h := startContract(t)
	f := twoClusters()
	h.publish(f)
	c, _ := h.client("contract", delta)
	request(c, resource.ClusterType, nil, response{})
	nonces := map[string]bool{}
	for i := range 2 {
		r := c.expect(resource.ClusterType)
		snap := h.s.Snapshot()
		if r.version != snap.GetVersion(resource.ClusterType) {
			t.Errorf("response version %q, want the cache's %q", r.version, snap.GetVersion(resource.ClusterType))
		}
		for name, v := range r.resources {
			if want := snap.GetVersionMap(resource.ClusterType)[name]; delta && v != want {
				t.Errorf("delta resource %s at version %q, want the cache's %q", name, v, want)
			}
		}
		if r.nonce == "" || nonces[r.nonce] {
			t.Errorf("response nonce %q: empty or used before on this stream", r.nonce)
		}
		nonces[r.nonce] = true
		c.ack(r)
		w := h.next("watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == r.nonce })
		if !delta && w.version != r.version {
			t.Errorf("the cache saw version %q in the ACK, want %q", w.version, r.version)
		}
		if i == 0 {
			f.clusters["c"] = []string{"10.0.0.3:80"}
			h.publish(f)
		}
	}
}

// 11. The server sends an empty response as it is: the answer to a first
// request for what does not exist, which Envoy waits for.
func checkEmptyResponses(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters()) // no secrets
	c, _ := h.client("contract", delta)
	if delta {
		request(c, resource.SecretType, nil, response{})
	} else {
		request(c, resource.EndpointType, []string{"no-such-cluster"}, response{})
	}
	r := c.recv()
	if len(r.resources) != 0 || r.nonce == "" {
		t.Errorf("got %s %v (nonce %q), want an empty response", typeName(r.typeURL), r.resources, r.nonce)
	}
}

// 12. Delta: the versions a client says it holds when it subscribes
// (initial_resource_versions) are the subscription's ReturnedResources at
// the first watch, so a reconnecting Envoy is sent only what changed.
func checkInitialVersions(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	held := maps.Clone(h.s.Snapshot().GetVersionMap(resource.ClusterType))
	held["a"] = "a-version-from-before"
	c, _ := h.client("contract", delta)
	c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{Node: c.node, TypeUrl: resource.ClusterType, InitialResourceVersions: held})
	w := h.next("watch", is(evWatch, resource.ClusterType))
	if !maps.Equal(w.returned, held) {
		t.Errorf("the first watch's subscription holds %v, want the initial versions %v", w.returned, held)
	}
	if r := c.expect(resource.ClusterType); !slices.Equal(sortedKeys(r.resources), []string{"a"}) {
		t.Errorf("the reconnecting client was sent %v, want only the cluster it held at another version", sortedKeys(r.resources))
	}
}

// 13. SotW: when a request names fewer resources, the server drops the
// others from the subscription's ReturnedResources before the cache sees
// it, so that what a client holds by name is a subset of what it asks for
// (which lets an ACK that holds as many as it asks be taken as in sync),
// and a name asked for again is sent again. A third cluster no request
// names keeps the map the server's: a request naming every load
// assignment leaves a map the cache keeps for itself (sotwheld.go).
func checkNarrowerSubscription(t *testing.T, delta bool) {
	h := startContract(t)
	f := twoClusters()
	f.clusters["c"] = []string{"10.0.0.3:80"}
	h.publish(f)
	c, _ := h.client("contract", delta)
	request(c, resource.EndpointType, []string{"a", "b"}, response{})
	r := c.expect(resource.EndpointType)
	ackNames(c, r, []string{"a"})
	w := h.next("watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce == r.nonce })
	if _, ok := w.returned["b"]; ok || len(w.returned) != 1 {
		t.Errorf("after asking for a only, the subscription holds %v, want a alone", w.returned)
	}
	ackNames(c, r, []string{"a", "b"})
	if again := c.expect(resource.EndpointType); !slices.Equal(sortedKeys(again.resources), []string{"b"}) {
		t.Errorf("asking for b again was answered with %v, want b", sortedKeys(again.resources))
	}
}

// 14. Ending the context the server was made with ends every stream
// cleanly (status OK): Envoy keeps its configuration and reconnects. The
// graceful stop relies on it.
func checkServerContextEnd(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	request(c, resource.ClusterType, nil, response{})
	c.ack(c.expect(resource.ClusterType))
	h.next("waiting watch", func(e contractEvent) bool { return e.kind == evWatch && e.nonce != "" })
	h.endServer()
	var err error
	if delta {
		_, err = c.delta.Recv()
	} else {
		_, err = c.sotw.Recv()
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("after the server's context ended the stream ended with %v, want status OK (io.EOF)", err)
	}
}

// 15. The response callback is called just before the response is sent,
// with the message as sent (the nonce set) and, in SotW, the context the
// cache's response carries (the names of a full response, the versions
// of a partial one), which the client registry records.
func checkResponseCallback(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	request(c, resource.ClusterType, nil, response{})
	request(c, resource.EndpointType, []string{"a"}, response{})
	for range 2 {
		r := c.recv()
		e := h.next("response", is(evResponse, r.typeURL))
		if e.nonce != r.nonce {
			t.Errorf("%s: the callback saw nonce %q, the client got %q", typeName(r.typeURL), e.nonce, r.nonce)
		}
		if delta {
			continue
		}
		switch r.typeURL {
		case resource.ClusterType:
			if !slices.Equal(slices.Sorted(slices.Values(e.sentNames)), []string{"a", "b"}) {
				t.Errorf("a full response's context named %v, want a and b", e.sentNames)
			}
		case resource.EndpointType:
			if want := map[string]string{"a": h.s.Snapshot().GetVersionMap(resource.EndpointType)["a"]}; !maps.Equal(e.sentVersions, want) {
				t.Errorf("a partial response's context gave %v, want %v", e.sentVersions, want)
			}
		}
	}
}

// 16. REST: the server hands the request to Fetch and returns its answer,
// or its error (SkipFetchError when the client has the current version).
func checkFetch(t *testing.T, _ bool) {
	h := startContract(t)
	h.publish(twoClusters())
	cds := clusterservice.NewClusterDiscoveryServiceClient(h.conn)
	resp, err := cds.FetchClusters(context.Background(), &discoveryv3.DiscoveryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if current := h.s.Snapshot().GetVersion(resource.ClusterType); resp.GetVersionInfo() != current || len(resp.GetResources()) != 2 {
		t.Errorf("fetch answered version %q with %d clusters, want %q with 2", resp.GetVersionInfo(), len(resp.GetResources()), current)
	}
	if _, err := cds.FetchClusters(context.Background(), &discoveryv3.DiscoveryRequest{VersionInfo: resp.GetVersionInfo()}); err == nil {
		t.Error("fetching with the current version answered, want the cache's SkipFetchError as an error")
	}
}

// 17. A stream's first request of a type that names nothing subscribes to
// everything (the legacy wildcard, on unless the server is told
// otherwise), and so do the requests after it that name nothing: Envoy
// asks for clusters and listeners that way, and the cache sends them all.
func checkLegacyWildcard(t *testing.T, delta bool) {
	h := startContract(t)
	h.publish(twoClusters())
	c, _ := h.client("contract", delta)
	request(c, resource.ClusterType, nil, response{})
	if w := h.next("watch", is(evWatch, resource.ClusterType)); !w.wildcard {
		t.Errorf("a first request naming nothing is not wildcard")
	}
	r := c.expect(resource.ClusterType)
	if len(r.resources) != 2 {
		t.Errorf("the wildcard subscription was sent %v, want both clusters", sortedKeys(r.resources))
	}
	c.ack(r)
	if w := h.next("watch", is(evWatch, resource.ClusterType)); !w.wildcard {
		t.Errorf("an ACK naming nothing left the subscription not wildcard")
	}
}
