package kube

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestSliceGroupsFollowEvents plays random adds, updates (some moving a
// slice to another Service, some to none), and deletes past sliceGroups and
// checks after each that its groups are the grouping of the slices that
// exist, in State order, and that a list handed out is never changed
// afterwards.
func TestSliceGroupsFollowEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var g sliceGroups
	live := map[string]*EndpointSlice{} // by name
	type handed struct {
		list []*EndpointSlice
		copy []*EndpointSlice
	}
	var handedOut []handed
	services := []string{"a", "b", "c", ""}
	for step := 0; step < 2000; step++ {
		name := fmt.Sprintf("s-%d", rng.IntN(12))
		svc := services[rng.IntN(len(services))]
		slice := &EndpointSlice{Namespace: "ns", Name: name, Service: svc, Ready: []string{fmt.Sprint(step)}}
		prev, exists := live[name]
		switch {
		case !exists:
			g.put(slice)
			live[name] = slice
		case rng.IntN(3) == 0:
			g.remove(prev)
			delete(live, name)
		default: // an update, as the source's handler makes it
			was, _ := prev.ServiceName()
			if now, _ := slice.ServiceName(); was != now {
				g.remove(prev)
			}
			g.put(slice)
			live[name] = slice
		}
		all := make([]*EndpointSlice, 0, len(live))
		for _, s := range live {
			all = append(all, s)
		}
		want := slicesByService(all)
		if got := g.all(); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: groups %v, want %v", step, got, want)
		}
		for _, key := range []types.NamespacedName{{Namespace: "ns", Name: "a"}, {Namespace: "ns", Name: "b"}} {
			if list := g.of(key); list != nil {
				handedOut = append(handedOut, handed{list, append([]*EndpointSlice(nil), list...)})
			}
		}
	}
	for i, h := range handedOut {
		if !reflect.DeepEqual(h.list, h.copy) {
			t.Fatalf("list %d was modified after it was handed out", i)
		}
	}
}
