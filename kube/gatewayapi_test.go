package kube

import (
	"strings"
	"testing"
)

// TestManifestsCarryGatewayAPIObjects: Gateway API kinds in manifests reach
// the State, v1beta1 ones as their v1 selves, with kubectl's namespace
// default, the later of two of one name winning, sorted by name.
func TestManifestsCarryGatewayAPIObjects(t *testing.T) {
	const manifests = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ours}
spec: {controllerName: ingress-xds.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: ours
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: z, namespace: apps}
spec: {hostnames: [z.example.com]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: a, namespace: apps}
spec: {hostnames: [old.example.com]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: apps}
spec: {hostnames: [new.example.com]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc, namespace: apps}
spec: {hostnames: [rpc.example.com]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls, namespace: apps}
spec: {hostnames: [tls.example.com]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: grant, namespace: backends}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: apps}]
  to: [{group: "", kind: Service}]
`
	st, err := ManifestState(strings.NewReader(manifests), "test", ClassFilter{WatchClassless: true}, Refs{})
	if err != nil {
		t.Fatal(err)
	}
	g := st.Gateway
	if g == nil {
		t.Fatal("no Gateway API objects in the State")
	}
	if len(g.GatewayClasses) != 1 || g.GatewayClasses[0].Spec.ControllerName != "ingress-xds.io/gateway-controller" {
		t.Errorf("GatewayClasses = %v", g.GatewayClasses)
	}
	if len(g.Gateways) != 1 || g.Gateways[0].Namespace != "default" {
		t.Errorf("Gateways = %v, want web in default", g.Gateways)
	}
	var routes []string
	for _, r := range g.HTTPRoutes {
		routes = append(routes, r.Namespace+"/"+r.Name+"="+string(r.Spec.Hostnames[0]))
	}
	if got, want := strings.Join(routes, " "), "apps/a=new.example.com apps/z=z.example.com"; got != want {
		t.Errorf("HTTPRoutes = %s, want %s", got, want)
	}
	if len(g.GRPCRoutes) != 1 || g.GRPCRoutes[0].Spec.Hostnames[0] != "rpc.example.com" {
		t.Errorf("GRPCRoutes = %v", g.GRPCRoutes)
	}
	if len(g.TLSRoutes) != 1 || g.TLSRoutes[0].Spec.Hostnames[0] != "tls.example.com" {
		t.Errorf("TLSRoutes = %v", g.TLSRoutes)
	}
	if len(g.ReferenceGrants) != 1 || g.ReferenceGrants[0].Spec.From[0].Namespace != "apps" {
		t.Errorf("ReferenceGrants = %v", g.ReferenceGrants)
	}

	none, err := ManifestState(strings.NewReader("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"), "test", ClassFilter{}, Refs{})
	if err != nil {
		t.Fatal(err)
	}
	if none.Gateway != nil {
		t.Errorf("a State without Gateway API objects has %+v", none.Gateway)
	}
}
