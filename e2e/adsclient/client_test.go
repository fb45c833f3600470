package adsclient

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// The client against the real xds.Server, in process: it must receive all
// four types, ACK (or the server would never send the next version), follow
// the names that listeners and clusters reference, and drop what is no
// longer referenced.
func TestClientFollowsPublishedSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := serve(t, ctx)

	publish(t, server.Server, manifests("10.0.0.1"))
	c, err := Dial(ctx, server.address, Options{NodeID: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const cluster = "default/coffee/80"
	want := server.Snapshot()
	allTypes := []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType}
	// Responses of different types arrive in any order: wait for all four
	// to match what was published.
	snap, err := c.WaitFor(ctx, func(s *Snapshot) bool {
		for _, typeURL := range allTypes {
			if s.Versions[typeURL] != want.GetVersion(typeURL) {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("first snapshot: %v (have %s)", err, describe(snap))
	}
	if got := routeCluster(snap, "cafe.example.com", "/coffee"); got != cluster {
		t.Errorf("route for cafe.example.com/coffee goes to %q, want %q", got, cluster)
	}
	if _, ok := snap.Clusters[cluster]; !ok {
		t.Errorf("no cluster %q: %s", cluster, describe(snap))
	}
	if got := endpointOf(snap, cluster); got != "10.0.0.1:8080" {
		t.Errorf("endpoint of %s is %q, want 10.0.0.1:8080", cluster, got)
	}

	// A second version only arrives if the first was ACKed.
	publish(t, server.Server, manifests("10.0.0.2"))
	if snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return endpointOf(s, cluster) == "10.0.0.2:8080" }); err != nil {
		t.Fatalf("endpoint update: %v (have %s)", err, describe(snap))
	}

	// Without the Ingress the cluster goes, and so must its endpoints.
	publish(t, server.Server, strings.SplitN(manifests("10.0.0.2"), "---", 2)[1])
	snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return len(s.Clusters) == 0 && len(s.Endpoints) == 0 })
	if err != nil {
		t.Fatalf("removal: %v (have %s)", err, describe(snap))
	}
	if len(snap.Rejected) > 0 {
		t.Errorf("the client rejected valid responses: %q", snap.Rejected)
	}
}

func manifests(endpoint string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: cafe}
spec:
  rules:
  - host: cafe.example.com
    http:
      paths:
      - {path: /coffee, pathType: Prefix, backend: {service: {name: coffee, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: coffee}
spec:
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: coffee-1, labels: {kubernetes.io/service-name: coffee}}
addressType: IPv4
ports: [{port: 8080}]
endpoints: [{addresses: [%q]}]
`, endpoint)
}

func publish(t *testing.T, server *xds.Server, yaml string) {
	t.Helper()
	st, err := kube.ManifestState(strings.NewReader(yaml), "test", kube.ClassFilter{WatchClassless: true}, kube.Refs{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := translate.Translate(st, translate.Options{HTTPPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Publish(context.Background(), res.Resources); err != nil {
		t.Fatal(err)
	}
}

// endpointOf returns "ip:port" of the cluster's only endpoint, or "".
func endpointOf(s *Snapshot, cluster string) string {
	var all []string
	for _, locality := range s.Endpoints[cluster].GetEndpoints() {
		for _, ep := range locality.GetLbEndpoints() {
			a := ep.GetEndpoint().GetAddress().GetSocketAddress()
			all = append(all, fmt.Sprintf("%s:%d", a.GetAddress(), a.GetPortValue()))
		}
	}
	if len(all) != 1 {
		return ""
	}
	return all[0]
}

func routeCluster(s *Snapshot, host, prefix string) string {
	for _, rc := range s.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			if vh.GetName() != host {
				continue
			}
			for _, r := range vh.GetRoutes() {
				if r.GetMatch().GetPathSeparatedPrefix() == prefix {
					return r.GetRoute().GetCluster()
				}
			}
		}
	}
	return ""
}

func describe(s *Snapshot) string {
	if s == nil {
		return "nothing"
	}
	return fmt.Sprintf("%d listeners, %d route configs, %d clusters, %d load assignments, versions %v",
		len(s.Listeners), len(s.Routes), len(s.Clusters), len(s.Endpoints), s.Versions)
}
