package xds

import (
	"fmt"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// responseCodec is gRPC's proto codec but for the discovery responses the
// server sends. Their resources are encodings the snapshotter made once and
// every stream shares (translate's encoded forms, the route configuration
// assembled from its virtual hosts' encodings), and the route
// configuration alone is megabytes at scale. gRPC's codec encodes a
// response into one buffer of its whole size, copying each of those
// encodings again on every send to every stream: a SotW Envoy is sent the
// whole route configuration on each change, so each change cost each
// stream a new buffer of that size (issue 14). This codec writes the
// response's own fields and the resources' framing into small buffers and
// hands gRPC the large encodings themselves, which gRPC only reads while
// it writes them to the connection (they are never modified: standins.go).
//
// The bytes are those of the same message with the resources after the
// other fields rather than in field order, which every protobuf parser
// accepts (the route configuration is already assembled that way,
// snapshotter.go). Anything else, and a response with an Any carrying
// fields of its own (unknown to this codec), goes through gRPC's codec,
// unless it is larger than the server pools buffers for (see Marshal).
type responseCodec struct {
	encoding.CodecV2
	// lists are the whole lists of resources sent from one encoding
	// (sharedlists.go); nil: none.
	lists *sharedLists
	// names are the served names SotW requests are decoded against
	// (requestnames.go); nil: gRPC's codec decodes them.
	names *servedNames
	// requests pools the buffers a SotW request is copied into, out of
	// the frames gRPC hands it over in, to be decoded. gRPC's default
	// pool gives anything past 32 KiB a buffer of 1 MiB and clears the
	// whole of it each time; a SotW Envoy's acknowledgement of 10,000
	// load assignments is about 200 KB.
	requests mem.BufferPool
}

// Unmarshal decodes what a client sends: a SotW request against the
// served names (requestnames.go), anything else with gRPC's codec.
func (c responseCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if req, ok := v.(*discoveryv3.DiscoveryRequest); ok && c.names != nil {
		return c.unmarshalRequest(data, req)
	}
	return c.CodecV2.Unmarshal(data, v)
}

// newResponseCodec wraps gRPC's registered proto codec.
func newResponseCodec(lists *sharedLists) responseCodec {
	return responseCodec{
		CodecV2: encoding.GetCodecV2(grpcproto.Name), lists: lists,
		requests: mem.NewTieredBufferPool(256, 4<<10, 16<<10, 32<<10, 64<<10, 128<<10, 256<<10, 512<<10, 1<<20),
	}
}

// sharedEncodingMin is the smallest resource encoding sent from where it is
// rather than copied: below it, a buffer of its own costs more than the copy.
const sharedEncodingMin = 32 << 10

// Field numbers, from the descriptors.
var (
	responseResourcesField = fieldNumber(&discoveryv3.DiscoveryResponse{}, "resources")
	deltaResourcesField    = fieldNumber(&discoveryv3.DeltaDiscoveryResponse{}, "resources")
	resourceAnyField       = fieldNumber(&discoveryv3.Resource{}, "resource")
	anyTypeURLField        = fieldNumber(&anypb.Any{}, "type_url")
	anyValueField          = fieldNumber(&anypb.Any{}, "value")
)

func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(name)
	if fd == nil {
		panic(fmt.Sprintf("xds: %T has no field %s", m, name))
	}
	return fd.Number()
}

// Marshal encodes v, sharing its large resource encodings (see above).
func (c responseCodec) Marshal(v any) (mem.BufferSlice, error) {
	switch r := v.(type) {
	case *discoveryv3.DiscoveryResponse:
		if list, ok, err := c.lists.sotwWire(r.Resources); err != nil {
			return nil, fmt.Errorf("encoding a shared list of %s: %w", r.GetTypeUrl(), err)
		} else if ok {
			return marshalWithList(r, list)
		}
		if shareable(r.Resources, func(a *anypb.Any) *anypb.Any { return a }) {
			return marshalSharing(r, "resources", responseResourcesField, r.Resources, appendAny)
		}
	case *discoveryv3.DeltaDiscoveryResponse:
		if list, ok, err := c.lists.deltaWire(r.Resources); err != nil {
			return nil, fmt.Errorf("encoding a shared list of %s: %w", r.GetTypeUrl(), err)
		} else if ok {
			return marshalWithList(r, list)
		}
		if shareable(r.Resources, (*discoveryv3.Resource).GetResource) {
			return marshalSharing(r, "resources", deltaResourcesField, r.Resources, appendResource)
		}
	}
	if m, ok := v.(proto.Message); ok {
		if size := proto.Size(m); size > largestPooledBuffer {
			// gRPC's codec takes the buffer from gRPC's global pool,
			// which the server's own pool option (smallBufferPool) does
			// not govern, and keeps it there after the send: a large
			// response (every cluster, at scale) is better left to the
			// garbage collector, as smallBufferPool does for the rest.
			raw, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(make([]byte, 0, size), m)
			if err != nil {
				return nil, err
			}
			return mem.BufferSlice{mem.SliceBuffer(raw)}, nil
		}
	}
	return c.CodecV2.Marshal(v)
}

// marshalWithList encodes m's fields but its resources, then list, the
// resources' shared encoding, as it is.
func marshalWithList(m proto.Message, list []byte) (mem.BufferSlice, error) {
	rest, err := proto.Marshal(withoutField(m, "resources"))
	if err != nil {
		return nil, fmt.Errorf("encoding the fields besides a shared list: %w", err)
	}
	return mem.BufferSlice{mem.SliceBuffer(rest), mem.SliceBuffer(list)}, nil
}

// shareable reports whether some resource's encoding is large enough to
// share and every Any is only a type URL and a value.
func shareable[R any](resources []R, anyOf func(R) *anypb.Any) bool {
	large := false
	for _, r := range resources {
		a := anyOf(r)
		if a == nil {
			continue
		}
		if len(a.ProtoReflect().GetUnknown()) > 0 {
			return false
		}
		large = large || len(a.GetValue()) >= sharedEncodingMin
	}
	return large
}

// sharingWriter collects an encoding as buffers: small parts appended to
// the current buffer, large encodings as buffers of their own.
type sharingWriter struct {
	out mem.BufferSlice
	buf []byte
}

// bytes appends a length-delimited field's payload, shared when large.
func (w *sharingWriter) bytes(b []byte) {
	if len(b) < sharedEncodingMin {
		w.buf = append(w.buf, b...)
		return
	}
	if len(w.buf) > 0 {
		w.out = append(w.out, mem.SliceBuffer(w.buf))
	}
	w.out = append(w.out, mem.SliceBuffer(b))
	w.buf = nil
}

func (w *sharingWriter) done() mem.BufferSlice {
	if len(w.buf) > 0 {
		w.out = append(w.out, mem.SliceBuffer(w.buf))
	}
	return w.out
}

// marshalSharing encodes m's fields but the resources with proto, then each
// resource as field number of m.
func marshalSharing[R any](m proto.Message, field protoreflect.Name, number protowire.Number, resources []R, appendOne func(*sharingWriter, R) error) (mem.BufferSlice, error) {
	rest, err := proto.Marshal(withoutField(m, field))
	if err != nil {
		return nil, err
	}
	w := &sharingWriter{buf: rest}
	for _, r := range resources {
		w.buf = protowire.AppendTag(w.buf, number, protowire.BytesType)
		if err := appendOne(w, r); err != nil {
			return nil, err
		}
	}
	return w.done(), nil
}

// anySize is the size of a's encoding.
func anySize(a *anypb.Any) int {
	n := 0
	if a.GetTypeUrl() != "" {
		n += protowire.SizeTag(anyTypeURLField) + protowire.SizeBytes(len(a.GetTypeUrl()))
	}
	if len(a.GetValue()) > 0 {
		n += protowire.SizeTag(anyValueField) + protowire.SizeBytes(len(a.GetValue()))
	}
	return n
}

// appendAny appends a's length and encoding (the payload of a field of
// type Any), its value shared when large.
func appendAny(w *sharingWriter, a *anypb.Any) error {
	w.buf = protowire.AppendVarint(w.buf, uint64(anySize(a)))
	if a.GetTypeUrl() != "" {
		w.buf = protowire.AppendTag(w.buf, anyTypeURLField, protowire.BytesType)
		w.buf = protowire.AppendString(w.buf, a.GetTypeUrl())
	}
	if len(a.GetValue()) > 0 {
		w.buf = protowire.AppendTag(w.buf, anyValueField, protowire.BytesType)
		w.buf = protowire.AppendVarint(w.buf, uint64(len(a.GetValue())))
		w.bytes(a.GetValue())
	}
	return nil
}

// appendResource appends a delta Resource's length and encoding: its other
// fields with proto, then its Any.
func appendResource(w *sharingWriter, r *discoveryv3.Resource) error {
	a := r.GetResource()
	if a == nil {
		raw, err := proto.Marshal(r)
		if err != nil {
			return err
		}
		w.buf = protowire.AppendBytes(w.buf, raw)
		return nil
	}
	rest, err := proto.Marshal(withoutField(r, "resource"))
	if err != nil {
		return err
	}
	size := len(rest) + protowire.SizeTag(resourceAnyField) + protowire.SizeBytes(anySize(a))
	w.buf = protowire.AppendVarint(w.buf, uint64(size))
	w.buf = append(w.buf, rest...)
	w.buf = protowire.AppendTag(w.buf, resourceAnyField, protowire.BytesType)
	return appendAny(w, a)
}
