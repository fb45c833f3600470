package load

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
)

// The Gateway API workload routes what the Ingress workload routes: its
// HTTPRoutes, on the Gateway the control plane's front-end serves with
// its defaults (Envoy's HTTP port published as 80), are all accepted and
// make every workload host, each with its paths, and a cluster per
// Service; a change sample's HTTPRoute adds its hosts alike.
func TestGatewayAPIWorkloadRoutesAsIngresses(t *testing.T) {
	w := Workload{N: 3, Namespace: "ns", GatewayAPI: true}
	var objs kube.Objects
	for s := range w.Services() {
		objs.Services = append(objs.Services, w.Service(s))
		objs.EndpointSlices = append(objs.EndpointSlices, w.EndpointSlice(s, EndpointsPerSlice))
	}
	objs.Gateway.GatewayClasses = append(objs.Gateway.GatewayClasses, GatewayClass())
	objs.Gateway.Gateways = append(objs.Gateway.Gateways, w.Gateway())
	for i := range w.N {
		for h := range HostsPerIngress {
			objs.Gateway.HTTPRoutes = append(objs.Gateway.HTTPRoutes, w.HTTPRoute(i, h))
		}
	}
	change := w.ChangeHTTPRoute("run", 0, 1)
	objs.Gateway.HTTPRoutes = append(objs.Gateway.HTTPRoutes, change)
	opts := gatewayapi.Options{ControllerName: GatewayController, HTTPPort: 8080, PublishedHTTPPort: gatewayPort}
	m, status := gatewayapi.BuildWithStatus(objs.State(kube.ClassFilter{WatchClassless: true}), opts)

	if len(m.Problems) > 0 {
		t.Errorf("problems: %v", m.Problems)
	}
	if got, want := len(status.HTTPRoutes), w.N*HostsPerIngress+1; got != want {
		t.Errorf("%d HTTPRoutes have a status, want %d", got, want)
	}
	for name, st := range status.HTTPRoutes {
		if c := st.Parents[0].Conditions[0]; c.Status != metav1.ConditionTrue {
			t.Errorf("HTTPRoute %s: %s %s: %s", name, c.Type, c.Reason, c.Message)
		}
	}
	want := w.AllHosts()
	for _, h := range change.Spec.Hostnames {
		want = append(want, string(h))
	}
	slices.Sort(want)
	var got []string
	for _, vh := range m.VirtualHosts {
		got = append(got, vh.Host)
		if len(vh.Routes) != PathsPerHost {
			t.Errorf("host %s has %d routes, want %d", vh.Host, len(vh.Routes), PathsPerHost)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("hosts %v, want %v", got, want)
	}
	if len(m.Clusters) != w.Services() {
		t.Errorf("%d clusters, want one per Service: %d", len(m.Clusters), w.Services())
	}
}

// Create writes the Gateway API workload: its GatewayClass, Gateway and
// an HTTPRoute per host, as many objects as Objects says.
func TestCreateGatewayAPIWorkload(t *testing.T) {
	ctx := context.Background()
	client, gw := fake.NewClientset(), gwfake.NewSimpleClientset()
	w := Workload{N: 4, Namespace: "load", GatewayAPI: true}
	stats, err := Create(ctx, client, gw, w, 3, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	routes, _ := gw.GatewayV1().HTTPRoutes("load").List(ctx, metav1.ListOptions{})
	gateways, _ := gw.GatewayV1().Gateways("load").List(ctx, metav1.ListOptions{})
	classes, _ := gw.GatewayV1().GatewayClasses().List(ctx, metav1.ListOptions{})
	ingresses, _ := client.NetworkingV1().Ingresses("load").List(ctx, metav1.ListOptions{})
	if len(routes.Items) != w.N*HostsPerIngress || len(gateways.Items) != 1 || len(classes.Items) != 1 || len(ingresses.Items) != 0 {
		t.Errorf("created %d HTTPRoutes, %d Gateways, %d GatewayClasses, %d Ingresses; want %d, 1, 1, 0",
			len(routes.Items), len(gateways.Items), len(classes.Items), len(ingresses.Items), w.N*HostsPerIngress)
	}
	if stats.Objects != w.Objects() || stats.Existing != 0 {
		t.Errorf("%d objects, %d existing; want %d, 0", stats.Objects, stats.Existing, w.Objects())
	}
}
