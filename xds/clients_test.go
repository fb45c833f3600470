package xds

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// A state-of-the-world client that stops asking for load assignments no
// longer runs them: CSDS lists only those it still asks for, and what is
// kept for it does not grow without bound as it changes what it asks for.
func TestClientsListOnlyWhatIsStillAskedFor(t *testing.T) {
	c := newClients()
	key := streamKey{id: 1}
	now := time.Now()
	c.open(key, now)
	typ := resource.EndpointType
	node := &corev3.Node{Id: "envoy-1"}
	for round := 0; round < 50; round++ {
		// Each round asks for ten names, five of them new.
		var names []string
		for i := 5 * round; i < 5*round+10; i++ {
			names = append(names, fmt.Sprintf("c%d", i))
		}
		c.keepOnly(key, typ, names)
		sent := map[string]string{}
		for _, n := range names[5:] {
			sent[n] = fmt.Sprintf("v%d", round)
		}
		nonce := fmt.Sprint(round)
		c.sent(key, typ, sentResponse{nonce: nonce, version: "x", names: sent})
		c.received(key, node, typ, nonce, nil, nil, now)

		views := c.list()
		if len(views) != 1 {
			t.Fatalf("%d clients listed", len(views))
		}
		got := slices.Sorted(maps.Keys(views[0].types[typ].acked))
		want := slices.Clone(names)
		if round == 0 {
			want = names[5:] // the first five were never sent
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: CSDS lists %v, want %v", round, got, want)
		}
	}
	c.mu.Lock()
	kept := len(c.streams[key].types[typ].acked)
	c.mu.Unlock()
	if kept > 2*10+64 {
		t.Fatalf("%d acknowledged names kept for a client asking for 10", kept)
	}
}
