package load

import (
	"errors"
	"fmt"
	"io"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// LightCodec is gRPC's proto codec but for the discovery responses a
// fan-out client receives, of which it decodes only what the client
// reads: the type URL, the version, the nonce, the removed names and each
// delta resource's name and version. Each resource's Any is skipped where
// it lies in gRPC's buffers, never copied: a SotW response is left with no
// resources (10,000 load assignments each would be as many allocations),
// a delta resource with no Any.
//
// The fan-out's clients run on the control plane's machine, 2,000 of
// them, and each was sent the whole route configuration on every Ingress
// change (megabytes at 1,000 Ingresses). gRPC's codec copies a response
// into one buffer and proto copies each Any's value out of it again: CPU
// taken from the control plane being measured, for bytes a real Envoy
// decodes on a node of its own. Reading them off the connection is left
// as it was, which the control plane's sending costs stay paired with.
//
// Exported for the xds package's fan-out benchmark, whose clients are
// these.
type LightCodec struct{ encoding.CodecV2 }

// NewLightCodec wraps gRPC's registered proto codec.
func NewLightCodec() LightCodec { return LightCodec{encoding.GetCodecV2(grpcproto.Name)} }

// Field numbers of what is skipped.
var (
	sotwResources  = fieldOf(&discoveryv3.DiscoveryResponse{}, "resources")
	deltaResources = fieldOf(&discoveryv3.DeltaDiscoveryResponse{}, "resources")
	resourceAny    = fieldOf(&discoveryv3.Resource{}, "resource")
)

func fieldOf(m proto.Message, name string) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)).Number()
}

// Unmarshal decodes a discovery response without its resources' Anys;
// anything else as gRPC's codec does.
func (c LightCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch v.(type) {
	case *discoveryv3.DiscoveryResponse, *discoveryv3.DeltaDiscoveryResponse:
		r := data.Reader()
		defer r.Close()
		return decodeLight(r, r.Remaining(), v.(proto.Message))
	}
	return c.CodecV2.Unmarshal(data, v)
}

// byteSource is what the light decoding reads from: gRPC's buffers
// (mem.Reader) or a stream's body (bufio.Reader, h2stream.go).
type byteSource interface {
	io.Reader
	io.ByteReader
	Discard(n int) (int, error)
}

// counted reads from a byteSource and counts what it has read, which
// tells a message's end in a source that runs on past it.
type counted struct {
	src  byteSource
	read int
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.src.Read(p)
	c.read += n
	return n, err
}

func (c *counted) ReadByte() (byte, error) {
	b, err := c.src.ReadByte()
	if err == nil {
		c.read++
	}
	return b, err
}

func (c *counted) Discard(n int) (int, error) {
	n, err := c.src.Discard(n)
	c.read += n
	return n, err
}

// decodeLight reads the n bytes of an encoded message from r into v: a
// discovery response without its resources' Anys (see LightCodec), any
// other message whole.
func decodeLight(src byteSource, n int, v proto.Message) error {
	r := &counted{src: src}
	var keep []byte
	var err error
	switch v.(type) {
	case *discoveryv3.DiscoveryResponse:
		keep, err = fieldsWithout(r, n, sotwResources, func(r *counted, n int, out []byte) ([]byte, error) {
			return out, discard(r, n)
		})
	case *discoveryv3.DeltaDiscoveryResponse:
		keep, err = fieldsWithout(r, n, deltaResources, func(r *counted, n int, out []byte) ([]byte, error) {
			sub, err := fieldsWithout(r, n, resourceAny, func(r *counted, n int, out []byte) ([]byte, error) {
				return out, discard(r, n)
			})
			if err != nil {
				return nil, fmt.Errorf("a delta resource: %w", err)
			}
			out = protowire.AppendTag(out, deltaResources, protowire.BytesType)
			return protowire.AppendBytes(out, sub), nil
		})
	default:
		keep, err = readAppend(r, n, nil)
	}
	if err != nil {
		return fmt.Errorf("decoding a %T: %w", v, err)
	}
	return proto.Unmarshal(keep, v)
}

func discard(r *counted, n int) error {
	if got, err := r.Discard(n); got < n {
		return fmt.Errorf("%d of %d bytes: %w", got, n, orUnexpectedEOF(err))
	}
	return nil
}

func orUnexpectedEOF(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fieldsWithout reads the n bytes of a message's fields from r and returns
// their encoding, each field copied as it is but field special: its
// payload (length-delimited, n bytes) is specialFn's to read, and what
// specialFn appends to the encoding so far stands for the field.
func fieldsWithout(r *counted, n int, special protowire.Number, specialFn func(r *counted, n int, out []byte) ([]byte, error)) ([]byte, error) {
	end := r.read + n
	var out []byte
	for r.read < end {
		tag, err := readVarint(r)
		if err != nil {
			return nil, err
		}
		num, typ := protowire.DecodeTag(tag)
		if num != special || typ != protowire.BytesType {
			out = protowire.AppendVarint(out, tag)
		}
		switch typ {
		case protowire.VarintType:
			x, err := readVarint(r)
			if err != nil {
				return nil, err
			}
			out = protowire.AppendVarint(out, x)
		case protowire.Fixed32Type, protowire.Fixed64Type:
			size := 4
			if typ == protowire.Fixed64Type {
				size = 8
			}
			if out, err = readAppend(r, size, out); err != nil {
				return nil, err
			}
		case protowire.BytesType:
			length, err := readVarint(r)
			if err != nil {
				return nil, err
			}
			if length > uint64(end-r.read) {
				return nil, fmt.Errorf("field %d: %d bytes, past the message's end", num, length)
			}
			if num == special {
				if out, err = specialFn(r, int(length), out); err != nil {
					return nil, fmt.Errorf("field %d: %w", num, err)
				}
				continue
			}
			out = protowire.AppendVarint(out, length)
			if out, err = readAppend(r, int(length), out); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("field %d: wire type %d not expected", num, typ)
		}
	}
	if r.read != end {
		return nil, errors.New("a field runs past the message's end")
	}
	return out, nil
}

func readVarint(r *counted) (uint64, error) {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("a varint: %w", err)
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("a varint longer than 64 bits")
}

func readAppend(r *counted, n int, out []byte) ([]byte, error) {
	at := len(out)
	out = append(out, make([]byte, n)...)
	if _, err := io.ReadFull(r, out[at:]); err != nil {
		return nil, fmt.Errorf("%d bytes: %w", n, err)
	}
	return out, nil
}
