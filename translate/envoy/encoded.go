package envoy

import (
	"fmt"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The memory-saving forms. At 10,000 Ingresses a control plane holds
// 100,000 clusters, 100,000 routes and a million endpoints; as Go messages
// they would be most of its heap. Each form below is a proto.Message whose
// reflection view is the message it stands for, so it encodes, compares
// and prints as that message; the xDS layer reaches the cheaper form
// through small interfaces of its own (a deterministic encoding, or the
// message to make), never through these types' names.

// clusterParts are the messages every default EDS cluster holds alike, made
// once per Renderer and shared (messages handed out are never modified).
type clusterParts struct {
	edsType *clusterv3.Cluster_Type
	// eds leaves service_name unset: Envoy then asks EDS for the load
	// assignment named as the cluster is, and the config is the same for
	// every cluster.
	eds            *clusterv3.Cluster_EdsClusterConfig
	connectTimeout *durationpb.Duration
	// pool is the connection pool's common options every backend cluster
	// takes (ir.Upstream), and poolOptions a default cluster's protocol
	// options with them; nil: Envoy's (upstream_pool.go).
	pool        *corev3.HttpProtocolOptions
	poolOptions map[string]*anypb.Any
}

// defaultConnectTimeout bounds connecting to an endpoint unless a cluster
// policy says otherwise.
const defaultConnectTimeout = 2 * time.Second

func newClusterParts() *clusterParts {
	return &clusterParts{
		edsType:        &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		eds:            &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		connectTimeout: durationpb.New(defaultConnectTimeout),
	}
}

// EDSCluster is a default EDS cluster kept as its name: every such cluster
// is the same but for its name, and a clusterv3.Cluster is a struct ten
// times its size. Cluster makes the message itself, for consumers that
// validate it and keep only the encoding (the xDS layer).
type EDSCluster struct {
	name  string
	parts *clusterParts
}

// ProtoReflect implements proto.Message with a Cluster made for the call:
// it must only be read.
func (c *EDSCluster) ProtoReflect() protoreflect.Message { return c.Cluster().ProtoReflect() }

// Cluster makes the clusterv3.Cluster c stands for.
func (c *EDSCluster) Cluster() *clusterv3.Cluster { return edsCluster(c.name, c.parts) }

// GetName is the cluster's name.
func (c *EDSCluster) GetName() string { return c.name }

func edsCluster(name string, parts *clusterParts) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: parts.edsType,
		EdsClusterConfig:     parts.eds,
		ConnectTimeout:       parts.connectTimeout,
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
		// Shared, never modified: upstream_pool.go.
		TypedExtensionProtocolOptions: parts.poolOptions,
	}
}

// EncodedLoadAssignment is a valid load assignment kept as its
// deterministic encoding, the one sent: the xDS layer takes it as it is, so
// the endpoints are held once. Its reflection view is the message decoded,
// for displays and tools that read fields.
type EncodedLoadAssignment struct {
	name string
	raw  []byte
}

// encodeLoadAssignment keeps a valid load assignment encoded, and any
// other whole.
func encodeLoadAssignment(cla *endpointv3.ClusterLoadAssignment) LoadAssignment {
	if cla.ValidateAll() != nil {
		return cla
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(cla)
	if err != nil {
		return cla
	}
	return &EncodedLoadAssignment{name: cla.ClusterName, raw: raw}
}

// ProtoReflect implements proto.Message with the load assignment decoded
// for the call: it must only be read.
func (l *EncodedLoadAssignment) ProtoReflect() protoreflect.Message {
	cla := &endpointv3.ClusterLoadAssignment{}
	if err := proto.Unmarshal(l.raw, cla); err != nil {
		// It was encoded from a valid message: this is a bug, not input.
		panic(fmt.Sprintf("envoy: decoding the load assignment %q it encoded: %v", l.name, err))
	}
	return cla.ProtoReflect()
}

// GetClusterName is the name of the cluster the load assignment is for.
func (l *EncodedLoadAssignment) GetClusterName() string { return l.name }

// GetName is GetClusterName, for consumers that look resources up by name.
func (l *EncodedLoadAssignment) GetName() string { return l.name }

// Encoding is the load assignment's deterministic encoding, already
// validated; it must not be modified.
func (l *EncodedLoadAssignment) Encoding() []byte { return l.raw }

// keepEncoded returns kept (whole's fields that stay fields) carrying the
// encoding of encoded (the rest of whole) as unknown fields, which protobuf
// encodes as they are, or whole when that cannot be encoded.
func keepEncoded[T proto.Message](whole, encoded, kept T) T {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(encoded)
	if err != nil {
		return whole
	}
	kept.ProtoReflect().SetUnknown(raw)
	return kept
}

// Expand returns m with what is kept encoded as unknown fields (see
// compactVirtualHost), at any depth, decoded into fields, or m itself when
// nothing is. protojson, for one, drops unknown fields.
func Expand[T proto.Message](m T) (T, error) {
	if !holdsUnknown(m.ProtoReflect()) {
		return m, nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return m, fmt.Errorf("encoding %T: %w", m, err)
	}
	out := m.ProtoReflect().New().Interface().(T)
	if err := proto.Unmarshal(raw, out); err != nil {
		return m, fmt.Errorf("decoding %T: %w", m, err)
	}
	return out, nil
}

// holdsUnknown reports whether m or a message within it has unknown fields.
func holdsUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i, l := 0, v.List(); i < l.Len() && !found; i++ {
				found = holdsUnknown(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				found = holdsUnknown(mv.Message())
				return !found
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			found = holdsUnknown(v.Message())
		}
		return !found
	})
	return found
}
