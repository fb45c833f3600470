package envoy

import (
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
)

// Resources are the Envoy resources for one IR: listeners in the IR's order,
// each listener's route configurations after it, the rest sorted by name.
// Neither the lists nor the messages are modified once handed out, and a
// Renderer hands out the same list, or the same message, again for what did
// not change: consumers may tell what changed by identity.
type Resources struct {
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
	Clusters  []Cluster
	Endpoints []LoadAssignment
	Secrets   []*tlsv3.Secret
	// VirtualHosts are the virtual hosts sent over VHDS (vhds.go), each
	// named for its route configuration; none unless the Renderer's
	// Options.VirtualHostDiscovery or DeltaVirtualHostDiscovery is set.
	VirtualHosts []*routev3.VirtualHost
	// DeltaRoutes are route configurations that an Envoy on delta xDS
	// gets in place of those of Routes with the same names: the same
	// settings, their virtual hosts over VHDS (vhds_delta.go). None
	// unless the Renderer's Options.DeltaVirtualHostDiscovery is set.
	DeltaRoutes []*routev3.RouteConfiguration
	// ScopedRoutes are the plain-HTTP listener's route scopes, sent over
	// SRDS (scopes.go), each naming its route configuration; none unless
	// the Renderer's Options.RouteScopes is set.
	ScopedRoutes []*routev3.ScopedRouteConfiguration
	// OnDemand says which clusters an Envoy on delta xDS fetches only
	// when a request needs one (ondemand.go); nil unless the Renderer's
	// Options.OnDemandClusters is set: every cluster is sent.
	OnDemand *OnDemand
}

// Cluster is a cluster resource: a *clusterv3.Cluster, or an *EDSCluster.
type Cluster interface {
	proto.Message
	GetName() string
}

// LoadAssignment is a load assignment resource: an *EncodedLoadAssignment,
// or an *endpointv3.ClusterLoadAssignment (one without endpoints, or one
// that fails validation, left whole for the xDS layer to refuse with the
// detail).
type LoadAssignment interface {
	proto.Message
	GetClusterName() string
}

// Names of the route configurations.
const (
	// HTTPSRoutePrefix + host names the route configuration of one TLS host:
	// each SNI filter chain only routes its own host, so a certificate for
	// one host never fronts another host's routes.
	HTTPSRoutePrefix = "https/"
)
