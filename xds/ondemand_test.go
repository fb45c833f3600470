package xds

import (
	"fmt"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// onDemandFixture is fixture's resources with every cluster lazy but the
// eager ones.
func onDemandFixture(t testing.TB, f fixture, eager ...string) *translate.Resources {
	t.Helper()
	r := f.resources(t)
	od := &translate.OnDemand{Eager: map[string]struct{}{}}
	for _, name := range eager {
		od.Eager[name] = struct{}{}
	}
	r.OnDemand = od
	return r
}

// deltaAnswer takes the one response a client's open watch has, or fails.
func deltaAnswer(t *testing.T, c *cacheClient) (sent, removed []string) {
	t.Helper()
	select {
	case r := <-c.dOut:
		out, err := r.GetDeltaDiscoveryResponse()
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range out.GetResources() {
			sent = append(sent, res.GetName())
			c.held[res.GetName()] = res.GetResource()
		}
		for _, name := range out.GetRemovedResources() {
			delete(c.held, name)
		}
		removed = out.GetRemovedResources()
		c.answers++
		c.nonce = fmt.Sprint(c.answers)
		c.sub.SetReturnedResources(r.GetReturnedResources())
		slices.Sort(sent)
		return sent, removed
	default:
		t.Fatalf("%s: no answer", c.name)
		return nil, nil
	}
}

func noAnswer(t *testing.T, c *cacheClient, why string) {
	t.Helper()
	select {
	case r := <-c.dOut:
		out, _ := r.GetDeltaDiscoveryResponse()
		t.Fatalf("%s: answered with %v (removed %v): %s", c.name, deltaNames(t, r), out.GetRemovedResources(), why)
	default:
	}
}

// TestCacheOnDemandClusters: a delta client's wildcard cluster subscription
// gets the eager clusters only; a cluster it then asks for by name comes
// (as Envoy's on_demand filter asks for it), and so do its later changes
// and its removal; a name that does not exist is answered as removed, at
// once; a cluster made eager is sent; a state-of-the-world client gets
// every cluster.
func TestCacheOnDemandClusters(t *testing.T) {
	s := quietServer()
	f := fixture{listenerPort: 10000, clusters: map[string][]string{
		"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}, "c": {"127.0.0.1:3"},
	}}
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a")); err != nil {
		t.Fatal(err)
	}
	c := newCacheClient("delta", true, resource.ClusterType, nil)
	c.watch(t, s.cache, nil, nil)
	if sent, _ := deltaAnswer(t, c); !slices.Equal(sent, []string{"a"}) {
		t.Fatalf("the wildcard subscription got %v, want the eager a only", sent)
	}
	c.watch(t, s.cache, nil, nil) // the ACK
	noAnswer(t, c, "the client is up to date")

	c.watch(t, s.cache, []string{"b"}, nil)
	if sent, _ := deltaAnswer(t, c); !slices.Equal(sent, []string{"b"}) {
		t.Fatalf("asking for b got %v, want b", sent)
	}
	c.watch(t, s.cache, nil, nil)
	noAnswer(t, c, "b was sent")

	c.watch(t, s.cache, []string{"nowhere"}, nil)
	if sent, removed := deltaAnswer(t, c); len(sent) != 0 || !slices.Equal(removed, []string{"nowhere"}) {
		t.Fatalf("asking for a missing cluster got %v, removed %v: want it removed", sent, removed)
	}
	c.watch(t, s.cache, nil, nil)

	// A new lazy cluster is not sent; the one asked for goes when it goes.
	f.clusters["d"] = []string{"127.0.0.1:4"}
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a")); err != nil {
		t.Fatal(err)
	}
	noAnswer(t, c, "d is lazy and not asked for")
	delete(f.clusters, "b")
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a")); err != nil {
		t.Fatal(err)
	}
	if sent, removed := deltaAnswer(t, c); len(sent) != 0 || !slices.Equal(removed, []string{"b"}) {
		t.Fatalf("removing b sent %v, removed %v: want b removed", sent, removed)
	}
	c.watch(t, s.cache, nil, nil)

	// c made eager (a route mirrors to it): the wildcard gets it, though
	// no cluster's content changed.
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a", "c")); err != nil {
		t.Fatal(err)
	}
	if sent, _ := deltaAnswer(t, c); !slices.Equal(sent, []string{"c"}) {
		t.Fatalf("making c eager sent %v, want c", sent)
	}
	c.watch(t, s.cache, nil, nil)
	if got := sortedKeys(c.held); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("the delta client holds %v, want a and c", got)
	}

	// A reconnecting client with its clusters, wildcard and by name, is
	// sent what it lacks of both.
	again := newCacheClient("delta again", true, resource.ClusterType, []string{"*", "d"})
	again.watch(t, s.cache, nil, nil)
	if sent, _ := deltaAnswer(t, again); !slices.Equal(sent, []string{"a", "c", "d"}) {
		t.Fatalf("a reconnecting client asking for * and d got %v, want a, c and d", sent)
	}

	sotw := newCacheClient("sotw", false, resource.ClusterType, nil)
	sotw.watch(t, s.cache, nil, nil)
	sotw.drain(t, s.cache)
	if got := sortedKeys(sotw.held); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("the state-of-the-world client holds %v, want every cluster", got)
	}
}

// TestOnDemandNotHeldForLazyClusters: a route change that comes with a new
// lazy cluster is not held back for that cluster's load assignment on a
// delta stream (an Envoy asks for the cluster when a request needs it, and
// the request waits for it), but is on a SotW one, which is sent every
// cluster and whose routes wait as for any; one that comes with a new
// eager cluster is held on both.
func TestOnDemandNotHeldForLazyClusters(t *testing.T) {
	s := quietServer()
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}}}
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a")); err != nil {
		t.Fatal(err)
	}
	prev := s.cache.types[resource.ClusterType]
	f.clusters["b"] = []string{"127.0.0.1:2"}
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a")); err != nil {
		t.Fatal(err)
	}
	if s.cache.types[resource.ClusterType] == prev {
		t.Fatal("the cluster change did not reach the cache")
	}
	if got := s.cache.mbb.waitedFor(streamKey{delta: true}); len(got) != 0 {
		t.Fatalf("delta routes wait for %v, a lazy cluster's load assignment", got)
	}
	if got := s.cache.mbb.waitedFor(streamKey{}); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("SotW routes wait for %v, want the new cluster b", got)
	}
	f.clusters["e"] = []string{"127.0.0.1:3"}
	if _, err := s.Publish(t.Context(), onDemandFixture(t, f, "a", "e")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []streamKey{{delta: true}, {}} {
		if got := s.cache.mbb.waitedFor(key); !slices.Equal(got, []string{"e"}) {
			t.Fatalf("routes (delta %v) wait for %v, want the new eager cluster e", key.delta, got)
		}
	}
}
