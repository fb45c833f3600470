package ingress

import (
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/kube"
)

// externalNameBackend serves an ExternalName Service, which only an operator
// may allow: it lets any namespace send traffic to any DNS name, a known hole
// in peers. A local target is refused even then, so that an Ingress can never
// reach the proxy's own admin interface, the node, or the cloud's metadata
// service:
//
//   - by name: localhost, *.localhost, loopback, unspecified and
//     link-local addresses written as the name;
//   - by address, when the control plane resolves names (serve does:
//     kube.ResolvingSource): the Service then carries the resolver's
//     verdict, and its checked addresses are its endpoints. Envoy is given
//     those addresses (EDS), never the name, so it does no DNS of its own
//     that could be rebound to a local address after the check; a refused
//     or unresolved name answers 503.
//
// Without a resolver (a State built by hand, Options.ResolveNames off)
// Envoy resolves the name itself (a DNS cluster), checked by name only.
func (f *fragmentBuilder) externalNameBackend(svc *kube.Service, port kube.ServicePort, name string, where location) (*backendRef, bool) {
	svcName := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if !f.opts.EnableExternalName {
		f.problem("ExternalNameRefused", "%s: service %s is of type ExternalName, which is disabled (--enable-external-name): answering 503", where, svcName)
		return nil, false
	}
	target := strings.ToLower(strings.TrimSuffix(svc.ExternalName, "."))
	if isLocalName(target) {
		f.problem("ExternalNameRefused", "%s: service %s points at %q, a local address: answering 503", where, svcName, svc.ExternalName)
		return nil, false
	}
	if _, err := netip.ParseAddr(target); err != nil && len(validation.IsDNS1123Subdomain(target)) > 0 {
		f.problem("ExternalNameRefused", "%s: service %s has an invalid externalName %q: answering 503", where, svcName, svc.ExternalName)
		return nil, false
	}
	if port.Port < 1 || port.Port > 65535 {
		f.problem("ServicePortNotFound", "%s: service %s port %d is not a valid port: answering 503", where, svcName, port.Port)
		return nil, false
	}
	res := svc.Resolved
	if res == nil && f.opts.ResolveNames {
		// The resolver has not seen it yet: never Envoy's DNS meanwhile.
		res = &kube.Resolution{Err: "not resolved yet"}
	}
	if res != nil {
		switch {
		case res.Refused != "":
			f.problem("ExternalNameRefused", "%s: service %s points at %q, which %s: answering 503 (serve --external-name-allow-local would allow it)", where, svcName, svc.ExternalName, res.Refused)
			return nil, false
		case res.Err != "":
			f.problem("ExternalNameUnresolved", "%s: service %s points at %q, which the control plane could not resolve (%s): answering 503", where, svcName, svc.ExternalName, res.Err)
			return nil, false
		}
		return &backendRef{name: name, service: svcName, port: port, via: target}, true
	}
	return &backendRef{name: name, service: svcName, port: port, externalName: target}, true
}

// external reports whether the backend is an ExternalName Service's,
// which always has an address to send to (no fallback, no service-upstream).
func (r *backendRef) external() bool { return r.externalName != "" || r.via != "" }

// isLocalName reports whether a name or address refers to this machine.
func isLocalName(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && (ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast())
}
