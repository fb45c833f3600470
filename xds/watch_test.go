package xds

import (
	"fmt"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// recordingPart is a watch part that records each step it is told of, and
// holds the route types while hold is set.
type recordingPart struct {
	events []string
	hold   bool
}

func (p *recordingPart) updated(_ *resourceCache, changes []typeChange) bool {
	p.events = append(p.events, fmt.Sprintf("updated %d types", len(changes)))
	return false
}

func (p *recordingPart) holds(_ *resourceCache, w *watch) bool {
	return p.hold && w.typeURL == resource.RouteType
}

func (p *recordingPart) owes(*resourceCache, *watch) xdsResponse { return nil }

func (p *recordingPart) settled(_ *resourceCache, at step, w *watch, r xdsResponse) {
	what := map[step]string{stepRequest: "request", stepUpdate: "update", stepRelease: "release", stepPart: "part"}[at]
	p.events = append(p.events, fmt.Sprintf("%s %s answered=%v held=%v", what, typeName(w.typeURL), r != nil, w.held))
}

func (p *recordingPart) closed(_ *resourceCache, s *streamState) {
	p.events = append(p.events, fmt.Sprintf("closed %d", s.key.id))
}

// TestWatchLifecycleSteps: SotW and delta watches go through the same
// steps, and a part is told of each the same way over both protocols: a
// request answered at once, its ACK stored, a watch a part holds stored
// held and left waiting by an update that answers the others, released by
// a recheck, and the stream's close.
func TestWatchLifecycleSteps(t *testing.T) {
	var got [2][]string
	for i, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s := quietServer()
			p := &recordingPart{}
			s.cache.parts = append(s.cache.parts, p)
			publishOK(t, s, switched(t, "a", "a", "b"))
			st := newADSStream(delta, 1, "a", "b")
			st.clusters.watch(t, s.cache, nil, nil)
			st.clusters.drain(t, s.cache) // answered, then its ACK stored
			p.hold = true
			st.routes.watch(t, s.cache, nil, nil)
			publishOK(t, s, switched(t, "b", "a", "b", "c")) // a cluster added, the route changed
			st.clusters.drain(t, s.cache)
			if st.routes.answers != 0 {
				t.Fatal("a held watch was answered")
			}
			p.hold = false
			s.cache.mu.Lock()
			s.cache.recheck(func(streamKey) bool { return true })
			s.cache.mu.Unlock()
			st.routes.drain(t, s.cache)
			s.cache.forget(st.key)
			want := []string{
				"updated 7 types",
				"request cluster answered=true held=false",  // the first request
				"request cluster answered=false held=false", // its ACK, stored
				"request route answered=false held=true",    // held by the part
				"updated 3 types",
				"update cluster answered=true held=false", // the held route left waiting
				"request cluster answered=false held=false",
				"release route answered=true held=false", // the recheck
				"request route answered=false held=false",
				"closed 1",
			}
			if !slices.Equal(p.events, want) {
				t.Errorf("steps:\n%q\nwant\n%q", p.events, want)
			}
			got[i] = p.events
		})
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("SotW and delta differ:\n%q\n%q", got[0], got[1])
	}
}
