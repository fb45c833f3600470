package adsclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// Both clients against the real xds.Server publishing the plain-HTTP
// routes in scopes (serve --route-scopes): each subscribes to the scopes
// when the listener says so, as Envoy does, then to the route
// configurations they name, and follows a host added and removed.
func TestClientRouteScopes(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: "sotw", true: "delta"}[delta], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			server := serve(t, ctx)
			const scopes = 4
			publish := func(yaml string) {
				t.Helper()
				var objs kube.Objects
				if err := kube.DecodeManifests(strings.NewReader(yaml), "test", &objs); err != nil {
					t.Fatal(err)
				}
				res, err := translate.Translate(objs.State(kube.ClassFilter{WatchClassless: true}), translate.Options{HTTPPort: 8080, RouteScopes: scopes})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := server.Publish(context.Background(), res.Resources); err != nil {
					t.Fatal(err)
				}
			}
			cafe := manifests("10.0.0.1")
			tea := strings.NewReplacer("cafe", "tea", "coffee-1", "coffee-2").Replace(strings.SplitN(cafe, "---", 2)[0])
			publish(cafe)
			c, err := Dial(ctx, server.address, Options{NodeID: t.Name(), Delta: delta})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const cluster = "default/coffee/80"
			snap, err := c.WaitFor(ctx, func(s *Snapshot) bool { return hostCluster(s, "cafe.example.com", "/coffee") == cluster })
			if err != nil {
				t.Fatalf("first snapshot: %v (have %s)", err, describe(snap))
			}
			if len(snap.Scopes) != scopes || len(snap.Routes) != scopes {
				t.Errorf("%d scopes and %d route configurations, want %d of each", len(snap.Scopes), len(snap.Routes), scopes)
			}
			publish(cafe + "---\n" + tea)
			if snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return hostCluster(s, "tea.example.com", "/coffee") == cluster }); err != nil {
				t.Fatalf("a host added: %v (have %s)", err, describe(snap))
			}
			publish(cafe)
			if snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return hostCluster(s, "tea.example.com", "/coffee") == "" }); err != nil {
				t.Fatalf("a host removed: %v (have %s)", err, describe(snap))
			}
			if got := hostCluster(snap, "cafe.example.com", "/coffee"); got != cluster {
				t.Errorf("with a host removed, cafe.example.com/coffee goes to %q, want %q", got, cluster)
			}
			if len(snap.Rejected) > 0 {
				t.Errorf("the client rejected valid responses: %q", snap.Rejected)
			}
		})
	}
}
