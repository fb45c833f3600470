package gatewayapi

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/certificates"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// listener is a Gateway listener we program.
type listener struct {
	gateway  *gwapiv1.Gateway
	name     string
	port     uint32
	protocol ir.Protocol
	// set is where the listener is served: "" on Envoy's shared ports,
	// beside every other Gateway's listeners, or, with
	// Options.OwnAddresses, its Gateway's port's own Envoy listener
	// (ownSet): listeners are grouped, and a host's listener chosen,
	// within a set.
	set string
	// hostname is the listener's, lower case; "" matches every host.
	hostname string
	// certificate names the IR certificate of an HTTPS listener;
	// clientCert is its client-certificate validation (frontendtls.go).
	certificate string
	clientCert  *ir.ClientCert
	allowed     *gwapiv1.AllowedRoutes
	// programmed says the listener is served; the facts its status is
	// made of are in status (status.go).
	programmed bool
	status     listenerFacts
}

// where names the listener in problems.
func (l *listener) where() string { return fmt.Sprintf("listener %q", l.name) }

// gateways finds our GatewayClasses and their Gateways' listeners.
//
// Envoy runs as a DaemonSet whose ports are fixed (serve --http-port and
// --https-port), and every Envoy serves every Gateway: a listener is
// programmed when its port is the one Envoy listens on for its protocol,
// and refused with a problem otherwise. Listeners of one port share
// Envoy's listener and are told apart by hostname.
func (b *build) gateways() {
	ours := map[string]bool{}
	for _, gc := range b.objs.GatewayClasses {
		if string(gc.Spec.ControllerName) == b.opts.controllerName() {
			ours[gc.Name] = true
		}
	}
	for _, gw := range b.objs.Gateways {
		if !ours[string(gw.Spec.GatewayClassName)] {
			continue
		}
		key := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
		b.byGateway[key] = nil
		b.gatewayOf[key] = gw
		if c := b.backendClientCert(gw); c != nil { // backendcert.go
			b.backendCerts[key] = c
		}
		refused := refusedGateway(gw)
		if refused.reason != "" {
			b.problems.add(kindGateway, gw.Namespace, gw.Name, refused.reason, "%s: not accepted, none of its listeners served", refused.msg)
			b.refusedGateways[key] = refused
		}
		seen := map[string]string{}      // set, protocol and hostname -> listener name
		family := map[string]*listener{} // set -> its first listener programmed (own.go)
		for i := range gw.Spec.Listeners {
			// Every listener is kept, programmed or not: Routes attach
			// to it all the same, and its status counts them.
			l := b.listener(gw, &gw.Spec.Listeners[i])
			b.byGateway[key] = append(b.byGateway[key], l)
			if refused.reason != "" {
				l.programmed = false
			}
			if !l.programmed {
				continue
			}
			if other, clash := b.protocolClash(l, family); clash {
				b.problems.add(kindGateway, gw.Namespace, gw.Name, string(gwapiv1.ListenerReasonProtocolConflict),
					"%s: port %d is already listener %q's, of a protocol that cannot share it: not programmed", l.where(), l.port, other)
				l.programmed = false
				l.status.conflicted = fmt.Sprintf("port %d is already listener %q's, of a protocol that cannot share it", l.port, other)
				l.status.conflictReason = string(gwapiv1.ListenerReasonProtocolConflict)
				continue
			}
			id := l.set + " " + string(l.protocol) + " " + l.hostname
			if other, dup := seen[id]; dup {
				b.problems.add(kindGateway, gw.Namespace, gw.Name, "ListenerConflicted",
					"%s: same protocol, port and hostname as listener %q: not programmed", l.where(), other)
				l.programmed = false
				l.status.conflicted = fmt.Sprintf("same protocol, port and hostname as listener %q", other)
				continue
			}
			seen[id] = l.name
			b.join(l)
		}
	}
	b.allocateOwnPorts() // own.go
}

// gatewayRefusal is why a Gateway is not accepted, none of its
// listeners served: the reason of its Accepted condition and a message.
type gatewayRefusal struct{ reason, msg string }

// refusedGateway says why a Gateway's spec cannot be served, if it
// cannot: an address of a type not served, or parameters, of which no
// kind is served (the specification's InvalidParameters, for a kind it
// does not support).
func refusedGateway(gw *gwapiv1.Gateway) gatewayRefusal {
	if msg := unsupportedAddress(gw); msg != "" {
		return gatewayRefusal{string(gwapiv1.GatewayReasonUnsupportedAddress), msg}
	}
	if inf := gw.Spec.Infrastructure; inf != nil && inf.ParametersRef != nil {
		return gatewayRefusal{string(gwapiv1.GatewayReasonInvalidParameters), fmt.Sprintf(
			"spec.infrastructure.parametersRef: %s %q: no kind of parameters is served", inf.ParametersRef.Kind, inf.ParametersRef.Name)}
	}
	return gatewayRefusal{}
}

// unsupportedAddress says why a Gateway's spec.addresses cannot be
// served, or "": an address is one of the Envoys' addresses, an IP
// address or a hostname; which values they have is the status writer's
// to check (kube.GatewayStatusWriter: AddressNotUsable), since the
// front-end does not know the Envoys' addresses.
func unsupportedAddress(gw *gwapiv1.Gateway) string {
	for i, a := range gw.Spec.Addresses {
		switch t := deref(a.Type, gwapiv1.IPAddressType); t {
		case gwapiv1.IPAddressType, gwapiv1.HostnameAddressType:
		default:
			return fmt.Sprintf("spec.addresses[%d]: type %s is not supported (IPAddress and Hostname are: the Envoys' addresses)", i, t)
		}
	}
	return ""
}

// listener checks one Gateway listener: programmed, or not with a
// problem and the condition that says why.
func (b *build) listener(gw *gwapiv1.Gateway, spec *gwapiv1.Listener) *listener {
	l := &listener{gateway: gw, name: string(spec.Name), port: uint32(spec.Port), allowed: spec.AllowedRoutes}
	if b.opts.OwnAddresses {
		l.set = ownSet(gw, l.port)
	}
	if spec.Hostname != nil {
		l.hostname = strings.ToLower(string(*spec.Hostname))
	}
	l.status.kinds, l.status.badKinds = routeKinds(spec.Protocol, spec.AllowedRoutes)
	bad := func(reason, format string, args ...any) *listener {
		msg := fmt.Sprintf(format, args...)
		b.problems.add(kindGateway, gw.Namespace, gw.Name, reason, "%s: %s", l.where(), msg)
		l.status.setRefused(reason, msg)
		return l
	}
	if l.hostname != "" {
		if why := validHostname(l.hostname); why != "" {
			return bad(string(gwapiv1.ListenerReasonUnsupportedValue), "hostname %s: not programmed", why)
		}
	}
	switch spec.Protocol {
	case gwapiv1.HTTPProtocolType:
		l.protocol = ir.HTTP
		if l.set == "" && !servedPort(l.port, b.opts.HTTPPort, b.opts.PublishedHTTPPort) {
			return bad("PortUnavailable", "port %d: Envoy serves plain HTTP on port %s only: not programmed", l.port, portsOf(b.opts.HTTPPort, b.opts.PublishedHTTPPort))
		}
	case gwapiv1.HTTPSProtocolType:
		l.protocol = ir.HTTPS
		// Checked before the port: a listener left without a valid CA is
		// refused for that (NoValidCACertificate), whatever its port.
		cc, err := b.frontendValidation(gw, l.port)
		if err != nil {
			reason := reasonOf(err, string(gwapiv1.ListenerReasonInvalidCACertificateRef))
			l.status.unresolved, l.status.unresolvedMsg = reason, err.Error()
			if cc == nil {
				return bad(string(gwapiv1.ListenerReasonNoValidCACertificate), "tls.frontend: %v: no CA certificate to validate clients against: not programmed", err)
			}
			b.problems.add(kindGateway, gw.Namespace, gw.Name, reason, "%s: tls.frontend: %v: validated against the other CAs", l.where(), err)
		}
		l.clientCert = cc
		if l.set == "" && !servedPort(l.port, b.opts.HTTPSPort, b.opts.PublishedHTTPSPort) {
			return bad("PortUnavailable", "port %d: Envoy serves HTTPS on port %s only: not programmed", l.port, portsOf(b.opts.HTTPSPort, b.opts.PublishedHTTPSPort))
		}
		cert, err := b.listenerCertificate(gw, spec.TLS)
		if err != nil {
			return bad(reasonOf(err, string(gwapiv1.ListenerReasonInvalidCertificateRef)), "%v: not programmed", err)
		}
		l.certificate = cert
	case gwapiv1.TLSProtocolType:
		l.protocol = protocolTLS
		terminates, err := tlsListenerTerminates(spec.TLS)
		if err != nil {
			l.status.kinds = nil // no Route kind is served there
			return bad(string(gwapiv1.ListenerReasonUnsupportedValue), "%v: not programmed", err)
		}
		// Passed through (or terminated) on the HTTPS port, by SNI
		// (tls.go).
		if l.set == "" && !servedPort(l.port, b.opts.HTTPSPort, b.opts.PublishedHTTPSPort) {
			return bad("PortUnavailable", "port %d: Envoy serves TLS on port %s only: not programmed", l.port, portsOf(b.opts.HTTPSPort, b.opts.PublishedHTTPSPort))
		}
		if terminates {
			l.protocol = protocolTLSTerminate
			cert, err := b.listenerCertificate(gw, spec.TLS)
			if err != nil {
				return bad(reasonOf(err, string(gwapiv1.ListenerReasonInvalidCertificateRef)), "%v: not programmed", err)
			}
			l.certificate = cert
		}
	default:
		l.status.kinds = nil // none of this protocol's Route kinds is served
		return bad("UnsupportedProtocol", "protocol %s is not supported yet (HTTP, HTTPS and TLS are): not programmed", spec.Protocol)
	}
	l.programmed = true
	return l
}

// listenerCertificate resolves the certificate of a listener that ends
// TLS (HTTPS, or TLS in Terminate mode): TLS terminated with the first
// certificateRef, a Secret of the Gateway's
// namespace or of another one a ReferenceGrant opens to Gateways. Envoy
// serves one certificate per name, so further refs are reported unused.
func (b *build) listenerCertificate(gw *gwapiv1.Gateway, tls *gwapiv1.ListenerTLSConfig) (string, error) {
	if tls == nil {
		return "", fmt.Errorf("a listener that terminates TLS needs tls.certificateRefs")
	}
	if tls.Mode != nil && *tls.Mode != gwapiv1.TLSModeTerminate {
		return "", refError{reason: string(gwapiv1.ListenerReasonUnsupportedValue), err: fmt.Errorf("tls.mode %s is not supported yet (Terminate is)", *tls.Mode)}
	}
	if len(tls.CertificateRefs) == 0 {
		return "", fmt.Errorf("a listener that terminates TLS needs tls.certificateRefs")
	}
	if len(tls.CertificateRefs) > 1 {
		b.problems.add(kindGateway, gw.Namespace, gw.Name, "CertificateRefsIgnored",
			"tls.certificateRefs: only the first is served (one certificate per name)")
	}
	ref := tls.CertificateRefs[0]
	if g, k := deref(ref.Group, ""), deref(ref.Kind, "Secret"); g != "" || k != "Secret" {
		return "", fmt.Errorf("certificateRefs[0]: %s %s is not a Secret", groupKind(g, k), ref.Name)
	}
	name := types.NamespacedName{Namespace: string(deref(ref.Namespace, gwapiv1.Namespace(gw.Namespace))), Name: string(ref.Name)}
	if name.Namespace != gw.Namespace && !b.granted(gwapiv1.GroupName, kindGateway, gw.Namespace, "", "Secret", name) {
		return "", refError{reason: string(gwapiv1.ListenerReasonRefNotPermitted), err: fmt.Errorf("certificateRefs[0]: Secret %s is in another namespace and no ReferenceGrant there allows it", name)}
	}
	cert, err := certificates.FromSecret(name, b.st.Secrets[name])
	if err != nil {
		return "", fmt.Errorf("certificateRefs[0]: %w", err)
	}
	b.certs[cert.Name] = cert
	return cert.Name, nil
}

// deref is *p, or def when p is nil: the defaults the API server would
// have written, which manifests read from files lack.
func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func groupKind[G, K ~string](g G, k K) string {
	if g == "" {
		return string(k)
	}
	return string(k) + "." + string(g)
}

// servedPort says whether a listener's port is Envoy's own for its
// protocol (bound, non-zero) or the one clients reach it on.
func servedPort(port, bound, published uint32) bool {
	return bound != 0 && (port == bound || published != 0 && port == published)
}

// portsOf names the ports servedPort accepts, for a listener's problem.
func portsOf(bound, published uint32) string {
	switch {
	case bound == 0:
		return "none (it has no such listener)"
	case published == 0 || published == bound:
		return strconv.FormatUint(uint64(bound), 10)
	}
	return fmt.Sprintf("%d (or %d, where clients reach it)", bound, published)
}
