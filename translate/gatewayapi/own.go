package gatewayapi

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Own addresses (Options.OwnAddresses): each Gateway's listener port is
// an Envoy listener of its own (ir.OwnListener), serving that Gateway's
// hosts alone, on an Envoy port chosen from a range; kube puts a Service
// per Gateway in front of them, each listener port sent to its Envoy
// port, and the Gateway's addresses are that Service's.

// The range own listeners' Envoy ports are chosen from by default: clear
// of the ports Envoy's shared listeners, its admin and the services beside
// it use, and of Linux's ephemeral ports.
const (
	DefaultOwnPortFirst = 20000
	DefaultOwnPortCount = 10000
)

// ownSetOf is what a set of own listeners belongs to: a Gateway's port.
type ownSetOf struct {
	gateway *gwapiv1.Gateway
	port    uint32
}

// ownSet names the set of a Gateway's listeners on a port.
func ownSet(gw *gwapiv1.Gateway, port uint32) string {
	return fmt.Sprintf("%s/%s:%d", gw.Namespace, gw.Name, port)
}

// namesOf is the hosts a set serves: the shared listeners' (set ""), or
// an own listener's.
func (b *build) namesOf(set string) map[string]bool {
	if set == "" {
		return b.names
	}
	names := b.setNames[set]
	if names == nil {
		names = map[string]bool{}
		b.setNames[set] = names
	}
	return names
}

// protocolClash says whether a listener's port is already another's of a
// protocol it cannot share an Envoy listener with: plain HTTP beside
// HTTPS or TLS (which share one, choosing by SNI). family holds, per set,
// the first listener programmed there. On the shared ports each protocol
// has its own port, so there is no clash.
func (b *build) protocolClash(l *listener, family map[string]*listener) (string, bool) {
	if l.set == "" {
		return "", false
	}
	first := family[l.set]
	if first == nil {
		family[l.set] = l
		return "", false
	}
	if (first.protocol == ir.HTTP) != (l.protocol == ir.HTTP) {
		return first.name, true
	}
	return "", false
}

// allocateOwnPorts gives each own set its Envoy port: a hash of its name
// in the range, the next free one on a collision, the Gateways taken
// oldest first (then by namespace and name), so that a new Gateway never
// moves an older one's ports. Every listener port of a Gateway has one,
// programmed or not, so that its Service's ports do not come and go with
// a listener's conditions.
func (b *build) allocateOwnPorts() {
	if !b.opts.OwnAddresses {
		return
	}
	first, count := cmp.Or(b.opts.OwnPortFirst, DefaultOwnPortFirst), cmp.Or(b.opts.OwnPortCount, DefaultOwnPortCount)
	taken := map[uint32]bool{b.opts.HTTPPort: true, b.opts.HTTPSPort: true}
	gateways := slices.Collect(maps.Values(b.gatewayOf))
	slices.SortFunc(gateways, func(a, c *gwapiv1.Gateway) int {
		return cmp.Or(a.CreationTimestamp.Compare(c.CreationTimestamp.Time), cmp.Compare(a.Namespace, c.Namespace), cmp.Compare(a.Name, c.Name))
	})
	for _, gw := range gateways {
		var ports []uint32
		for _, l := range gw.Spec.Listeners {
			if p := uint32(l.Port); !slices.Contains(ports, p) {
				ports = append(ports, p)
			}
		}
		slices.Sort(ports)
		for _, port := range ports {
			set := ownSet(gw, port)
			h := fnv.New32a()
			h.Write([]byte(set))
			at := h.Sum32() % count
			for i := uint32(0); i < count; i++ {
				p := first + (at+i)%count
				if !taken[p] {
					taken[p] = true
					b.ownPorts[set] = p
					break
				}
			}
			b.ownGateway[set] = ownSetOf{gateway: gw, port: port}
		}
	}
}

// ownListener is a set's own listener with its hosts: plain HTTP, served
// with or without routes (404), or TLS, served while some host has a
// certificate or is passed through; nil otherwise, or when the range had
// no port left for it.
func (b *build) ownListener(set string, vhosts []*ir.VirtualHost) *ir.OwnListener {
	port, of := b.ownPorts[set], b.ownGateway[set]
	if port == 0 || of.gateway == nil {
		return nil
	}
	protocol := ir.Protocol("")
	for _, g := range b.groups {
		if g.set != set {
			continue
		}
		if g.protocol == ir.HTTP {
			protocol = ir.HTTP
		} else {
			protocol = ir.HTTPS
		}
		break
	}
	switch protocol {
	case "":
		return nil
	case ir.HTTPS:
		if !slices.ContainsFunc(vhosts, func(vh *ir.VirtualHost) bool { return vh.Certificate != "" || vh.Passthrough != nil }) {
			return nil
		}
	}
	name := strings.Join([]string{"gateway", of.gateway.Namespace, of.gateway.Name, fmt.Sprint(of.port)}, "_")
	return &ir.OwnListener{
		Listener: &ir.Listener{Name: name, Address: cmp.Or(b.opts.ListenAddress, "0.0.0.0"), Port: port, Protocol: protocol,
			// Gateway API's Host reaches the backend as sent; no
			// nginx meaning is served here.
			KeepHostPort: true, PublicPort: of.port},
		VirtualHosts: append([]*ir.VirtualHost{}, vhosts...),
	}
}

// OwnPorts are, per Gateway (namespace/name), each listener port's Envoy
// port: what kube's Service for the Gateway sends each port to. A Gateway
// not accepted has none, so that no Service (a cloud's load balancer) is
// made for it; its ports stay allocated, so that accepting it later
// moves no other Gateway's.
func (b *build) ownPortsByGateway() map[string]map[uint32]uint32 {
	if len(b.ownPorts) == 0 {
		return nil
	}
	out := map[string]map[uint32]uint32{}
	for set, port := range b.ownPorts {
		of := b.ownGateway[set]
		if b.refusedGateways[types.NamespacedName{Namespace: of.gateway.Namespace, Name: of.gateway.Name}].reason != "" {
			continue
		}
		key := of.gateway.Namespace + "/" + of.gateway.Name
		if out[key] == nil {
			out[key] = map[uint32]uint32{}
		}
		out[key][of.port] = port
	}
	return out
}
