package load

import (
	"time"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
)

// What the measurements look for in an ADS client's snapshot. Nothing here
// depends on how a control plane names its resources: hosts are found in
// any route configuration's virtual hosts, and a load assignment by an
// endpoint address only it holds. So the same code measures a peer.

// domains returns every domain of every virtual host the client holds.
func domains(s *adsclient.Snapshot) map[string]struct{} {
	out := map[string]struct{}{}
	for _, rc := range s.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, d := range vh.GetDomains() {
				out[d] = struct{}{}
			}
		}
	}
	return out
}

// hasAll reports whether every host is among the domains.
func hasAll(domains map[string]struct{}, hosts []string) bool {
	for _, h := range hosts {
		if _, ok := domains[h]; !ok {
			return false
		}
	}
	return true
}

// hostWatch answers "does the snapshot route every one of these hosts?"
// cheaply when called on every snapshot: with 20,000 virtual hosts the
// domain set is rebuilt only when a route response has arrived since.
type hostWatch struct {
	hosts []string
	seen  time.Time // Received[RDS] of the snapshot last looked at
	count int       // len(Routes) of the same
	ok    bool
}

func (w *hostWatch) ready(s *adsclient.Snapshot) bool {
	received := s.Received[resource.RouteType]
	if !w.ok && (!received.Equal(w.seen) || len(s.Routes) != w.count) {
		w.seen, w.count = received, len(s.Routes)
		w.ok = hasAll(domains(s), w.hosts)
	}
	return w.ok
}

// findLoadAssignment returns the name of the load assignment holding
// address, or "".
func findLoadAssignment(s *adsclient.Snapshot, address string) string {
	for name, cla := range s.Endpoints {
		if holds(cla, address) {
			return name
		}
	}
	return ""
}

// holdsAddress reports whether load assignment name holds address.
func holdsAddress(s *adsclient.Snapshot, name, address string) bool {
	return holds(s.Endpoints[name], address)
}

func holds(cla *endpointv3.ClusterLoadAssignment, address string) bool {
	for _, locality := range cla.GetEndpoints() {
		for _, ep := range locality.GetLbEndpoints() {
			if ep.GetEndpoint().GetAddress().GetSocketAddress().GetAddress() == address {
				return true
			}
		}
	}
	return false
}
