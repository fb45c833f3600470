package envoy

import (
	"runtime"
	"sync"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The renderer's one use of goroutines: start-up's first render (and any
// render after the endpoints of many Services changed at once) encodes a
// load assignment per backend, 100,000 of them at 10,000 Ingresses, each on
// its own and a pure function of its backend, which is most of the first
// translation (docs/benchmarks.md, "Issue 18: start-up"). They are made on
// every core and stored in backend order once all are done, so the render
// is the same as one made in series, and nothing outlives the call.

// parallelMin is the fewest load assignments worth the goroutines: a
// change touches one or two.
const parallelMin = 256

// prerenderLoads renders, on every core, the load assignments that
// LoadAssignment would otherwise render one by one for the backends that
// need one (eds) and whose endpoints are new, and remembers them, so that
// LoadAssignment then finds each.
func (c *Renderer) prerenderLoads(backends []*ir.Backend, eds []bool) {
	var todo []*ir.Backend
	for i, be := range backends {
		if be.ExternalName != "" || !eds[i] {
			continue
		}
		if e := c.loads[be.Name]; e == nil || !ir.SameEndpoints(e.endpoints, be.Endpoints) {
			todo = append(todo, be)
		}
	}
	if len(todo) < parallelMin {
		return
	}
	msgs := make([]LoadAssignment, len(todo))
	inParallel(len(todo), func(i int) { msgs[i] = loadAssignment(todo[i]) })
	for i, be := range todo {
		c.loads[be.Name] = &loadEntry{endpoints: be.Endpoints, msg: msgs[i]}
	}
}

// inParallel calls fn(i) for every i below n, on GOMAXPROCS goroutines each
// taking a contiguous share, and returns when all are done.
func inParallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for from := 0; from < n; from += per {
		to := min(from+per, n)
		wg.Go(func() {
			for i := from; i < to; i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}
