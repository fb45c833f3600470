package adsclient

import (
	"slices"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// askClusters subscribes, by name and besides the wildcard, to every
// cluster the routes send to that was not asked for yet (on-demand
// clusters: the control plane's wildcard leaves them out). Names are never
// unsubscribed: a cluster gone is removed by the server.
func (c *Client) askClusters(s *Snapshot) error {
	if !c.onDemand {
		return nil
	}
	if c.askedClusters == nil {
		c.askedClusters = map[string]bool{}
	}
	var added []string
	for _, rc := range s.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				action := r.GetRoute()
				names := []string{action.GetCluster()}
				for _, wc := range action.GetWeightedClusters().GetClusters() {
					names = append(names, wc.GetName())
				}
				for _, name := range names {
					if name != "" && !c.askedClusters[name] {
						c.askedClusters[name] = true
						added = append(added, name)
					}
				}
			}
		}
	}
	if len(added) == 0 {
		return nil
	}
	slices.Sort(added)
	return c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesSubscribe: added})
}
