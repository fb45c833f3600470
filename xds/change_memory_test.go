package xds_test

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// changeMemory is what a series of Ingress changes costs a warm translator
// and server in memory: the load command's Ingress changes (each a new
// workload-shaped Ingress, kept), translated and published one by one.
type changeMemory struct {
	// routeBytes is the encoded route configuration after the last
	// change: what a SotW client receives whole on each change.
	routeBytes int
	// live is the heap in use after a collection, after the first change
	// and after the last.
	firstLive, lastLive uint64
	// bytes and allocs are allocated per change, on average over the
	// changes after the first.
	bytes, allocs uint64
	// nextGC is the heap size the next collection was set for after the
	// last change.
	nextGC uint64
}

// measureChanges translates and publishes the load command's workload of
// n Ingresses (every annotated-every-th annotated), then makes changes
// Ingress changes, measuring the heap after the first and the last.
func measureChanges(t testing.TB, n, every, changes int) changeMemory {
	t.Helper()
	w := load.Workload{N: n, Namespace: "load", AnnotatedEvery: every}
	st := w.State()
	p := newPublisher(translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	var routeBytes int
	publish := func() {
		res, _ := p.publish(t, st)
		routeBytes = proto.Size(res.Resources.Routes[0])
	}
	change := func(k int) {
		// As the load command: a new Ingress, hosts of its own, to the
		// Services of a workload Ingress spread over the workload. A
		// source hands over a new list when an Ingress is added.
		next := *st
		next.Ingresses = append(slices.Clip(st.Ingresses), w.ChangeIngress("mem", k, (k*7919+3)%n))
		st = &next
		publish()
	}
	var ms runtime.MemStats
	collected := func() *runtime.MemStats {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return &ms
	}
	publish()
	change(0)
	var out changeMemory
	before := collected()
	out.firstLive = before.HeapAlloc
	total, mallocs := before.TotalAlloc, before.Mallocs
	for k := 1; k < changes; k++ {
		change(k)
	}
	runtime.ReadMemStats(&ms)
	out.bytes = (ms.TotalAlloc - total) / uint64(changes-1)
	out.allocs = (ms.Mallocs - mallocs) / uint64(changes-1)
	after := collected()
	out.lastLive, out.nextGC = after.HeapAlloc, after.NextGC
	out.routeBytes = routeBytes
	runtime.KeepAlive(p)
	return out
}

// memoryTestIngresses is the workload's size for TestIngressChangesKeepNoHistory:
// $INGRESS_XDS_MEMORY_INGRESSES (10000 for issue 14's scale), else 1,000.
func memoryTestIngresses(t *testing.T) int {
	if v := os.Getenv("INGRESS_XDS_MEMORY_INGRESSES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			t.Fatalf("INGRESS_XDS_MEMORY_INGRESSES=%q: a number of at least 100", v)
		}
		return n
	}
	return 1000
}

// TestIngressChangesKeepNoHistory holds a series of Ingress changes, on the
// plain workload and on a quarter annotated (issue 14), to keeping nothing
// of past changes and to allocating per change about what a change must:
// the route configuration a SotW client receives whole, encoded once.
// Counts, not timings: the heap after a collection, bytes and allocations.
func TestIngressChangesKeepNoHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("translates the load workload of 1,000 Ingresses twice")
	}
	n := memoryTestIngresses(t)
	const changes = 20
	for _, every := range []int{0, 4} {
		m := measureChanges(t, n, every, changes)
		t.Logf("%d Ingresses, annotated every %d: route configuration %d B; live heap %d B after change 1, %d B after change %d (NextGC %d B); per change %d B in %d allocations",
			n, every, m.routeBytes, m.firstLive, m.lastLive, changes, m.nextGC, m.bytes, m.allocs)
		// What the changes add stays: 19 Ingresses of 2 hosts, each a
		// fraction of the route configuration's share of a host. Keeping
		// each change's route configuration (a cache that never drops
		// an old version) would add 19 of them.
		perHost := uint64(m.routeBytes) / uint64(2*n)
		if grown := int64(m.lastLive) - int64(m.firstLive); grown > int64(uint64(m.routeBytes)+uint64(2*(changes-1))*64*perHost) {
			t.Errorf("annotated every %d: the live heap grew %d B over %d changes, more than a route configuration (%d B) and the changes' own hosts: something keeps past changes",
				every, grown, changes-1, m.routeBytes)
		}
		// A change encodes the route configuration once (the snapshot's);
		// the rest is the changed hosts' and the lists of positions, a
		// few words per host, in a number of allocations that does not
		// grow with the workload. Rendering, validating or encoding every
		// virtual host again would be an allocation or more per host.
		if limit := uint64(m.routeBytes) + 256*uint64(2*n); m.bytes > limit {
			t.Errorf("annotated every %d: %d B allocated per change, over %d (a route configuration and 256 B a host): a change re-encodes or re-renders more than what it changed",
				every, m.bytes, limit)
		}
		if m.allocs > 1000 {
			t.Errorf("annotated every %d: %d allocations per change, over 1,000: a change re-encodes or re-renders more than what it changed", every, m.allocs)
		}
	}
}
