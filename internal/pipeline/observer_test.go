package pipeline

import (
	"context"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// observed keeps what an Observer is told.
type observed struct {
	irs      []*ir.IR
	versions []map[string]string
}

func (o *observed) Translated(r *ir.IR)                  { o.irs = append(o.irs, r) }
func (o *observed) Published(versions map[string]string) { o.versions = append(o.versions, versions) }

// The Observer is given each full translation's IR and every publish's
// versions, the fast path's too, as the snapshot serves them.
func TestObserverSeesEachPublish(t *testing.T) {
	ctx := context.Background()
	tp := newTestPipeline(t, state(false, "198.18.0.1"))
	o := &observed{}
	tp.observer = o
	tp.Rebuild(ctx)
	if len(o.irs) != 1 || len(o.irs[0].VirtualHosts) == 0 {
		t.Fatalf("after a full build the observer has %d IRs: %+v", len(o.irs), o.irs)
	}
	tp.source.set(state(false, "198.18.0.1", "198.18.0.2"), kube.Changes{Endpoints: map[types.NamespacedName]bool{web: true}})
	tp.Rebuild(ctx)
	if len(o.irs) != 1 {
		t.Errorf("the endpoint fast path gave the observer an IR (%d in all)", len(o.irs))
	}
	if len(o.versions) != 2 {
		t.Fatalf("%d publishes observed, want 2", len(o.versions))
	}
	for _, typ := range []string{resource.ListenerType, resource.EndpointType} {
		if got, want := o.versions[1][typ], tp.version(typ); got != want {
			t.Errorf("%s: observed version %q, served %q", typ, got, want)
		}
	}
	if o.versions[0][resource.EndpointType] == o.versions[1][resource.EndpointType] {
		t.Error("the endpoint version observed did not move on an endpoint change")
	}
}
