package ingress

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// mirrorConfig is a mirror of every route of the Ingress, and the cluster
// it sends to; nil cluster: none.
type mirrorConfig struct {
	mirror  ir.Mirror
	cluster *clusterRef
}

// parseMirror reads mirror-target, mirror-host and mirror-request-body
// into a mirror of every route of the Ingress, as ingress-nginx's mirror
// directive and its mirror location do, and makes the cluster of the
// target: one per scheme, host and port, resolved by Envoy as an
// ExternalName Service's name is, so gated as those are
// (--enable-external-name).
func parseMirror(values *annotations.Values, env groupEnv) (mirrorConfig, []problem) {
	t, ok := annotations.MirrorTargetKey.Get(values)
	if !ok {
		return mirrorConfig{}, nil
	}
	notApplied := func(reason, format string, args ...any) (mirrorConfig, []problem) {
		return mirrorConfig{}, []problem{problemf(reason, format, args...)}
	}
	if !env.opts.EnableExternalName {
		return notApplied("MirrorRefused", "annotation %s: a mirror target makes Envoy connect to a name the Ingress chooses, as an ExternalName Service does, which is disabled (--enable-external-name): not applied",
			annotations.MirrorTargetKey.Name())
	}
	// nginx's mirror location sets Host to mirror-host, else the target's
	// host without its port.
	m := ir.Mirror{Percent: 100, Host: t.Host}
	if h, ok := annotations.MirrorHostKey.Get(values); ok {
		m.Host = h
	}
	switch {
	case t.RequestURI:
		m.Path = &ir.MirrorPath{Prefix: t.Path, Then: ir.MirrorRequestURI}
	case t.Path != "":
		m.Path = &ir.MirrorPath{Prefix: t.Path, Then: ir.MirrorQuery}
	default:
		// proxy_pass without a URI passes the subrequest's own: the
		// mirror location's name.
		m.Path = &ir.MirrorPath{Prefix: "/_mirror-" + string(env.ing.UID), Then: ir.MirrorQuery}
	}
	if body, ok := annotations.MirrorRequestBodyKey.Get(values); ok && !body {
		m.NoBody = true
	}
	policy := &ir.ClusterPolicy{Mirror: true}
	if t.Scheme == "https" {
		// As nginx's proxy_ssl_verify off: the certificate is not checked.
		policy.TLS = &ir.UpstreamTLS{}
		if _, err := netip.ParseAddr(t.Host); err != nil {
			policy.TLS.SNI = t.Host
		}
	}
	// Never a Service's backend name (namespace/name/port): four parts.
	name := fmt.Sprintf("mirror/%s/%s/%d", t.Scheme, t.Host, t.Port)
	port := kube.ServicePort{Port: int32(t.Port), Protocol: corev1.ProtocolTCP}
	backend := &backendRef{name: name, port: port, externalName: t.Host}
	if env.opts.ResolveNames {
		// The control plane resolved the name (kube.ResolvingSource's
		// ExtraNames, from MirrorNames) and checked its addresses, as an
		// ExternalName Service's: Envoy is handed those, never the name.
		svcName := kube.NameService(t.Host)
		svc := env.objects.service(svcName)
		switch {
		case svc == nil || svc.Resolved == nil:
			return notApplied("MirrorUnresolved", "annotation %s: %q is not resolved yet: not applied until it is", annotations.MirrorTargetKey.Name(), t.Host)
		case svc.Resolved.Refused != "":
			return notApplied("MirrorRefused", "annotation %s: %q %s: not applied (serve --external-name-allow-local would allow it)", annotations.MirrorTargetKey.Name(), t.Host, svc.Resolved.Refused)
		case svc.Resolved.Err != "":
			return notApplied("MirrorUnresolved", "annotation %s: the control plane could not resolve %q (%s): not applied", annotations.MirrorTargetKey.Name(), t.Host, svc.Resolved.Err)
		}
		backend = &backendRef{name: name, service: svcName, port: port, via: t.Host}
	}
	c := mirrorConfig{mirror: m, cluster: &clusterRef{name: ir.ClusterName(name, policy), backend: backend, policy: policy}}
	c.mirror.Cluster = c.cluster.name
	return c, nil
}

// MirrorNames lists the hosts of the mirror targets of st's Ingresses, for
// the control plane to resolve and check by address before the translator
// reads them (kube.ResolvingSource.ExtraNames), as it does ExternalName
// Services' names.
func MirrorNames(nginxPrefix string) func(*kube.State) []string {
	reg := annotations.New(nginxPrefix)
	return func(st *kube.State) []string {
		var out []string
		for _, ing := range st.Ingresses {
			if host, ok := annotations.MirrorTargetHost(reg, ing.Annotations); ok {
				out = append(out, host)
			}
		}
		return out
	}
}

// mirrorsTo says whether route's policy mirrors to cluster.
func mirrorsTo(route *ir.Route, cluster string) bool {
	if route.Policy == nil {
		return false
	}
	for _, m := range route.Policy.Mirrors {
		if m.Cluster == cluster {
			return true
		}
	}
	return false
}
