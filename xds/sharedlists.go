package xds

import (
	"fmt"
	"sync"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// sharedLists lets every stream sent the whole of a type share one
// encoding of it. An Envoy connecting is sent every listener, cluster and
// load assignment, SotW and delta alike, and each stream encoded those
// lists anew: the resources' encodings are shared (responseCodec), but
// gRPC's codec copies them into a buffer of the response's size, held
// until the client has read it. When many Envoys connect at once (a
// rollout of the control plane, a new node pool), that was a copy of the
// configuration per Envoy in memory at the same time, and the CPU to make
// it (docs/benchmarks.md, "Issue 31").
//
// The cache notes here each answer that sends every resource of a type
// (noteSotw, deltaList); from the second of one content, the codec sends
// one encoding of the whole list, made once, instead of encoding the
// response's resources (sotwWire, deltaWire). The first is encoded as
// before: a content sent whole only once (one Envoy, or an endpoint change
// that every stream is sent only in part) costs no second copy.
//
// A list is found by its first element's address: a whole SotW answer's
// resources are the content's own slice (typeSnapshot.anys), a whole
// delta answer's the slice made here. An entry goes when its content is
// replaced (drop); a response of it encoded later is encoded as before.
type sharedLists struct {
	mu    sync.Mutex
	sotw  map[**anypb.Any]*sharedList
	delta map[**discoveryv3.Resource]*sharedList
	byTS  map[*typeSnapshot]*sharedList
}

// sharedList is what is shared of one content.
type sharedList struct {
	ts *typeSnapshot
	// sotwUses and deltaUses count the whole answers made of ts.
	sotwUses, deltaUses int
	// resources are ts's delta resources, made on the second whole delta
	// answer.
	resources []*discoveryv3.Resource
	sotwWire  listWire
	deltaWire listWire
}

// listWire is a list's encoding as the resources field of a response:
// each element's tag, length and message, one after the other.
type listWire struct {
	once sync.Once
	buf  []byte
	err  error
}

// sharedListMin is the fewest resources a list shared here has: below it
// an encoding of its own costs each stream little.
const sharedListMin = 2

func newSharedLists() *sharedLists {
	return &sharedLists{
		sotw:  map[**anypb.Any]*sharedList{},
		delta: map[**discoveryv3.Resource]*sharedList{},
		byTS:  map[*typeSnapshot]*sharedList{},
	}
}

// entry returns ts's entry, made if new; l.mu is held.
func (l *sharedLists) entry(ts *typeSnapshot) *sharedList {
	e := l.byTS[ts]
	if e == nil {
		e = &sharedList{ts: ts}
		l.byTS[ts] = e
	}
	return e
}

// noteSotw notes a SotW answer whose resources are all of ts's, as they
// are (ts.anys).
func (l *sharedLists) noteSotw(ts *typeSnapshot) {
	if l == nil || len(ts.anys) < sharedListMin {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(ts)
	e.sotwUses++
	l.sotw[&ts.anys[0]] = e
}

// deltaList notes a delta answer sending every resource of ts, and returns
// the resources it is to send from the second such answer on, nil before.
func (l *sharedLists) deltaList(ts *typeSnapshot) []*discoveryv3.Resource {
	if l == nil || len(ts.anys) < sharedListMin {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(ts)
	e.deltaUses++
	if e.deltaUses < 2 {
		return nil
	}
	if e.resources == nil {
		e.resources = deltaResources(ts, nil, true)
		l.delta[&e.resources[0]] = e
	}
	return e.resources
}

// deltaResources makes the delta resources of ts at the given positions,
// or all of them, in one allocation.
func deltaResources(ts *typeSnapshot, send []int, all bool) []*discoveryv3.Resource {
	n := len(send)
	if all {
		n = len(ts.anys)
	}
	block := make([]discoveryv3.Resource, n)
	out := make([]*discoveryv3.Resource, n)
	for i := range out {
		j := i
		if !all {
			j = send[i]
		}
		r := &block[i]
		r.Name, r.Version, r.Resource = ts.names[j], ts.hashes[j], ts.anys[j]
		out[i] = r
	}
	return out
}

// drop forgets what is shared of a content the cache no longer holds.
func (l *sharedLists) drop(ts *typeSnapshot) {
	if l == nil || ts == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byTS[ts]
	if e == nil {
		return
	}
	delete(l.byTS, ts)
	// Another content may share ts's slice of encodings; its entry stays.
	if len(ts.anys) > 0 && l.sotw[&ts.anys[0]] == e {
		delete(l.sotw, &ts.anys[0])
	}
	if e.resources != nil {
		delete(l.delta, &e.resources[0])
	}
}

// sotwWire returns the shared encoding of resources, a SotW response's,
// when they are all of a content already sent whole before.
func (l *sharedLists) sotwWire(resources []*anypb.Any) ([]byte, bool, error) {
	if l == nil || len(resources) < sharedListMin {
		return nil, false, nil
	}
	l.mu.Lock()
	e := l.sotw[&resources[0]]
	ok := e != nil && e.sotwUses >= 2 && len(e.ts.anys) == len(resources)
	l.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	buf, err := e.sotwWire.encode(len(resources), func(i int) proto.Message { return resources[i] }, responseResourcesField)
	return buf, err == nil, err
}

// deltaWire returns the shared encoding of resources, a delta response's,
// when they are the list deltaList made.
func (l *sharedLists) deltaWire(resources []*discoveryv3.Resource) ([]byte, bool, error) {
	if l == nil || len(resources) < sharedListMin {
		return nil, false, nil
	}
	l.mu.Lock()
	e := l.delta[&resources[0]]
	ok := e != nil && len(e.resources) == len(resources)
	l.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	buf, err := e.deltaWire.encode(len(resources), func(i int) proto.Message { return resources[i] }, deltaResourcesField)
	return buf, err == nil, err
}

// encode makes the encoding once, on the first stream that needs it; the
// others wait for it.
func (w *listWire) encode(n int, at func(int) proto.Message, field protowire.Number) ([]byte, error) {
	w.once.Do(func() {
		size := 0
		for i := range n {
			s := proto.Size(at(i))
			size += protowire.SizeTag(field) + protowire.SizeBytes(s)
		}
		buf := make([]byte, 0, size)
		for i := range n {
			m := at(i)
			buf = protowire.AppendTag(buf, field, protowire.BytesType)
			buf = protowire.AppendVarint(buf, uint64(proto.Size(m)))
			var err error
			if buf, err = (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(buf, m); err != nil {
				w.err = fmt.Errorf("encoding resource %d of %d: %w", i, n, err)
				return
			}
		}
		w.buf = buf
	})
	return w.buf, w.err
}

// everyPosition says whether send is every position of a list of n, in
// order.
func everyPosition(send []int, n int) bool {
	if len(send) != n {
		return false
	}
	for i, j := range send {
		if i != j {
			return false
		}
	}
	return true
}

// everyResource says whether resources are ts's, every one in order.
func everyResource(resources []*discoveryv3.Resource, ts *typeSnapshot) bool {
	if len(resources) != len(ts.anys) {
		return false
	}
	for i, r := range resources {
		if r.GetResource() != ts.anys[i] {
			return false
		}
	}
	return true
}

// namesOf is the names and versions of a delta response's resources: the
// content's own lists when they are a shared list, else lists of their
// own (two slices, where a map of every name per Envoy cost several
// times more).
func (l *sharedLists) namesOf(resources []*discoveryv3.Resource) resourceList {
	if l != nil && len(resources) >= sharedListMin {
		l.mu.Lock()
		e := l.delta[&resources[0]]
		l.mu.Unlock()
		if e != nil && len(e.resources) == len(resources) {
			return resourceList{names: e.ts.names, versions: e.ts.hashes}
		}
	}
	out := resourceList{names: make([]string, len(resources)), versions: make([]string, len(resources))}
	for i, r := range resources {
		out.names[i], out.versions[i] = r.GetName(), r.GetVersion()
	}
	return out
}
