package xds

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
)

// The translator keeps some resources in a compact form rather than as the
// Envoy message (most of a large control plane's memory is load
// assignments and clusters). The snapshotter recognises those forms by
// what they can do, through the interfaces below, and publishes them
// without building, validating or encoding the message again. Each
// interface says what its producer promises; the snapshotter checks none
// of it, so a producer that breaks a promise sends Envoy wrong or invalid
// configuration.

// encodedResource is a resource that carries its own encoding, published
// as it is: every stream and every response shares those very bytes.
//
// Its producer promises that:
//   - Encoding is the deterministic wire encoding
//     (proto.MarshalOptions{Deterministic: true}) of one message of the
//     xDS type of the list the resource is published in: the bytes are
//     sent as an Any of that type, and their hash is the resource's
//     version, so the same content must always give the same bytes, or
//     Envoy is sent an unchanged resource again as a new version.
//   - That message passed Envoy's field validation (ValidateAll) before it
//     was encoded: it is not validated again, which would mean decoding
//     it, the very cost the encoding saves.
//   - The resource is immutable: neither it nor the bytes change once
//     handed over. The snapshotter remembers a resource's results by its
//     identity, and the bytes outlive the publish in every stream still
//     sending them; new content is a new resource.
//   - Its name (GetName, or GetClusterName for a load assignment) is the
//     name in the encoding.
type encodedResource interface {
	types.Resource
	Encoding() []byte
}

// clusterStandIn is a resource that stands for a Cluster it makes on
// demand: the snapshotter makes it once per resource, validates and
// encodes that Cluster, and keeps only the encoding.
//
// Its producer promises that:
//   - Cluster returns, on every call, a Cluster with the same content,
//     which the caller only reads (it may share parts with other
//     clusters).
//   - GetName is that Cluster's name.
//   - That Cluster is an EDS cluster whose endpoints are the load
//     assignment named as the cluster (eds_cluster_config.service_name
//     unset): the consistency check counts it as naming that load
//     assignment without making the Cluster, which for 100,000 clusters
//     would be 100,000 Cluster messages on every change of names.
//   - The resource is immutable: results are remembered by its identity.
type clusterStandIn interface {
	types.Resource
	Cluster() *clusterv3.Cluster
	GetName() string
}
