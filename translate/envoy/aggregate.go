package envoy

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	aggregatev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/aggregate/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// An aggregate cluster (ir.Cluster.Aggregate) is Envoy's aggregate cluster
// extension: its clusters' hosts become its priority levels, in order, so
// a request goes to the first cluster with a healthy host. Only ready
// endpoints are in a load assignment, with no health checks or outlier
// detection, so a cluster is either wholly healthy or empty: the rule's
// Service takes every request while it has a ready endpoint, and the
// default backend every request while it has none (no partial spill-over
// by Envoy's overprovisioning factor). Each request is sent as its host's
// cluster says (protocol, TLS, load balancer): Envoy resolves those from
// the cluster the host belongs to, not from the aggregate. What is
// per route (timeouts, retries, headers) applies to both.

// aggregateClusterType is the extension's name.
const aggregateClusterType = "envoy.clusters.aggregate"

// aggregateCluster renders an aggregate cluster.
func aggregateCluster(c *ir.Cluster) (*clusterv3.Cluster, error) {
	cfg, err := anypb.New(&aggregatev3.ClusterConfig{Clusters: c.Aggregate})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: packing the aggregate: %w", c.Name, err)
	}
	return &clusterv3.Cluster{
		Name: c.Name,
		ClusterDiscoveryType: &clusterv3.Cluster_ClusterType{ClusterType: &clusterv3.Cluster_CustomClusterType{
			Name: aggregateClusterType, TypedConfig: cfg,
		}},
		ConnectTimeout: durationpb.New(defaultConnectTimeout),
		// The aggregate picks the cluster; that cluster's own load
		// balancer picks the host.
		LbPolicy: clusterv3.Cluster_CLUSTER_PROVIDED,
	}, nil
}
