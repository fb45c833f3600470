package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ssl-passthrough, as ingress-nginx applies it with --enable-ssl-passthrough:
// to the backend of the host's "/" path (without one, nothing is passed
// through). Its plain HTTP side stays routed, to the backends over TLS:
// ingress-nginx marks the passed-through backend's upstream as HTTPS for
// every location. ingress-nginx passes a host through when any of its
// Ingresses asks; here only the host's oldest Ingress decides, and only
// for a "/" path of its own: otherwise a younger Ingress would take the
// TLS of every path of a host another team serves.

// parsePassthrough reads ssl-passthrough: whether the Ingress's hosts are
// passed through. It only counts with the serve flag, as in ingress-nginx,
// where the annotation is otherwise ignored. merge.go makes the backend's
// clusters speak TLS, as the backend does.
func parsePassthrough(values *annotations.Values, opts *Options) (bool, []problem) {
	on, _ := annotations.SSLPassthrough.Get(values)
	if !on {
		return false, nil
	}
	if !opts.EnableSSLPassthrough {
		return false, []problem{problemf("PassthroughDisabled", "annotation %s: TLS passthrough is off (serve --enable-ssl-passthrough): ignored, the hosts terminate TLS as usual",
			annotations.SSLPassthrough.Name())}
	}
	return true, nil
}

// mergePassthrough passes the host through when one of its Ingresses asks:
// to the backend of its "/" path, over a cluster of no policy (TCP).
func (h *hostMerge) mergePassthrough(host string, frags []*fragment, kept []hostRoute) {
	if h.vhost == nil || host == ir.WildcardHost {
		return
	}
	var oldest, asked *fragment
	for _, f := range frags {
		if f.canary != nil || !routesHost(f, host) {
			continue
		}
		if oldest == nil {
			oldest = f
		}
		if f.passthrough && asked == nil {
			asked = f
		}
	}
	if asked == nil {
		return
	}
	if asked != oldest {
		h.problems = append(h.problems, newProblem(asked.ingress, "PassthroughIgnored",
			"annotation %s: host %q is decided by its oldest Ingress %s/%s, which does not ask for it: ignored",
			annotations.SSLPassthrough.Name(), host, oldest.ingress.Namespace, oldest.ingress.Name))
		return
	}
	for _, hr := range kept {
		if hr.nginx.raw != "/" || hr.cluster == nil || hr.route.Action.Forward == nil || hr.ingress != asked.ingress {
			continue
		}
		backend := hr.cluster.backend
		tcp := &clusterRef{name: ir.ClusterName(backend.name, nil), backend: backend}
		found := false
		for _, c := range h.clusters {
			if c.name == tcp.name {
				found = true
				break
			}
		}
		if !found {
			h.clusters = append(h.clusters, tcp)
		}
		h.vhost.Passthrough = &ir.Passthrough{Cluster: tcp.name}
		return
	}
	h.problems = append(h.problems, newProblem(asked.ingress, "PassthroughIgnored",
		"annotation %s: host %q has no \"/\" path of this Ingress with a backend to pass its TLS connections to: ignored, the host terminates TLS as usual",
		annotations.SSLPassthrough.Name(), host))
}

// anyPassthrough says whether some host is passed through, which needs the
// HTTPS listener even without a certificate.
func anyPassthrough(vhosts []*ir.VirtualHost) bool {
	for _, vh := range vhosts {
		if vh.Passthrough != nil {
			return true
		}
	}
	return false
}
