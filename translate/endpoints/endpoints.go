// Package endpoints turns a Service port's EndpointSlices into the IR's
// endpoints. It is shared by the front-ends (Ingress, Gateway API): which
// addresses serve a Service port is a Kubernetes rule, not one of either
// front-end's.
package endpoints

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Ready collects the ready addresses serving a Service port from
// all of the Service's EndpointSlices. EndpointSlice ports carry the Service
// port's name, with the target port already resolved to a number.
func Ready(epSlices []*kube.EndpointSlice, svcPort kube.ServicePort) []ir.Endpoint {
	n := 0
	for _, slice := range epSlices {
		n += len(slice.Ready)
	}
	out := make([]ir.Endpoint, 0, n)
	for _, slice := range epSlices {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 && slice.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		var port int32
		found := false
		if slice.AnyPort { // an ExternalName's addresses serve every port
			port, found = svcPort.Port, true
		}
		for _, p := range slice.Ports {
			if p.Name != svcPort.Name || p.Port == 0 {
				continue
			}
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			port, found = p.Port, true
			break
		}
		if !found || port < 1 || port > 65535 {
			continue
		}
		// Only ready endpoints are kept (see kube.EndpointSlice): terminating
		// ones report ready=false and are drained by leaving them out.
		for _, addr := range slice.Ready {
			ip, err := netip.ParseAddr(addr)
			if err != nil || ip.Zone() != "" {
				continue
			}
			out = append(out, ir.Endpoint{Address: canonical(addr, ip), Port: port})
		}
	}
	// Sorted, then without duplicates (an address in two slices, or twice
	// in one): sized once, and no set to build for each backend.
	slices.SortFunc(out, func(a, b ir.Endpoint) int {
		if c := strings.Compare(a.Address, b.Address); c != 0 {
			return c
		}
		return cmp.Compare(a.Port, b.Port)
	})
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// canonical returns ip's text, which is addr itself when addr is already in
// canonical form (as the API server stores it): a million endpoints at
// 10,000 Ingresses need not each have a copy of the string the informer
// holds.
func canonical(addr string, ip netip.Addr) string {
	var buf [64]byte
	if string(ip.AppendTo(buf[:0])) == addr {
		return addr
	}
	return ip.String()
}
