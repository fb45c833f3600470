package pipeline

import (
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// Observer is told of what the pipeline publishes, for metrics kept
// outside it (internal/nginxmetrics: ingress-nginx's certificate and
// configuration metrics). Its methods are called on the rebuild's
// goroutine, one rebuild at a time, after the snapshot is published.
type Observer interface {
	// Translated is given the IR of each full translation published
	// (not the endpoint fast path's, which changes endpoints only). It
	// must not be modified.
	Translated(*ir.IR)
	// Published is given the served snapshot's version of each type,
	// by type URL, after every publish.
	Published(versions map[string]string)
}

// snapshotTypes are the types whose versions an Observer is given.
var snapshotTypes = []string{
	resource.ListenerType, resource.ScopedRouteType, resource.RouteType, resource.VirtualHostType,
	resource.ClusterType, resource.EndpointType, resource.SecretType,
}

// observe tells the Observer, if any, of a publish of res, a full
// translation's or the endpoint fast path's.
func (p *Pipeline) observe(res *translate.Result, full bool, snap *xds.Snapshot) {
	if p.observer == nil {
		return
	}
	if full {
		p.observer.Translated(res.IR())
	}
	versions := make(map[string]string, len(snapshotTypes))
	for _, t := range snapshotTypes {
		if v := snap.GetVersion(t); v != "" {
			versions[t] = v
		}
	}
	p.observer.Published(versions)
}
