package xds

import (
	"cmp"
	"slices"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
)

// clients tracks every open xDS stream: which node it belongs to and, per
// resource type, what was sent and what the Envoy accepted or rejected. It
// is how NACKs are recognised (a NACK names the nonce of the rejected
// response, not its version) and what CSDS reports.
type clients struct {
	mu      sync.Mutex
	streams map[streamKey]*client
}

// streamKey identifies a stream: go-control-plane numbers SotW and delta
// streams with separate counters, each from 1, so the IDs alone collide
// (assumption 9).
type streamKey struct {
	delta bool
	id    int64
}

type client struct {
	node   *corev3.Node
	delta  bool
	opened time.Time
	types  map[string]*typeStatus
}

// typeStatus is one resource type as one Envoy sees it.
type typeStatus struct {
	// pending are responses sent and not yet answered, oldest first.
	pending []sentResponse
	// What the Envoy runs, resource name to the version it ACKed (the
	// type's version in SotW, the resource's own in delta): base, the
	// resources of the response that gave it all it held (a full SotW
	// response, or the first response of a type), then acked, the
	// versions ACKed since, less dropped, the names removed since. The
	// base's lists are the snapshot's, shared by every Envoy sent the
	// same: a map per Envoy of every cluster, and then of every load
	// assignment, was most of what each Envoy cost (docs/benchmarks.md,
	// "Issue 31"). ackedMap puts them together.
	base      resourceList
	acked     map[string]string
	dropped   map[string]struct{}
	ackedVer  string // the type's version in the last ACKed response
	ackedAt   time.Time
	rejection *rejection // the last NACK, until a later response is ACKed
	// subscribed, for the types a SotW client asks for by name and is sent
	// partially (routes, load assignments, secrets), is the names it last
	// asked for: acked keeps what it dropped since until list filters it.
	subscribed []string
}

type sentResponse struct {
	nonce   string
	version string
	// list is the resources in the response with their versions;
	// removed, in delta, those it withdrew. full says the response is
	// the whole state of its type (SotW listeners, clusters).
	list    resourceList
	removed []string
	full    bool
}

// resourceList is the resources of a response, in order: names with their
// versions. Its slices are the snapshot's (or the shared list's) where the
// response sent a type whole, so that remembering it costs an Envoy
// nothing.
type resourceList struct {
	names []string
	// versions are the names' versions, by position; nil: every one is
	// at version.
	versions []string
	version  string
}

func (l resourceList) len() int { return len(l.names) }

// at is the i-th resource's name and version.
func (l resourceList) at(i int) (string, string) {
	if l.versions == nil {
		return l.names[i], l.version
	}
	return l.names[i], l.versions[i]
}

// count is the number of resources in the response.
func (r sentResponse) count() int { return r.list.len() }

// namesSet is the response's resources by name with their versions.
func (r sentResponse) namesSet() map[string]string {
	out := make(map[string]string, r.list.len())
	for i := range r.list.len() {
		name, v := r.list.at(i)
		out[name] = v
	}
	return out
}

// ackedMap is everything the Envoy runs of the type, by name.
func (ts *typeStatus) ackedMap() map[string]string {
	out := make(map[string]string, ts.base.len()+len(ts.acked))
	for i := range ts.base.len() {
		name, v := ts.base.at(i)
		out[name] = v
	}
	for name, v := range ts.acked {
		out[name] = v
	}
	for name := range ts.dropped {
		delete(out, name)
	}
	return out
}

// held is about how many names the Envoy runs of the type.
func (ts *typeStatus) held() int { return ts.base.len() + len(ts.acked) }

// ack records an ACKed response.
func (ts *typeStatus) ack(r sentResponse) {
	switch {
	case r.full, ts.held() == 0 && len(ts.dropped) == 0:
		// All it holds: a full response, or the first of the type.
		ts.base, ts.acked, ts.dropped = r.list, nil, nil
		return
	case ts.base.len() > 0 && len(ts.acked)+len(ts.dropped) > ts.base.len()/2+64:
		// Fold base in once the changes since rival it, so that what
		// is kept stays about the size of what the Envoy runs.
		ts.base, ts.acked, ts.dropped = resourceList{}, ts.ackedMap(), nil
	}
	if ts.acked == nil {
		ts.acked = make(map[string]string, r.list.len())
	}
	for i := range r.list.len() {
		name, v := r.list.at(i)
		ts.acked[name] = v
		delete(ts.dropped, name)
	}
	for _, name := range r.removed {
		delete(ts.acked, name)
		if ts.base.len() > 0 {
			if ts.dropped == nil {
				ts.dropped = map[string]struct{}{}
			}
			ts.dropped[name] = struct{}{}
		}
	}
}

type rejection struct {
	version string
	detail  string
	at      time.Time
	names   map[string]string
}

// answer is what a request says about an earlier response.
type answer int

const (
	answerNone answer = iota // a first request, a subscription change, or a stale nonce
	answerACK
	answerNACK
)

// maxPending bounds what is remembered of unanswered responses. Envoy answers
// each response before long; more than a few outstanding means responses
// were superseded and their answers will never matter.
const maxPending = 8

func newClients() *clients {
	return &clients{streams: map[streamKey]*client{}}
}

func (c *clients) open(key streamKey, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streams[key] = &client{delta: key.delta, opened: now, types: map[string]*typeStatus{}}
}

func (c *clients) close(key streamKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, key)
}

// sent records a response just before it goes out.
func (c *clients) sent(key streamKey, typeURL string, r sentResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.typeStatus(key, typeURL)
	if ts == nil {
		return
	}
	ts.pending = append(ts.pending, r)
	if len(ts.pending) > maxPending {
		ts.pending = slices.Delete(ts.pending, 0, len(ts.pending)-maxPending)
	}
}

// received records a request and says whether it answers a response, and
// which: the one whose nonce it names (the server sets a nonce of its own,
// new for each response of a stream: assumption 10). The node is remembered from the first request that carries it.
// initial are the resource versions a delta client already has when it
// (re)connects: what it runs, though this stream sent none of it.
func (c *clients) received(key streamKey, node *corev3.Node, typeURL, nonce string, errorDetail *status.Status, initial map[string]string, now time.Time) (answer, sentResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.streams[key]
	if cl == nil {
		return answerNone, sentResponse{}
	}
	if node != nil && cl.node == nil {
		cl.node = identity(node)
	}
	ts := c.typeStatus(key, typeURL)
	if nonce == "" {
		if len(initial) > 0 && ts.held() == 0 {
			ts.acked = make(map[string]string, len(initial))
			for name, v := range initial {
				ts.acked[name] = v
			}
			ts.ackedAt = now
		}
		return answerNone, sentResponse{}
	}
	i := slices.IndexFunc(ts.pending, func(r sentResponse) bool { return r.nonce == nonce })
	if i < 0 {
		return answerNone, sentResponse{}
	}
	r := ts.pending[i]
	// Responses older than the one answered are superseded.
	ts.pending = slices.Delete(ts.pending, 0, i+1)
	if errorDetail != nil {
		ts.rejection = &rejection{version: r.version, detail: errorDetail.GetMessage(), at: now, names: r.namesSet()}
		return answerNACK, r
	}
	ts.ack(r)
	ts.ackedVer, ts.ackedAt, ts.rejection = r.version, now, nil
	return answerACK, r
}

// keepOnly forgets the ACKed resources of a type that a client no longer
// subscribes to (a state-of-the-world client names them all in each
// request; none named means all of them).
func (c *clients) keepOnly(key streamKey, typeURL string, names []string) {
	if len(names) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams[key] == nil {
		return
	}
	// Only remembered here: every request (each ACK) names everything the
	// client wants, every load assignment, and filtering then, under this
	// lock, for hundreds of Envoys acknowledging one change, held up the
	// responses to the others (docs/benchmarks.md, "Optimisations", 20). list
	// filters; acked is pruned only once it has grown well past the
	// subscription.
	ts := c.typeStatus(key, typeURL)
	ts.subscribed = names
	if ts.held() > 2*len(names)+64 {
		ts.base, ts.acked, ts.dropped = resourceList{}, subscribedOnly(ts.ackedMap(), names), nil
	}
}

// subscribedOnly returns the entries of acked that names asks for.
func subscribedOnly(acked map[string]string, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		if v, ok := acked[n]; ok {
			out[n] = v
		}
	}
	return out
}

func protocolOf(key streamKey) string {
	if key.delta {
		return protocolDelta
	}
	return protocolSotW
}

// identity keeps what tells an Envoy apart and drops the list of its
// extensions and client features: hundreds of entries per Envoy that would
// swamp every status query and the memory kept per stream.
func identity(n *corev3.Node) *corev3.Node {
	return &corev3.Node{
		Id:                   n.GetId(),
		Cluster:              n.GetCluster(),
		Metadata:             n.GetMetadata(),
		Locality:             n.GetLocality(),
		UserAgentName:        n.GetUserAgentName(),
		UserAgentVersionType: n.GetUserAgentVersionType(),
	}
}

// node returns the node of a stream, once known.
func (c *clients) node(key streamKey) *corev3.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.streams[key]; cl != nil {
		return cl.node
	}
	return nil
}

func (c *clients) typeStatus(key streamKey, typeURL string) *typeStatus {
	cl := c.streams[key]
	if cl == nil {
		return nil
	}
	ts := cl.types[typeURL]
	if ts == nil {
		ts = &typeStatus{}
		cl.types[typeURL] = ts
	}
	return ts
}

// clientView is a copy of one client's state, safe to read without the lock.
type clientView struct {
	key    streamKey
	node   *corev3.Node
	opened time.Time
	types  map[string]typeView
}

type typeView struct {
	acked     map[string]string
	ackedVer  string
	ackedAt   time.Time
	rejection *rejection
}

// list returns every stream whose node is known, sorted by node id, then
// stream.
func (c *clients) list() []clientView {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]clientView, 0, len(c.streams))
	for key, cl := range c.streams {
		if cl.node == nil {
			continue
		}
		v := clientView{key: key, node: cl.node, opened: cl.opened, types: map[string]typeView{}}
		for t, ts := range cl.types {
			tv := typeView{ackedVer: ts.ackedVer, ackedAt: ts.ackedAt, acked: ts.ackedMap()}
			if ts.subscribed != nil {
				tv.acked = subscribedOnly(tv.acked, ts.subscribed)
			}
			if ts.rejection != nil {
				r := *ts.rejection
				tv.rejection = &r
			}
			v.types[t] = tv
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b clientView) int {
		return cmp.Or(
			cmp.Compare(a.node.GetId(), b.node.GetId()),
			cmp.Compare(protocolOf(a.key), protocolOf(b.key)),
			cmp.Compare(a.key.id, b.key.id),
		)
	})
	return out
}
