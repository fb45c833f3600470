package xds

import (
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// State-of-the-world requests, decoded against the names the cache serves.
//
// A SotW Envoy names every resource it subscribes to in every request of
// the type, its acknowledgements included: every load assignment, 10,000
// names at 1,000 Ingresses, on each of its acknowledgements of an
// endpoint change. Decoding them was the largest part of the control
// plane's CPU when an endpoint change reached 2,000 SotW clients, and
// the 20 million strings it allocated most of the rest: clearing fresh
// pages and collecting them (docs/benchmarks.md, "Issue 31: what a SotW
// fan-out spends its time on"). The names are almost always those of a
// published resource, which
// the cache holds as strings already: the codec looks each name up in
// the name index of the type's current content and uses the cache's
// string, allocating and checking only a name it does not find. The
// request decoded is the one gRPC's codec decodes (the other fields are
// decoded by it), but that a request naming each served name once is
// given the content's own list of names, in the content's order (a
// request's names are a set), which tells the cache that it names
// exactly that content's resources (sotwheld.go); anything the short way does not take (a name of another
// wire type, a name that is not UTF-8, bytes that do not parse) is
// decoded by gRPC's codec, whose error is the client's.

// servedNames are the name indexes of the current SotW contents by type
// URL, which the codec reads without the cache's lock.
type servedNames struct {
	byType atomic.Pointer[map[string]*nameIndex]
}

// set records the name indexes of an update's changed contents.
func (n *servedNames) set(changes []typeChange) {
	next := map[string]*nameIndex{}
	if cur := n.byType.Load(); cur != nil {
		for k, v := range *cur {
			next[k] = v
		}
	}
	for _, ch := range changes {
		if ch.typeURL != deltaRouteKey { // the delta streams' routes: SotW streams never name them
			next[ch.typeURL] = ch.state.index
		}
	}
	n.byType.Store(&next)
}

// index is the current name index of a type, or nil.
func (n *servedNames) index(typeURL string) *nameIndex {
	if m := n.byType.Load(); m != nil {
		return (*m)[typeURL]
	}
	return nil
}

var (
	requestNamesField   = fieldNumber(&discoveryv3.DiscoveryRequest{}, "resource_names")
	requestTypeURLField = fieldNumber(&discoveryv3.DiscoveryRequest{}, "type_url")
	errNotShort         = errors.New("not decoded the short way")
)

// namesTag is the one-byte tag of a resource name.
var namesTag = byte(protowire.EncodeTag(requestNamesField, protowire.BytesType))

// unmarshalRequest decodes a SotW request: its names the short way, and
// anything the short way does not take with gRPC's codec.
func (c responseCodec) unmarshalRequest(data mem.BufferSlice, req *discoveryv3.DiscoveryRequest) error {
	buf := data.MaterializeToBuffer(c.requests)
	defer buf.Free()
	if err := c.names.decode(buf.ReadOnlyData(), req); err == nil {
		return nil
	}
	return c.CodecV2.Unmarshal(data, req)
}

// decode decodes a SotW request, its resource names from the type's name
// index where they are there, the rest with proto.Unmarshal; errNotShort
// (or proto's error) when it cannot, req then to be decoded again whole.
//
// A request is walked once to count its names and find its type URL
// (encoded after the names), and once more to compare the names unless
// their order is known to name each served name once (eachOnceOrders),
// in loops of their own: the same walks through closures and protowire's
// general decoding of each field took most of the time.
func (n *servedNames) decode(b []byte, req *discoveryv3.DiscoveryRequest) error {
	// The fields other than the names, as they come (the order of
	// fields does not change what they decode to), and the type URL.
	// The names' fields, when one run of them: b[namesFrom:namesTo].
	var rest []byte
	var typeURL []byte
	count, namesFrom, namesTo, oneRun := 0, 0, 0, true
	for at := 0; at < len(b); {
		num, typ, size, value := nextField(b[at:])
		switch {
		case size < 0:
			return errNotShort
		case num == requestNamesField:
			if typ != protowire.BytesType {
				return errNotShort
			}
			if count == 0 {
				namesFrom = at
			} else if namesTo != at {
				oneRun = false
			}
			count++
			namesTo = at + size
			// The names that follow, each a one-byte tag and length,
			// skipped in a loop of its own.
			for namesTo+1 < len(b) && b[namesTo] == namesTag && b[namesTo+1] < 0x80 && namesTo+2+int(b[namesTo+1]) <= len(b) {
				namesTo += 2 + int(b[namesTo+1])
				count++
			}
			size = namesTo - at
		default:
			if num == requestTypeURLField && typ == protowire.BytesType {
				typeURL = value
			}
			rest = append(rest, b[at:at+size]...)
		}
		at += size
	}
	if err := proto.Unmarshal(rest, req); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	x := n.index(string(typeURL))
	var served []string
	if x != nil {
		served = x.names
	}
	if count == len(served) && x.namesEach(b, namesFrom, namesTo, oneRun) {
		// Every served name, each once: the content's own list, in the
		// content's order (a request's names are a set), which says so
		// to the cache (sotwheld.go) and costs nothing to keep. No one
		// writes a request's names.
		req.ResourceNames = served[:len(served):len(served)]
		return nil
	}
	// Each is looked for after the last found first (a client naming
	// them in the content's order), and in the index's map (built on
	// first use) when it is not there.
	next := 0
	names := make([]string, 0, count)
	for f := b; len(f) > 0; {
		num, _, size, value := nextField(f) // parsed above
		f = f[size:]
		if num != requestNamesField {
			continue
		}
		if next < len(served) && served[next] == string(value) {
			names = append(names, served[next])
			next++
			continue
		}
		if x != nil {
			if j, ok := x.nameMap()[string(value)]; ok {
				names = append(names, served[j])
				next = j + 1
				continue
			}
		}
		if !utf8.Valid(value) {
			return errNotShort
		}
		names = append(names, string(value))
	}
	req.ResourceNames = names
	return nil
}

// eachOnceOrders remembers, by a keyed hash of 128 bits, the encodings of
// the names of requests found to name each of an index's names once.
//
// A SotW Envoy names the load assignments in an order of its own (its
// hash set's, seeded per process), the same in each request of its
// stream: each name is then looked up in the index's map, and an
// acknowledgement of 10,000 of them cost the control plane more than
// reading it. Each further acknowledgement of the same names in the same
// order, every Envoy's of every endpoint change (which keeps the index),
// is then one hash of its bytes. The seeds are the index's own and never
// leave the process, so no client can choose names that collide.
type eachOnceOrders struct {
	seeds [2]maphash.Seed // set once, by newEachOnceOrders
	mu    sync.Mutex
	known map[[2]uint64]struct{}
}

func newEachOnceOrders() *eachOnceOrders {
	return &eachOnceOrders{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, known: map[[2]uint64]struct{}{}}
}

// maxEachOnceOrders bounds the orders an index remembers: one per Envoy
// of a fleet, a few bytes each.
const maxEachOnceOrders = 1 << 16

func (o *eachOnceOrders) key(names []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(o.seeds[0], names), maphash.Bytes(o.seeds[1], names)}
}

func (o *eachOnceOrders) has(key [2]uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.known[key]
	return ok
}

func (o *eachOnceOrders) add(key [2]uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.known) < maxEachOnceOrders {
		o.known[key] = struct{}{}
	}
}

// namesEach says whether the names of an encoded request, which decode
// has parsed, are each of the index's names once, in any order: what a
// SotW Envoy's acknowledgement names, every load assignment served. When
// the names' fields are one run, b[from:to], an order found so before is
// known by its hash.
func (x *nameIndex) namesEach(b []byte, from, to int, oneRun bool) bool {
	if !oneRun {
		return eachNameOnce(b, x)
	}
	key := x.orders.key(b[from:to])
	if x.orders.has(key) {
		return true
	}
	if !eachNameOnce(b[from:to], x) {
		return false
	}
	x.orders.add(key)
	return true
}

// eachNameOnce says whether the names of an encoded request, which
// decode has parsed, are each of the index's names once, in any order,
// by comparing them.
func eachNameOnce(b []byte, x *nameIndex) bool {
	seen := make([]uint64, (len(x.names)+63)/64)
	next := 0
	for len(b) > 0 {
		num, _, size, value := nextField(b)
		b = b[size:]
		if num != requestNamesField {
			continue
		}
		j := next
		if j >= len(x.names) || x.names[j] != string(value) {
			var ok bool
			if j, ok = x.nameMap()[string(value)]; !ok {
				return false
			}
		}
		if seen[j/64]&(1<<(j%64)) != 0 {
			return false // named twice
		}
		seen[j/64] |= 1 << (j % 64)
		next = j + 1
	}
	return true
}

// nextField reads the field an encoded message's b starts with: its
// number, wire type and whole encoding's size, and, for a
// length-delimited field, its value; size is negative when b does not
// parse. A tag or length of one byte, as every name's is, is read
// without protowire's general varint decoding.
func nextField(b []byte) (num protowire.Number, typ protowire.Type, size int, value []byte) {
	tag, tagLen := uint64(0), 1
	if len(b) > 0 && b[0] < 0x80 {
		tag = uint64(b[0])
	} else if tag, tagLen = protowire.ConsumeVarint(b); tagLen < 0 {
		return 0, 0, -1, nil
	}
	num, typ = protowire.DecodeTag(tag)
	if num < protowire.MinValidNumber {
		return 0, 0, -1, nil
	}
	b = b[tagLen:]
	if typ != protowire.BytesType {
		n := protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, 0, -1, nil
		}
		return num, typ, tagLen + n, nil
	}
	length, lenLen := uint64(0), 1
	if len(b) > 0 && b[0] < 0x80 {
		length = uint64(b[0])
	} else if length, lenLen = protowire.ConsumeVarint(b); lenLen < 0 {
		return 0, 0, -1, nil
	}
	if length > uint64(len(b)-lenLen) {
		return 0, 0, -1, nil
	}
	end := lenLen + int(length)
	return num, typ, tagLen + end, b[lenLen:end]
}
