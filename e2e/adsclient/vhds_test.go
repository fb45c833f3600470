package adsclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// The delta client against the real xds.Server publishing the plain-HTTP
// virtual hosts over VHDS (serve --vhds): it subscribes to them by their
// route configuration's name, as Envoy does, shows them in that route
// configuration, and follows a host added and a host removed.
func TestDeltaClientVirtualHostDiscovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := serve(t, ctx)
	publish := publisher(t, server, translate.Options{HTTPPort: 8080, VirtualHostDiscovery: true}, func(res *translate.Result) {
		if len(res.Resources.VirtualHosts) == 0 {
			t.Fatal("nothing sent over VHDS")
		}
	})
	followHostAddedAndRemoved(t, ctx, server, publish, true, nil)
}

// publisher returns a function that translates manifests with opts,
// checks the result, and publishes it on server.
func publisher(t *testing.T, server testServer, opts translate.Options, check func(*translate.Result)) func(yaml string) {
	return func(yaml string) {
		t.Helper()
		st, err := kube.ManifestState(strings.NewReader(yaml), "test", kube.ClassFilter{WatchClassless: true}, kube.Refs{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := translate.Translate(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		check(res)
		if _, err := server.Publish(context.Background(), res.Resources); err != nil {
			t.Fatal(err)
		}
	}
}

// followHostAddedAndRemoved publishes the cafe, dials a client (delta or
// SotW), checks its first snapshot with first (when not nil), then
// publishes a host added and removed, and checks that the client follows
// both without rejecting anything.
func followHostAddedAndRemoved(t *testing.T, ctx context.Context, server testServer, publish func(string), delta bool, first func(*Snapshot)) {
	t.Helper()
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
	if first != nil {
		first(snap)
	}
	publish(cafe + "---\n" + tea)
	if snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return hostCluster(s, "tea.example.com", "/coffee") == cluster }); err != nil {
		t.Fatalf("a host added: %v (have %s)", err, describe(snap))
	}
	if got := hostCluster(snap, "cafe.example.com", "/coffee"); got != cluster {
		t.Errorf("with a host added, cafe.example.com/coffee goes to %q, want %q", got, cluster)
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
}

// hostCluster is the cluster of the route for prefix of the virtual host
// whose domains hold host, in any route configuration, or "".
func hostCluster(s *Snapshot, host, prefix string) string {
	for _, rc := range s.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, d := range vh.GetDomains() {
				if d != host {
					continue
				}
				for _, r := range vh.GetRoutes() {
					if r.GetMatch().GetPathSeparatedPrefix() == prefix {
						return r.GetRoute().GetCluster()
					}
				}
			}
		}
	}
	return ""
}
