package xds

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"sync"
	"unsafe"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/internal/listdiff"
	"github.com/ingress-xds/ingress-xds/translate"
)

// snapshotter validates, hashes and assembles snapshots, remembering the
// result for every message it has seen. The translator hands out the very
// same message for a resource that did not change, so a publish only
// encodes, hashes and validates what is new: at 10,000 Ingresses that is the
// difference between re-encoding 200,000 resources per change and a handful.
//
// The route configuration is rebuilt on every change but made of remembered
// virtual hosts, so it is validated and hashed through them.
//
// The remembered results are kept in place and pruned of messages no longer
// published once those are half of them. Each type also remembers what it
// published, position by position: a publish compares the new list with it
// by identity, looks at the positions that changed only, and updates the
// type's version and indexes from those (the version is an XOR of per-
// resource digests, so it can be updated without rehashing the rest). A type
// that did not change reuses the previous snapshot's indexes, which
// go-control-plane never writes to. At 10,000 Ingresses an endpoint change
// thus costs a few map copies rather than re-encoding 200,000 resources.
type snapshotter struct {
	seen map[proto.Message]resourceInfo
	prev [cacheTypes]typeSnapshot
	// prevDeltaRoutes is the delta streams' route content last published
	// (deltaroutes.go).
	prevDeltaRoutes typeSnapshot
	// routes holds the route configurations' results within one publish.
	routes map[*routev3.RouteConfiguration]resourceInfo
	// vhosts holds, per route configuration name, the virtual hosts it was
	// last made of and their results, position by position.
	vhosts map[string]vhostInfos
	// listsOf is the Resources being published and lists its typed lists,
	// converted once for validation, the snapshot and pruning.
	listsOf *translate.Resources
	lists   []typedList
	// typeURLs interns each message type's Any type URL: one string per
	// type rather than one per resource (200,000 of them at 10,000
	// Ingresses).
	typeURLs map[protoreflect.FullName]string
}

// typedLists returns r's typed lists, converting each at most once per
// publish (at 10,000 Ingresses a list of 100,000 load assignments).
func (s *snapshotter) typedLists(r *translate.Resources) []typedList {
	if s.listsOf != r {
		s.listsOf, s.lists = r, typedResources(r)
	}
	return s.lists
}

// vhostInfos are a route configuration's virtual hosts and their results.
type vhostInfos struct {
	msgs  []*routev3.VirtualHost
	infos []resourceInfo
}

// cacheTypes is the number of resource types a go-control-plane snapshot has.
const cacheTypes = len(cache.Snapshot{}.Resources)

// typeSnapshot is what one type published. Once published it is only read:
// the resource cache serves it to every stream.
type typeSnapshot struct {
	version string
	items   []types.Resource // by position, as published
	data    unsafe.Pointer   // the translator's list they came from
	names   []string         // their names
	hashes  []string         // their per-resource versions
	anys    []*anypb.Any     // their encodings, sent as they are
	// index gives a name's position; shared by every state with the same
	// names.
	index  *nameIndex
	digest [sha256.Size]byte
	// updated and removed are the names whose content changed and the
	// names gone since the state this one replaced, whose version is
	// replaced ("" for the first).
	updated, removed []string
	replaced         string
	// byName indexes the content by name for readers of a Snapshot; shared
	// by every state with the same content.
	byName *nameIndexes
	// namespaced says that a subscription to a name also asks for every
	// resource in that namespace (VHDS's virtual hosts, vhds.go); the cache
	// sets it.
	namespaced bool
	// fullState says that a SotW answer of the type holds every resource
	// the client asks for, not only those it lacks (scopes.go); the cache
	// sets it.
	fullState bool
	// vhdsRoutes, for the delta streams' routes, are the route
	// configurations whose virtual hosts come over VHDS (vhds.go): a
	// stream is sent virtual hosts once it holds them.
	vhdsRoutes []string
	// lazy, for clusters, says which come on demand (ondemand.go): a delta
	// client's wildcard subscription leaves them out, and the client asks
	// for each by name; nil: none.
	lazy *translate.OnDemand
}

// nameIndexes are a type's versions and resources by name, built on first
// use. Publishing works by position and never needs them: building them
// for every change would copy maps of 100,000 names at 10,000 Ingresses to
// change one load assignment. CSDS, the Inspector and tests read them.
type nameIndexes struct {
	once      sync.Once
	versions  map[string]string
	resources map[string]types.Resource
}

func (ts *typeSnapshot) indexes() *nameIndexes {
	x := ts.byName
	if x == nil {
		return &nameIndexes{}
	}
	x.once.Do(func() {
		x.versions = make(map[string]string, len(ts.names))
		x.resources = make(map[string]types.Resource, len(ts.names))
		for j, name := range ts.names {
			x.versions[name] = ts.hashes[j]
			x.resources[name] = ts.items[j]
		}
	})
	return x
}

// resourceInfo is what a publish needs of a message, computed once per
// message: its version, its encoding and whether it is valid.
type resourceInfo struct {
	hash string
	any  *anypb.Any
	err  error
}

func newSnapshotter() *snapshotter {
	return &snapshotter{seen: map[proto.Message]resourceInfo{}, vhosts: map[string]vhostInfos{}, typeURLs: map[protoreflect.FullName]string{}}
}

// build validates r and turns it into a snapshot.
func (s *snapshotter) build(r *translate.Resources) (*Snapshot, error) {
	if err := s.validate(r); err != nil {
		return nil, err
	}
	return s.snapshot(r)
}

// validate runs Envoy's field validation on every resource not published
// last time (those were valid then and are the same messages now).
func (s *snapshotter) validate(r *translate.Resources) error {
	s.routes = map[*routev3.RouteConfiguration]resourceInfo{}
	var errs []error
	for _, t := range s.typedLists(r) {
		if t.sameList(&s.prev[cache.GetResponseType(t.typeURL)]) {
			continue
		}
		// Only what was not published, wherever it is now: a cluster
		// added shifts every cluster after it.
		items := t.items()
		listdiff.Walk(s.prev[cache.GetResponseType(t.typeURL)].items, items, func(int, int) {}, func(i int) {
			if err := s.info(t.typeURL, items[i]).err; err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", t.typeURL, cache.GetResourceName(items[i]), err))
			}
		}, func(int) {})
	}
	for _, rc := range r.DeltaRoutes { // deltaroutes.go
		if err := s.info(resource.RouteType, rc).err; err != nil {
			errs = append(errs, fmt.Errorf("%s %q (delta): %w", resource.RouteType, rc.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// snapshot assembles a consistent snapshot with content-derived versions,
// per type and per resource (the latter for delta xDS, filled in here so that
// the cache never encodes everything again to compute them).
func (s *snapshotter) snapshot(r *translate.Resources) (*Snapshot, error) {
	if s.routes == nil {
		s.routes = map[*routev3.RouteConfiguration]resourceInfo{}
	}
	defer func() { s.routes, s.listsOf, s.lists = nil, nil, nil }()
	snap := &Snapshot{}
	next := &snap.types
	live, namesChanged := 0, false
	for _, t := range s.typedLists(r) {
		live += t.n
		i := cache.GetResponseType(t.typeURL)
		var ts typeSnapshot
		sameNames := true
		if t.sameList(&s.prev[i]) {
			ts = s.prev[i]
			ts.updated, ts.removed = nil, nil
		} else {
			var err error
			if ts, sameNames, err = s.typeSnapshot(&s.prev[i], t.typeURL, t.items()); err != nil {
				return nil, err
			}
			ts.data = t.data
		}
		namesChanged = namesChanged || !sameNames
		ts.replaced = s.prev[i].version
		next[i] = ts
	}
	onDemandInto(&next[types.Cluster], &s.prev[types.Cluster], r.OnDemand) // ondemand.go
	deltaRoutes, err := s.deltaRoutesSnapshot(r, &next[types.Route], &s.prevDeltaRoutes, &s.prev[types.Route])
	if err != nil {
		return nil, err
	}
	// Virtual hosts are asked for by delta streams, by the names of their
	// route configurations (vhds.go, deltaroutes.go).
	if namesChanged || deltaRoutes.version != s.prevDeltaRoutes.version {
		if err := discoveredConsistent(&next[types.VirtualHost], &deltaRoutes); err != nil {
			return nil, fmt.Errorf("inconsistent snapshot: %w", err)
		}
	}
	deltaRoutes.replaced = s.prevDeltaRoutes.version
	snap.deltaRoutes = deltaRoutes
	// Consistency depends on names only: with the same names as a published
	// snapshot, it holds already.
	if namesChanged {
		if err := consistent(next); err != nil {
			return nil, fmt.Errorf("inconsistent snapshot: %w", err)
		}
	}
	for i := range next {
		if next[i].items != nil {
			s.prev[i] = next[i]
		}
	}
	if deltaRoutes.items != nil {
		s.prevDeltaRoutes = deltaRoutes
	}
	s.prune(r, live)
	return snap, nil
}

// typeSnapshot works out one type's part of a snapshot from what it
// published last, and says whether the names are the same as then.
func (s *snapshotter) typeSnapshot(prev *typeSnapshot, typeURL string, items []types.Resource) (typeSnapshot, bool, error) {
	sameNames := prev.items != nil && len(items) == len(prev.items)
	if sameNames {
		var changed []int
		for j := range items {
			if items[j] != prev.items[j] {
				changed = append(changed, j)
				if cache.GetResourceName(items[j]) != cache.GetResourceName(prev.items[j]) {
					sameNames = false
				}
			}
		}
		if len(changed) == 0 {
			out := *prev
			out.items = items
			out.updated, out.removed = nil, nil
			return out, true, nil
		}
		if sameNames && len(changed) <= len(items)/4 {
			out := typeSnapshot{
				items:  items,
				names:  prev.names,
				hashes: slices.Clone(prev.hashes),
				anys:   slices.Clone(prev.anys),
				index:  prev.index,
				digest: prev.digest,
				byName: &nameIndexes{},
			}
			for _, j := range changed {
				name := prev.names[j]
				info := s.info(typeURL, items[j])
				if info.hash == "" {
					return typeSnapshot{}, false, fmt.Errorf("%s %q: %w", typeURL, name, info.err)
				}
				if info.hash == prev.hashes[j] {
					continue // a new message with the same content
				}
				xorInto(&out.digest, itemDigest(name, prev.hashes[j]))
				xorInto(&out.digest, itemDigest(name, info.hash))
				out.hashes[j] = info.hash
				out.anys[j] = info.any
				out.updated = append(out.updated, name)
			}
			if len(out.updated) == 0 {
				out.byName = prev.byName
			}
			out.version = digestVersion(out.digest)
			return out, true, nil
		}
	}
	if prev.items != nil {
		if out, ok, err := s.shiftedSnapshot(prev, typeURL, items); ok || err != nil {
			return out, ok && len(out.removed) == 0 && len(out.names) == len(prev.names), err
		}
	}
	out := typeSnapshot{
		items:  items,
		names:  make([]string, len(items)),
		hashes: make([]string, len(items)),
		anys:   make([]*anypb.Any, len(items)),
		byName: &nameIndexes{},
	}
	for j, item := range items {
		name := cache.GetResourceName(item)
		info := s.info(typeURL, item)
		if info.hash == "" {
			return typeSnapshot{}, false, fmt.Errorf("%s %q: %w", typeURL, name, info.err)
		}
		out.names[j] = name
		out.hashes[j] = info.hash
		out.anys[j] = info.any
		xorInto(&out.digest, itemDigest(name, info.hash))
	}
	if sameNames && out.digest == prev.digest {
		// New messages, same content (a route configuration assembled
		// again): keep serving the published indexes.
		out.version, out.names, out.index, out.byName = prev.version, prev.names, prev.index, prev.byName
		return out, true, nil
	}
	if sameNames {
		out.names, out.index = prev.names, prev.index
	} else {
		out.index = newNameIndex(out.names)
	}
	lookup := prev.index.bulk(len(out.names))
	for j, name := range out.names {
		if k, ok := lookup(name); !ok || prev.hashes[k] != out.hashes[j] {
			out.updated = append(out.updated, name)
		}
	}
	lookup = out.index.bulk(len(prev.names))
	for _, name := range prev.names {
		if _, ok := lookup(name); !ok {
			out.removed = append(out.removed, name)
		}
	}
	out.version = digestVersion(out.digest)
	return out, sameNames, nil
}

// shiftedSnapshot is typeSnapshot when a few resources were added to or
// removed from the list (their names changed) and the rest are the very
// same messages, perhaps at other positions: one cluster added among
// 100,000. The unchanged resources' names, versions and encodings are
// taken from prev as they are, and only the resources added or removed are
// looked at and hashed into the type's version. It reports false, having
// done nothing, when too much of the list changed for that to pay.
func (s *snapshotter) shiftedSnapshot(prev *typeSnapshot, typeURL string, items []types.Resource) (typeSnapshot, bool, error) {
	out := typeSnapshot{
		items:  items,
		names:  make([]string, len(items)),
		hashes: make([]string, len(items)),
		anys:   make([]*anypb.Any, len(items)),
		digest: prev.digest,
		byName: &nameIndexes{},
	}
	var added, removed []int
	listdiff.Walk(prev.items, items,
		func(i, k int) {
			out.names[i], out.hashes[i], out.anys[i] = prev.names[k], prev.hashes[k], prev.anys[k]
		},
		func(i int) { added = append(added, i) },
		func(k int) { removed = append(removed, k) })
	if len(added)+len(removed) > max(len(items), len(prev.items))/4 {
		return typeSnapshot{}, false, nil
	}
	was := make(map[string]string, len(removed))
	for _, k := range removed {
		name, hash := prev.names[k], prev.hashes[k]
		was[name] = hash
		xorInto(&out.digest, itemDigest(name, hash))
	}
	is := make(map[string]bool, len(added))
	for _, i := range added {
		name := cache.GetResourceName(items[i])
		info := s.info(typeURL, items[i])
		if info.hash == "" {
			return typeSnapshot{}, false, fmt.Errorf("%s %q: %w", typeURL, name, info.err)
		}
		out.names[i], out.hashes[i], out.anys[i] = name, info.hash, info.any
		xorInto(&out.digest, itemDigest(name, info.hash))
		is[name] = true
		if hash, ok := was[name]; !ok || hash != info.hash {
			out.updated = append(out.updated, name) // new, or new content
		}
	}
	for _, k := range removed {
		if name := prev.names[k]; !is[name] {
			out.removed = append(out.removed, name)
		}
	}
	out.index = newNameIndex(out.names)
	out.version = digestVersion(out.digest)
	return out, true, nil
}

// changedTypes lists the types of the last snapshot whose version differs
// from published's (every type when nothing was published), for the
// resource cache. Each is a copy of its own, which the cache may annotate.
func (s *snapshotter) changedTypes(published *Snapshot) []typeChange {
	var out []typeChange
	for _, typeURL := range servedTypes {
		ts := s.prev[cache.GetResponseType(typeURL)]
		if ts.items == nil {
			continue
		}
		if published != nil && published.GetVersion(typeURL) == ts.version {
			continue
		}
		out = append(out, typeChange{typeURL: typeURL, state: &ts})
	}
	if ts := s.prevDeltaRoutes; ts.items != nil && (published == nil || published.deltaRoutes.version != ts.version) {
		out = append(out, typeChange{typeURL: deltaRouteKey, state: &ts}) // deltaroutes.go
	}
	return out
}

// itemDigest is one resource's share of its type's version.
func itemDigest(name, hash string) [sha256.Size]byte {
	h := sha256.New()
	writeField(h, name)
	writeField(h, hash)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

func xorInto(dst *[sha256.Size]byte, d [sha256.Size]byte) {
	for i := range dst {
		dst[i] ^= d[i]
	}
}

func digestVersion(d [sha256.Size]byte) string {
	return hex.EncodeToString(d[:8])
}

// prune forgets messages no longer published, once they are half of what is
// remembered. Virtual hosts are remembered beside their route
// configurations, so they count too.
func (s *snapshotter) prune(r *translate.Resources, live int) {
	if len(s.vhosts) > len(r.Routes) {
		// Route configurations gone (an HTTPS host removed).
		kept := make(map[string]vhostInfos, len(r.Routes))
		for _, rc := range r.Routes {
			if v, ok := s.vhosts[rc.GetName()]; ok {
				kept[rc.GetName()] = v
			}
		}
		s.vhosts = kept
	}
	for _, rc := range r.Routes {
		live += len(rc.VirtualHosts)
	}
	if len(s.seen) <= 2*live+1024 {
		return
	}
	kept := make(map[proto.Message]resourceInfo, live)
	keep := func(m proto.Message) {
		if info, ok := s.seen[m]; ok {
			kept[m] = info
		}
	}
	for _, t := range s.typedLists(r) {
		for _, item := range t.items() {
			keep(item)
		}
	}
	for _, rc := range r.Routes {
		for _, vh := range rc.VirtualHosts {
			keep(vh)
		}
	}
	for _, rc := range r.DeltaRoutes {
		keep(rc)
	}
	s.seen = kept
}

// info returns a message's hash and validation result, computing them once;
// typeURL is the xDS type of the list it is published in (the encoding of
// an encodedResource is of that type). Route configurations are the
// exception: the translator assembles a new one on every change, so it is
// not remembered (that would keep every past one alive), only the virtual
// hosts it is made of; a publish computes it once for validation and once
// for the snapshot.
func (s *snapshotter) info(typeURL string, m proto.Message) resourceInfo {
	if rc, isRoute := m.(*routev3.RouteConfiguration); isRoute {
		info, ok := s.routes[rc]
		if !ok {
			info = s.routeConfigurationInfo(rc)
			if s.routes != nil {
				s.routes[rc] = info
			}
		}
		return info
	}
	info, ok := s.seen[m]
	if !ok {
		switch r := m.(type) {
		case encodedResource:
			// Encoded deterministically from a validated message (its
			// contract): that encoding is the one sent, shared.
			info = encoded(typeURL, r.Encoding())
		case clusterStandIn:
			c := r.Cluster() // made once, for the type URL, the encoding and validation
			info = messageInfo(c, s.typeURL(c))
		default:
			info = messageInfo(m, s.typeURL(m))
		}
		s.seen[m] = info
	}
	return info
}

// routeConfigurationInfo validates and encodes a route configuration through
// its (remembered) virtual hosts and the rest of the message.
func (s *snapshotter) routeConfigurationInfo(rc *routev3.RouteConfiguration) resourceInfo {
	errs := []error{validateMessage(withoutField(rc, "virtual_hosts"))}
	infos := s.vhostInfos(rc)
	for i, vh := range rc.VirtualHosts {
		if err := infos[i].err; err != nil {
			errs = append(errs, fmt.Errorf("virtual host %q: %w", vh.GetName(), err))
		}
	}
	info := s.encodeRouteConfiguration(rc, infos)
	info.err = errors.Join(append(errs, info.err)...)
	return info
}

// vhostInfos returns the results of a route configuration's virtual hosts.
// Those the previous configuration of the same name had, found in place by
// identity, come from it rather than from a lookup each: the translator
// hands over the same messages for unchanged virtual hosts, in the same
// order, and at 10,000 Ingresses there are 20,000 of them.
func (s *snapshotter) vhostInfos(rc *routev3.RouteConfiguration) []resourceInfo {
	if len(rc.VirtualHosts) == 0 {
		// A delta streams' namesake of a route configuration whose
		// virtual hosts come over VHDS (deltaroutes.go): what is
		// remembered is the namesake's.
		return nil
	}
	prev := s.vhosts[rc.GetName()]
	infos := make([]resourceInfo, len(rc.VirtualHosts))
	listdiff.Walk(prev.msgs, rc.VirtualHosts,
		func(i, k int) { infos[i] = prev.infos[k] },
		func(i int) { infos[i] = s.info(resource.VirtualHostType, rc.VirtualHosts[i]) },
		func(int) {})
	s.vhosts[rc.GetName()] = vhostInfos{msgs: rc.VirtualHosts, infos: infos}
	return infos
}

// encodeRouteConfiguration encodes a route configuration from the
// remembered encodings of its virtual hosts: at 10,000 Ingresses it has
// 20,000 of them, and an Ingress change alters one or two. The virtual hosts
// come after the other fields rather than in field order, which every
// protobuf parser accepts; the version is the hash of these bytes, which
// are the ones sent.
func (s *snapshotter) encodeRouteConfiguration(rc *routev3.RouteConfiguration, infos []resourceInfo) resourceInfo {
	rest, err := cache.MarshalResource(withoutField(rc, "virtual_hosts"))
	if err != nil {
		return resourceInfo{err: fmt.Errorf("encoding: %w", err)}
	}
	// The version hashes the rest and the virtual hosts' versions rather
	// than the whole encoding (megabytes at scale): the same content
	// either way. They are hashed in chunks as they are walked, rather
	// than gathered first into a list as long as the virtual hosts, which
	// every change would allocate again.
	h := sha256.New()
	var chunk [1024]byte
	versions := binary.BigEndian.AppendUint64(chunk[:0], uint64(len(rest)))
	h.Write(versions)
	h.Write(rest)
	versions = versions[:0]
	size := len(rest)
	for i, vh := range rc.VirtualHosts {
		info := infos[i]
		if info.any == nil {
			return resourceInfo{err: fmt.Errorf("encoding virtual host %q: %w", vh.GetName(), info.err)}
		}
		if len(versions)+1+len(info.hash) > len(chunk) {
			h.Write(versions)
			versions = versions[:0]
		}
		versions = append(append(versions, 0), info.hash...)
		size += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(info.any.Value))
	}
	h.Write(versions)
	raw := make([]byte, 0, size)
	raw = append(raw, rest...)
	for _, info := range infos {
		raw = protowire.AppendTag(raw, virtualHostsField, protowire.BytesType)
		raw = protowire.AppendBytes(raw, info.any.Value)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return resourceInfo{
		hash: hex.EncodeToString(sum[:8]),
		any:  &anypb.Any{TypeUrl: s.typeURL(rc), Value: raw},
	}
}

// virtualHostsField is RouteConfiguration.virtual_hosts' field number.
var virtualHostsField = (&routev3.RouteConfiguration{}).ProtoReflect().Descriptor().Fields().ByName("virtual_hosts").Number()

// typeURL is m's type URL in an Any, the same string for every message of
// a type.
func (s *snapshotter) typeURL(m proto.Message) string {
	name := m.ProtoReflect().Descriptor().FullName()
	url, ok := s.typeURLs[name]
	if !ok {
		url = typeURLPrefix + string(name)
		s.typeURLs[name] = url
	}
	return url
}

// messageInfo validates and hashes one message from scratch; typeURL is
// its type's.
func messageInfo(m proto.Message, typeURL string) resourceInfo {
	info := hashMessage(m, typeURL)
	info.err = errors.Join(validateMessage(m), info.err)
	return info
}

func validateMessage(m proto.Message) error {
	if v, ok := m.(validatable); ok {
		return v.ValidateAll()
	}
	return nil
}

// hashMessage encodes a message and hashes the encoding.
func hashMessage(m proto.Message, typeURL string) resourceInfo {
	raw, err := cache.MarshalResource(m)
	if err != nil {
		return resourceInfo{err: fmt.Errorf("encoding: %w", err)}
	}
	return encoded(typeURL, raw)
}

// encoded is the info of a message encoded as raw: the encoding, kept to
// be sent as it is, and its version, a hash of it (64 bits of SHA-256,
// plenty to tell versions of one resource apart).
func encoded(typeURL string, raw []byte) resourceInfo {
	sum := sha256.Sum256(raw)
	return resourceInfo{
		hash: hex.EncodeToString(sum[:8]),
		any:  &anypb.Any{TypeUrl: typeURL, Value: raw},
	}
}

const typeURLPrefix = "type.googleapis.com/"

// withoutField returns a shallow copy of m without one field; the other
// fields share m's values, so it must only be read.
func withoutField(m proto.Message, field protoreflect.Name) proto.Message {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != field {
			dst.Set(fd, v)
		}
		return true
	})
	return dst.Interface()
}

// writeField writes a length-prefixed string, so that field boundaries are
// part of the hash.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	io.WriteString(h, s)
}
