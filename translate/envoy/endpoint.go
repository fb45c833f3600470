package envoy

import (
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// loadAssignment renders a backend's endpoints, shared by every cluster
// that sends to it.
func loadAssignment(be *ir.Backend) LoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: be.Name}
	if len(be.Endpoints) == 0 {
		return cla
	}
	locality := &endpointv3.LocalityLbEndpoints{}
	for _, ep := range be.Endpoints {
		locality.LbEndpoints = append(locality.LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(ep.Address, uint32(ep.Port)),
			}},
		})
	}
	cla.Endpoints = []*endpointv3.LocalityLbEndpoints{locality}
	return encodeLoadAssignment(cla)
}
