package pipeline

import (
	"context"
	"sync"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
)

// statusSink keeps the Gateway API statuses it is handed.
type statusSink struct {
	mu      sync.Mutex
	updates []kube.GatewayStatuses
}

func (s *statusSink) Update(st kube.GatewayStatuses) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = append(s.updates, st)
}

func (s *statusSink) got() []kube.GatewayStatuses {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]kube.GatewayStatuses(nil), s.updates...)
}

// withGateway adds to a state a GatewayClass of ours, a Gateway with an
// HTTP listener on Envoy's port and an HTTPRoute to web:80.
func withGateway(st *kube.State) *kube.State {
	section := gwapiv1.SectionName("http")
	port := gwapiv1.PortNumber(80)
	st.Gateway = &kube.GatewayObjects{
		GatewayClasses: []*gwapiv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "xds"},
			Spec: gwapiv1.GatewayClassSpec{ControllerName: "ingress-xds.io/gateway-controller"}}},
		Gateways: []*gwapiv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "gw", Generation: 3},
			Spec: gwapiv1.GatewaySpec{GatewayClassName: "xds", Listeners: []gwapiv1.Listener{{Name: "http", Port: 8080, Protocol: gwapiv1.HTTPProtocolType}}}}},
		HTTPRoutes: []*gwapiv1.HTTPRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "route", Generation: 2},
			Spec: gwapiv1.HTTPRouteSpec{
				CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "gw", SectionName: &section}}},
				Hostnames:       []gwapiv1.Hostname{"gw.example.com"},
				Rules: []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{
					BackendObjectReference: gwapiv1.BackendObjectReference{Name: gwapiv1.ObjectName(web.Name), Port: &port}}}}}},
			}}},
	}
	return st
}

// Each full build hands its Gateway API status to the sink, before the
// first publish is announced; the endpoint fast path hands nothing.
func TestGatewayStatusHandedOver(t *testing.T) {
	ctx := context.Background()
	tp := newTestPipeline(t, withGateway(state(false, "198.18.0.1")))
	sink := &statusSink{}
	tp.gatewayStatus = sink
	tp.Rebuild(ctx)
	select {
	case <-tp.Published():
	default:
		t.Fatal("not published")
	}
	got := sink.got()
	if len(got) != 1 {
		t.Fatalf("%d updates after one build, want 1", len(got))
	}
	gw, ok := got[0].Gateways["app/gw"]
	if !ok || len(gw.Listeners) != 1 || gw.Listeners[0].AttachedRoutes != 1 {
		t.Errorf("Gateway status = %+v, want one listener with one Route", gw)
	}
	route := got[0].HTTPRoutes["app/route"]
	if len(route.Parents) != 1 || route.Parents[0].Conditions[0].Type != "Accepted" || route.Parents[0].Conditions[0].Status != metav1.ConditionTrue ||
		route.Parents[0].Conditions[0].ObservedGeneration != 2 {
		t.Errorf("HTTPRoute status = %+v, want Accepted at generation 2", route)
	}

	before := tp.version(resource.EndpointType)
	tp.source.set(withGateway(state(false, "198.18.0.2")), kube.Changes{Endpoints: map[types.NamespacedName]bool{web: true}})
	tp.Rebuild(ctx)
	if tp.version(resource.EndpointType) == before {
		t.Fatal("the endpoint change was not published")
	}
	if n := len(sink.got()); n != 1 {
		t.Errorf("%d updates after an endpoint change, want still 1", n)
	}

	// No Gateway API object at all: an empty status, nothing ours.
	tp.source.set(state(false, "198.18.0.1"), kube.Changes{All: true})
	tp.Rebuild(ctx)
	if got := sink.got(); len(got) != 2 || len(got[1].Gateways)+len(got[1].HTTPRoutes)+len(got[1].GRPCRoutes) != 0 {
		t.Errorf("updates = %+v, want a second, empty one", got)
	}
}
