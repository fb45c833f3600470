package envoy

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	ondemandv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/on_demand/v3"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// On-demand clusters (ODCDS, issue 18). An Envoy holds every cluster it is
// sent, and each costs it memory, with its endpoints' hosts, whether or
// not a request ever reaches it: at 10,000 Ingresses, most of every Envoy
// of a DaemonSet (docs/benchmarks.md, "Where Envoy's memory goes" and
// "At 10,000 Ingresses", issue 18). With Options.OnDemandClusters,
// every HTTP connection manager starts with Envoy's on_demand filter, which
// discovers a route's cluster over ADS when the cluster is not there: the
// request waits (OnDemandTimeout at most) while Envoy asks the control
// plane for that one cluster by name, then its load assignment, and goes
// on once the cluster has warmed. The xDS layer, told which clusters may
// come that way (Resources.OnDemand), leaves them out of what a delta
// client's wildcard subscription gets, so that an Envoy holds the clusters
// its requests have used.
//
// Only a route's own clusters (the one it forwards to, or the one its
// weighted split picked, which is what the filter asks for) can come on
// demand. Envoy needs the others at hand, so they stay in the wildcard:
// the clusters requests are mirrored to (the router skips a missing
// shadow), aggregate clusters and the clusters they send to (an aggregate
// whose member is missing has no host), TLS passthrough's (TCP, no HTTP
// filter), the authorisation service's and the tracing collector's.
//
// The filter runs first in the chain: when the cluster comes, Envoy
// re-runs the request's filter chain from the start, and the filters
// before the on_demand one would then act twice on one request (a rate
// limit would count it twice).
//
// It is off in the connection manager and on in every route configuration
// (its per-filter configuration, which all of its routes inherit), so that
// it runs only for a request that has a route. A request with none (a
// host or path nothing serves) would otherwise make the filter ask the
// control plane for the host's virtual host over VHDS (with serve --vhds)
// and wait for the answer: a round trip to the control plane for every
// 404, and a subscription in Envoy for every Host a client makes up.

// onDemandFilter is the on_demand filter's name.
const onDemandFilter = "envoy.filters.http.on_demand"

// OnDemandTimeout is how long a request waits for its cluster to come
// before Envoy goes on without it (503, no cluster). Envoy's default is 5
// seconds, longer than the control plane takes to answer by far; a
// cluster's warming waits for its load assignment too.
const OnDemandTimeout = 5 * time.Second

// OnDemand says which clusters an Envoy fetches when a request needs one:
// every cluster but the Eager ones.
type OnDemand struct {
	// Eager are the clusters every Envoy must hold ahead of any request.
	Eager map[string]struct{}
}

// Lazy says whether a cluster comes on demand.
func (o *OnDemand) Lazy(name string) bool {
	if o == nil {
		return false
	}
	_, eager := o.Eager[name]
	return !eager
}

func onDemandListenerConfig() proto.Message { return &ondemandv3.OnDemand{} }

// onDemandRouteConfig is the per-filter configuration of every route
// configuration with Options.OnDemandClusters: it turns the filter on, for
// clusters. Made once: messages handed out are never modified.
func (c *Renderer) onDemandRouteConfig() map[string]*anypb.Any {
	if !c.opts.OnDemandClusters {
		return nil
	}
	if c.onDemandRoutes == nil {
		cfg, err := anypb.New(&ondemandv3.PerRouteConfig{Odcds: &ondemandv3.OnDemandCds{
			Source:  adsSource(),
			Timeout: durationpb.New(OnDemandTimeout),
		}})
		if err != nil {
			panic(fmt.Sprintf("packing the on_demand filter's configuration: %v", err)) // a fixed message
		}
		c.onDemandRoutes = map[string]*anypb.Any{onDemandFilter: cfg}
	}
	return c.onDemandRoutes
}

// onDemandUse is the filter bit every connection manager gets with
// Options.OnDemandClusters.
func (c *Renderer) onDemandUse() filterSet {
	if c.opts.OnDemandClusters {
		return useOnDemand
	}
	return 0
}

// onDemand lists the clusters that must not come on demand; nil without
// Options.OnDemandClusters. The walk is of every route, for its mirrors:
// a pointer test per route, small beside rendering.
func (c *Renderer) onDemand(m *ir.IR) *OnDemand {
	if !c.opts.OnDemandClusters {
		return nil
	}
	eager := map[string]struct{}{}
	for _, cl := range m.Clusters {
		if cl.Aggregate == nil {
			continue
		}
		eager[cl.Name] = struct{}{}
		for _, member := range cl.Aggregate {
			eager[member] = struct{}{}
		}
	}
	vhosts := m.VirtualHosts
	for _, o := range m.OwnListeners {
		vhosts = append(slices.Clip(vhosts), o.VirtualHosts...)
	}
	for _, vh := range vhosts {
		if vh.Passthrough != nil {
			for _, c := range vh.Passthrough.Clusters() {
				eager[c] = struct{}{}
			}
		}
		for _, r := range vh.Routes {
			if r.Policy == nil {
				continue
			}
			for _, mi := range r.Policy.Mirrors {
				eager[mi.Cluster] = struct{}{}
			}
		}
	}
	// Named whether or not a listener asks for them: the authorisation
	// service's (authz.go) and the tracing collector's (tracing.go), which
	// Envoy's filters and tracer reach without a route.
	eager[AuthzCluster] = struct{}{}
	eager[OTLPCluster] = struct{}{}
	return &OnDemand{Eager: eager}
}
