package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIGRPCRoute makes real gRPC calls through Envoy to a real
// gRPC server (grpc-go's health service, h2c) by a GRPCRoute: the method
// it names is served over HTTP/2 to the backend; a host without a
// GRPCRoute, and a method the Route does not name, are not.
func TestGatewayAPIGRPCRoute(t *testing.T) {
	framework.Heavy(t)
	framework.FindTools(t)
	port := startGRPCHealth(t, nil)
	fm := startFileMode(t, nil, manifest{"services.yaml", fmt.Sprintf(grpcHealthServiceYAML, port, port)})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", httpRoutes)
	})
	writeManifest(t, dir, "gateway.yaml", fmt.Sprintf(gatewayGRPCYAML, cp.HTTPPort))
	framework.Eventually(t, convergeTimeout, "the GRPCRoute served", func() error {
		return grpcCheck(envoy.HTTPAddress, "grpc.example.com")
	})
	if err := grpcCheck(envoy.HTTPAddress, "other.example.com"); err == nil {
		t.Error("a gRPC call for a host without a GRPCRoute was served")
	}
	// Only the method the Route names: a plain GET of another path has
	// no route.
	r, err := envoy.Get("grpc.example.com", "/grpc.health.v1.Health/Watch")
	if err != nil || r.Status != http.StatusNotFound {
		t.Errorf("GET of a method the GRPCRoute does not name: %v, %v; want 404", r, err)
	}
}

// grpcHealthServiceYAML takes the gRPC server's port twice.
const grpcHealthServiceYAML = `
apiVersion: v1
kind: Service
metadata: {name: health, namespace: default}
spec: {ports: [{name: grpc, port: 50051, targetPort: %d}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: health-1, namespace: default, labels: {kubernetes.io/service-name: health}}
addressType: IPv4
ports: [{name: grpc, port: %d}]
endpoints: [{addresses: [127.0.0.1]}]
`

// gatewayGRPCYAML takes Envoy's HTTP port.
const gatewayGRPCYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: health, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: [grpc.example.com]
  rules:
  - matches: [{method: {service: grpc.health.v1.Health, method: Check}}]
    backendRefs: [{name: health, port: 50051}]
`
