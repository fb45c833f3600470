package xds

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
	"unsafe"

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
		sent := resourceList{names: names[5:], version: fmt.Sprintf("v%d", round)}
		nonce := fmt.Sprint(round)
		c.sent(key, typ, sentResponse{nonce: nonce, version: "x", list: sent})
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

// A client's acknowledged resources are its first response's list, as the
// snapshot holds it (not a copy per client), with what later responses
// changed and removed on top: CSDS lists what the client runs throughout,
// however many changes, compared here with a plain map of what it was sent.
func TestClientsAckedFromBaseAndChanges(t *testing.T) {
	c := newClients()
	key := streamKey{delta: true, id: 1}
	now := time.Now()
	c.open(key, now)
	typ := resource.ClusterType
	node := &corev3.Node{Id: "envoy-1"}
	var names, versions []string
	for i := range 100 {
		names = append(names, fmt.Sprintf("c%03d", i))
		versions = append(versions, "v0")
	}
	want := map[string]string{}
	for i, n := range names {
		want[n] = versions[i]
	}
	send := func(round int, r sentResponse) {
		t.Helper()
		r.nonce = fmt.Sprint(round)
		c.sent(key, typ, r)
		if ans, _ := c.received(key, node, typ, r.nonce, nil, nil, now); ans != answerACK {
			t.Fatalf("round %d: the ACK was taken for %v", round, ans)
		}
		views := c.list()
		if got := views[0].types[typ].acked; !maps.Equal(got, want) {
			t.Fatalf("round %d: CSDS lists %v, want %v", round, got, want)
		}
	}
	send(0, sentResponse{list: resourceList{names: names, versions: versions}})
	c.mu.Lock()
	base := c.streams[key].types[typ].base
	c.mu.Unlock()
	if unsafe.SliceData(base.names) != unsafe.SliceData(names) || unsafe.SliceData(base.versions) != unsafe.SliceData(versions) {
		t.Error("the first response's list was copied, not kept as it is")
	}
	// Each round changes one name, adds one and removes one, until the
	// changes outgrow the base and are folded into it.
	for round := 1; round < 80; round++ {
		changed := names[(round*7)%len(names)]
		added := fmt.Sprintf("new%03d", round)
		removed := names[(round*13)%len(names)]
		v := fmt.Sprintf("v%d", round)
		r := sentResponse{list: resourceList{names: []string{changed, added}, version: v}}
		want[changed], want[added] = v, v
		if removed != changed {
			r.removed = []string{removed}
			delete(want, removed)
		}
		send(round, r)
	}
	c.mu.Lock()
	ts := c.streams[key].types[typ]
	kept := ts.base.len() + len(ts.acked) + len(ts.dropped)
	c.mu.Unlock()
	if kept > 2*len(want)+64 {
		t.Errorf("%d entries kept for a client running %d resources", kept, len(want))
	}
}
