package gatewayapi

import (
	"slices"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// made is what one build made that the next may hand out again: the IR's
// contract (the same value for what did not change) lets the renderer
// reuse its work by identity, here a backend's load assignment and a
// cluster's message. Routes and hosts are made anew each build (a
// per-Route memo is left: docs/gateway-api.md).
type made struct {
	backends map[string]madeBackend
	clusters map[string]*ir.Cluster
}

// madeBackend is a backend with the EndpointSlices it was read from.
type madeBackend struct {
	be     *ir.Backend
	slices []*kube.EndpointSlice
}

func newMade() *made {
	return &made{backends: map[string]madeBackend{}, clusters: map[string]*ir.Cluster{}}
}

// backend is the backend of the name made last time, when the Service
// port and its EndpointSlices are the same (the State's objects are never
// modified: the same pointers are the same objects); nil otherwise.
func (m *made) backend(id string, port kube.ServicePort, now []*kube.EndpointSlice) *ir.Backend {
	if m == nil {
		return nil
	}
	p, ok := m.backends[id]
	if !ok || p.be.Port != port.Port || p.be.PortName != port.Name || !slices.Equal(p.slices, now) {
		return nil
	}
	return p.be
}

// cluster is the cluster of the name made last time; nil when none.
func (m *made) cluster(name string) *ir.Cluster {
	if m == nil {
		return nil
	}
	return m.clusters[name]
}
