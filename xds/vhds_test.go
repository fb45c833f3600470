package xds

import (
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestVHDSNamespaceSubscription: a delta client subscribing to its route
// configuration's name, as Envoy's VHDS does, is sent every virtual host
// of that namespace, then only those a change touched; its first request
// is answered even when the namespace is empty (the route configuration
// waits for that answer).
func TestVHDSNamespaceSubscription(t *testing.T) {
	s := quietServer()
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1"}, hosts: map[string]map[string]string{}}
	r, made := f.resources(t, nil)
	publishOK(t, s, r)
	c := newCacheClient("vhds", true, resource.VirtualHostType, []string{fixtureRoute})
	c.watch(t, s.cache, nil, nil)
	c.drain(t, s.cache)
	if c.answers != 1 || len(c.held) != 0 {
		t.Fatalf("an empty namespace: %d answers holding %v, want one empty answer", c.answers, sortedKeys(c.held))
	}

	f.hosts = map[string]map[string]string{"a.example": {"/": "a"}, "b.example": {"/": "a"}}
	r, made = f.resources(t, made)
	publishOK(t, s, r)
	c.drain(t, s.cache)
	want := []string{fixtureRoute + "/a.example", fixtureRoute + "/b.example"}
	if got := sortedKeys(c.held); !slices.Equal(got, want) {
		t.Fatalf("holds %v, want every virtual host of the namespace %v", got, want)
	}

	f.hosts["a.example"] = map[string]string{"/": "a", "/x": "a"}
	r, _ = f.resources(t, made)
	publishOK(t, s, r)
	select {
	case resp := <-c.dOut:
		out, err := resp.GetDeltaDiscoveryResponse()
		if err != nil {
			t.Fatal(err)
		}
		var sent []string
		for _, res := range out.GetResources() {
			sent = append(sent, res.GetName())
		}
		if !slices.Equal(sent, want[:1]) || len(out.GetRemovedResources()) != 0 {
			t.Fatalf("a change of a.example sent %v, removed %v; want only %v", sent, out.GetRemovedResources(), want[:1])
		}
	default:
		t.Fatal("a change of a.example was not sent")
	}
}

// TestVHDSPart: the part marks the virtual host content namespaced, and
// no other type's.
func TestVHDSPart(t *testing.T) {
	vh, routes := &typeSnapshot{}, &typeSnapshot{}
	if (vhds{}).updated(nil, []typeChange{{typeURL: resource.VirtualHostType, state: vh}, {typeURL: resource.RouteType, state: routes}}) {
		t.Fatal("asked for a recheck")
	}
	if !vh.namespaced || routes.namespaced {
		t.Fatalf("namespaced: virtual hosts %v, routes %v; want true, false", vh.namespaced, routes.namespaced)
	}
}

// TestVHDSNamespaceResubscribed: a delta client that unsubscribes from its
// route configuration's namespace, as Envoy does when the configuration
// stops taking its virtual hosts over VHDS, and subscribes again, when it
// takes them again (deltaroutes.go: route scopes and back), is sent every
// virtual host of the namespace again: it dropped them.
func TestVHDSNamespaceResubscribed(t *testing.T) {
	s := quietServer()
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1"}, hosts: map[string]map[string]string{"a.example": {"/": "a"}, "b.example": {"/": "a"}}}
	r, _ := f.resources(t, nil)
	publishOK(t, s, r)
	c := newCacheClient("vhds", true, resource.VirtualHostType, []string{fixtureRoute})
	c.watch(t, s.cache, c.names, nil)
	c.drain(t, s.cache)
	want := []string{fixtureRoute + "/a.example", fixtureRoute + "/b.example"}
	if got := sortedKeys(c.held); !slices.Equal(got, want) {
		t.Fatalf("holds %v, want %v", got, want)
	}
	c.watch(t, s.cache, nil, []string{fixtureRoute})
	c.drain(t, s.cache)
	c.held = map[string]*anypb.Any{} // Envoy's VHDS subscription is gone, and what it held
	c.watch(t, s.cache, []string{fixtureRoute}, nil)
	c.drain(t, s.cache)
	if got := sortedKeys(c.held); !slices.Equal(got, want) {
		t.Fatalf("subscribed again, holds %v, want every virtual host again %v", got, want)
	}
}
