package adsclient

import (
	"fmt"
	"slices"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// explicitWildcard subscribes a delta stream to every resource of a type.
// An empty first request would mean the same (legacy wildcard), but then a
// later subscription to one name would silently keep the wildcard.
const explicitWildcard = "*"

// subscribeDelta sends the first request of a wildcard type (listeners,
// clusters) on the delta stream.
func (c *Client) subscribeDelta(typeURL string, _ error) error {
	sub := c.subs[typeURL]
	sub.sent = true
	return c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{
		Node:                   c.node,
		TypeUrl:                typeURL,
		ResourceNamesSubscribe: []string{explicitWildcard},
	})
}

func (c *Client) sendDelta(req *discoveryv3.DeltaDiscoveryRequest) error {
	if err := c.deltaStream.Send(req); err != nil {
		return fmt.Errorf("sending %s delta request: %w", req.TypeUrl, err)
	}
	return nil
}

// handleDelta accepts or rejects one delta response, which carries only the
// resources that changed and the names of those removed, then follows the
// names that listeners and clusters reference.
func (c *Client) handleDelta(resp *discoveryv3.DeltaDiscoveryResponse, received time.Time) error {
	sub, ok := c.subs[resp.TypeUrl]
	if !ok {
		return fmt.Errorf("delta response of a type never requested: %s", resp.TypeUrl)
	}
	decoded, err := decodeDelta(resp)
	if err != nil {
		c.update(func(s *Snapshot) {
			s.Responses++
			s.Rejected = append(s.Rejected, fmt.Sprintf("%s version %s: %v", resp.TypeUrl, resp.SystemVersionInfo, err))
		})
		if c.log != nil {
			c.log.Warn("rejecting delta ADS response", "type", resp.TypeUrl, "version", resp.SystemVersionInfo, "err", err)
		}
		return c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{
			TypeUrl:       resp.TypeUrl,
			ResponseNonce: resp.Nonce,
			ErrorDetail:   &statuspb.Status{Code: int32(codes.InvalidArgument), Message: err.Error()},
		})
	}
	sub.version = resp.SystemVersionInfo
	var next *Snapshot
	c.update(func(s *Snapshot) {
		s.Responses++
		s.Versions[resp.TypeUrl] = resp.SystemVersionInfo
		s.Received[resp.TypeUrl] = received
		s.apply(resp.TypeUrl, decoded, resp.RemovedResources, sub, received)
		next = s
	})
	if c.log != nil {
		c.log.Debug("delta ADS response", "type", resp.TypeUrl, "version", resp.SystemVersionInfo,
			"resources", len(decoded), "removed", len(resp.RemovedResources))
	}
	ack := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}
	if err := c.sendDelta(ack); err != nil {
		return err
	}
	switch resp.TypeUrl {
	case resource.ListenerType:
		if err := c.followScopes(next, c.subscribeDelta); err != nil { // scopes.go
			return err
		}
		return c.followDelta(resource.RouteType, routeNames(next))
	case resource.ScopedRouteType:
		return c.followDelta(resource.RouteType, routeNames(next))
	case resource.ClusterType:
		return c.followDelta(resource.EndpointType, endpointNames(next.Clusters))
	case resource.RouteType:
		if err := c.followDelta(resource.VirtualHostType, discoveredNames(next)); err != nil { // vhds.go
			return err
		}
		return c.askClusters(next) // ondemand.go
	case resource.VirtualHostType:
		return c.askClusters(next) // ondemand.go
	}
	return nil
}

// followDelta changes the subscription of typeURL to exactly names, sending
// only the difference, and drops what is no longer named.
func (c *Client) followDelta(typeURL string, names []string) error {
	sub := c.subs[typeURL]
	if slices.Equal(sub.names, names) {
		return nil
	}
	added, removed := diffSorted(sub.names, names)
	sub.names = names
	c.update(func(s *Snapshot) { s.prune(typeURL, names) })
	// An empty first request would subscribe to everything (legacy
	// wildcard): say nothing until there is a name to ask for.
	if !sub.sent && len(added) == 0 {
		return nil
	}
	sub.sent = true
	req := &discoveryv3.DeltaDiscoveryRequest{
		TypeUrl:                  typeURL,
		ResourceNamesSubscribe:   added,
		ResourceNamesUnsubscribe: removed,
	}
	return c.sendDelta(req)
}

// diffSorted returns the names in next but not in prev, and those in prev
// but not in next. Both inputs are sorted.
func diffSorted(prev, next []string) (added, removed []string) {
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		switch {
		case j == len(next) || (i < len(prev) && prev[i] < next[j]):
			removed = append(removed, prev[i])
			i++
		case i == len(prev) || next[j] < prev[i]:
			added = append(added, next[j])
			j++
		default:
			i++
			j++
		}
	}
	return added, removed
}

// decodeDelta unpacks and validates a delta response's resources. A
// resource whose name differs from the name of its content is an error:
// Envoy keys its state by the former.
func decodeDelta(resp *discoveryv3.DeltaDiscoveryResponse) (map[string]proto.Message, error) {
	anys := make([]*anypb.Any, 0, len(resp.Resources))
	for _, r := range resp.Resources {
		if r.GetResource() == nil {
			return nil, fmt.Errorf("resource %q has no content", r.GetName())
		}
		anys = append(anys, r.GetResource())
	}
	decoded, err := decode(resp.TypeUrl, anys)
	if err != nil {
		return nil, err
	}
	for _, r := range resp.Resources {
		if _, ok := decoded[r.GetName()]; !ok {
			return nil, fmt.Errorf("resource named %q in the response holds another name", r.GetName())
		}
	}
	return decoded, nil
}

// apply installs a delta response: the resources it carries replace or add
// to those held, and those it names as removed go. For routes and
// endpoints, names not subscribed are ignored.
func (s *Snapshot) apply(typeURL string, decoded map[string]proto.Message, removed []string, sub *subscription, received time.Time) {
	keep := func(name string) bool {
		_, found := slices.BinarySearch(sub.names, name)
		return sub.wildcard || found
	}
	switch typeURL {
	case resource.ListenerType:
		s.Listeners = patch(s.Listeners, typed[*listenerv3.Listener](decoded, keep), removed)
	case resource.ClusterType:
		s.Clusters = patch(s.Clusters, typed[*clusterv3.Cluster](decoded, keep), removed)
	case resource.RouteType:
		s.applyRoutes(typed[*routev3.RouteConfiguration](decoded, keep), removed) // vhds.go
	case resource.VirtualHostType:
		inNamespaces := func(name string) bool { return inNamespace(sub.names, name) }
		s.applyVirtualHosts(typed[*routev3.VirtualHost](decoded, inNamespaces), removed, received)
	case resource.EndpointType:
		s.Endpoints = patch(s.Endpoints, typed[*endpointv3.ClusterLoadAssignment](decoded, keep), removed)
	case resource.ScopedRouteType: // scopes.go
		s.Scopes = patch(s.Scopes, typed[*routev3.ScopedRouteConfiguration](decoded, keep), removed)
	}
}

// patch returns a copy of old with updates applied and removed deleted.
func patch[V any](old, updates map[string]V, removed []string) map[string]V {
	out := merge(old, updates)
	for _, name := range removed {
		delete(out, name)
	}
	return out
}
