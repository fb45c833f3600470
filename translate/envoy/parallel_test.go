package envoy

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestPrerenderLoadsEqualsSerial: the load assignments rendered on every
// core, as a first render does, are exactly those LoadAssignment renders
// one at a time, each stored under its own backend; backends that need
// none (ExternalName, or no cluster reading endpoints) get none, and those
// already rendered for the same endpoints are kept as they were.
func TestPrerenderLoadsEqualsSerial(t *testing.T) {
	const n = 3 * parallelMin
	backends := make([]*ir.Backend, n)
	eds := make([]bool, n)
	for i := range backends {
		be := &ir.Backend{Name: fmt.Sprintf("ns/svc-%d/80", i), Port: 80}
		for e := range i % 7 { // some with no endpoints at all
			be.Endpoints = append(be.Endpoints, ir.Endpoint{Address: fmt.Sprintf("10.%d.%d.%d", i/250, i%250, e), Port: 8080})
		}
		if i%11 == 0 {
			be.ExternalName, be.Endpoints = "db.example.com", nil
		}
		backends[i], eds[i] = be, i%13 != 0
	}
	r := NewRenderer()
	kept := r.LoadAssignment(backends[1]) // rendered before: must stay the same value
	r.prerenderLoads(backends, eds)
	for i, be := range backends {
		e := r.loads[be.Name]
		if be.ExternalName != "" || !eds[i] {
			if e != nil && i != 1 {
				t.Errorf("%s needs no load assignment, got one", be.Name)
			}
			continue
		}
		if e == nil {
			t.Fatalf("%s: no load assignment rendered", be.Name)
		}
		if !proto.Equal(e.msg, loadAssignment(be)) {
			t.Errorf("%s: rendered in parallel %v, in series %v", be.Name, e.msg, loadAssignment(be))
		}
		if got := r.LoadAssignment(be); got != e.msg {
			t.Errorf("%s: LoadAssignment rendered again instead of using the parallel rendering", be.Name)
		}
	}
	if r.loads[backends[1].Name].msg != kept {
		t.Error("a load assignment already rendered for the same endpoints was rendered again")
	}
}

// TestInParallelCallsEachOnce: every index, once, whatever the split.
func TestInParallelCallsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 1000} {
		calls := make([]int, n)
		inParallel(n, func(i int) { calls[i]++ })
		for i, c := range calls {
			if c != 1 {
				t.Fatalf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}
