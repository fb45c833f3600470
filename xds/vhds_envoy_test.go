package xds

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// vhdsFixture is one HTTP listener whose route configuration takes its
// virtual hosts over VHDS (translate/envoy/vhds.go), one virtual host per
// host, each sending paths to clusters.
type vhdsFixture struct {
	port     int
	clusters map[string]string            // cluster -> its one endpoint
	hosts    map[string]map[string]string // host -> path prefix -> cluster
}

// resources renders f, reusing the virtual hosts of prev (by host) whose
// routes are the same, as the translator hands out the same message for
// what did not change.
func (f vhdsFixture) resources(t testing.TB, prev map[string]*routev3.VirtualHost) (*translate.Resources, map[string]*routev3.VirtualHost) {
	t.Helper()
	r := &translate.Resources{}
	r.Listeners = append(r.Listeners, httpListener(t, "http", f.port))
	r.Routes = append(r.Routes, &routev3.RouteConfiguration{Name: fixtureRoute, Vhds: &routev3.Vhds{ConfigSource: adsSource()}})
	for _, name := range sortedKeys(f.clusters) {
		r.Clusters = append(r.Clusters, edsCluster(name))
		r.Endpoints = append(r.Endpoints, loadAssignment(t, name, []string{f.clusters[name]}))
	}
	made := map[string]*routev3.VirtualHost{}
	for _, host := range sortedKeys(f.hosts) {
		vh := &routev3.VirtualHost{Name: fixtureRoute + "/" + host, Domains: []string{host}}
		for _, path := range sortedKeys(f.hosts[host]) {
			vh.Routes = append(vh.Routes, &routev3.Route{
				Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: path}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: f.hosts[host][path]}}},
			})
		}
		// Longest prefix first.
		for i, j := 0, len(vh.Routes)-1; i < j; i, j = i+1, j-1 {
			vh.Routes[i], vh.Routes[j] = vh.Routes[j], vh.Routes[i]
		}
		if old := prev[host]; old != nil && fmt.Sprint(old.Routes) == fmt.Sprint(vh.Routes) {
			vh = old
		}
		made[host] = vh
		r.VirtualHosts = append(r.VirtualHosts, vh)
	}
	return r, made
}

// TestVHDSEnvoy: a real Envoy on delta ADS takes a route configuration's
// virtual hosts over VHDS, each a resource of its own, and serves them as
// it serves those of one route configuration; a change sends only the
// virtual host it touched (counted at Envoy, by its VHDS and RDS reload
// counters, and at the server by the resources it pushed), whether a path
// is added to a host, a host is added or a host is removed.
func TestVHDSEnvoy(t *testing.T) {
	ts := startServer(t)
	f := vhdsFixture{
		port:     freePort(t),
		clusters: map[string]string{"a": backend(t, "a"), "b": backend(t, "b"), "c": backend(t, "c")},
		hosts: map[string]map[string]string{
			"a.example": {"/": "a"},
			"b.example": {"/": "b"},
		},
	}
	var vhosts map[string]*routev3.VirtualHost
	publish := func() {
		t.Helper()
		var r *translate.Resources
		r, vhosts = f.resources(t, vhosts)
		if _, err := ts.Publish(context.Background(), r); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	publish()
	e := startEnvoy(t, ts.addr, "vhds", true, nil)
	expectHost(t, f.port, "a.example", "/", "a")
	expectHost(t, f.port, "b.example", "/x", "b")
	// Envoy's counters of accepted RDS and VHDS updates of the route
	// configuration "http" (its connection manager's stat prefix is
	// "http" too).
	const rdsUpdates, vhdsUpdates = "http.http.rds.http.update_success", "http.http.rds.vhds.http.update_success"
	sent := func() (vhosts, routes float64) {
		return ts.counter(t, "pushed_resources", "virtual_host", protocolDelta), ts.counter(t, "pushed_resources", "route", protocolDelta)
	}
	// check makes a change and waits until Envoy serves it; then Envoy
	// must have taken one VHDS update and no RDS update, and the server
	// sent it want virtual hosts (a removal sends a name only).
	check := func(what string, want float64, change func(), served func()) {
		t.Helper()
		v0, r0 := sent()
		rds0, vhds0 := e.stat(rdsUpdates), e.stat(vhdsUpdates)
		change()
		publish()
		served()
		if v, r := sent(); v-v0 != want || r != r0 {
			t.Errorf("%s: the server sent %v virtual hosts and %v route configurations, want %v and 0", what, v-v0, r-r0, want)
		}
		if rds, vhds := e.stat(rdsUpdates), e.stat(vhdsUpdates); rds != rds0 || vhds != vhds0+1 {
			t.Errorf("%s: Envoy took %d RDS and %d VHDS updates, want 0 and 1", what, rds-rds0, vhds-vhds0)
		}
	}
	check("a new path on a host", 1, func() { f.hosts["b.example"]["/other"] = "c" }, func() {
		expectHost(t, f.port, "b.example", "/other", "c")
		expectHost(t, f.port, "b.example", "/x", "b")
		expectHost(t, f.port, "a.example", "/other", "a")
	})
	check("a new host", 1, func() { f.hosts["c.example"] = map[string]string{"/": "c"} }, func() {
		expectHost(t, f.port, "c.example", "/", "c")
		expectHost(t, f.port, "a.example", "/", "a")
	})
	check("a host removed", 0, func() { delete(f.hosts, "a.example") }, func() {
		expectHostStatus(t, f.port, "a.example", "/", http.StatusNotFound)
		expectHost(t, f.port, "b.example", "/", "b")
	})
	if n := ts.counter(t, "nacks", "virtual_host", protocolDelta) + ts.counter(t, "nacks", "route", protocolDelta); n != 0 {
		t.Errorf("Envoy rejected %v responses", n)
	}
}

// throughHost sends a request for host and path through Envoy's listener on
// port.
func throughHost(port int, host, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// expectHost waits until a request for host and path reaches backend want.
func expectHost(t testing.TB, port int, host, path, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("GET %s%s reaches %s", host, path, want), func() error {
		status, body, err := throughHost(port, host, path)
		if err != nil {
			return err
		}
		if status != http.StatusOK || body != want {
			return fmt.Errorf("got %d %q", status, body)
		}
		return nil
	})
}

// expectHostStatus waits until a request for host and path is answered
// with status.
func expectHostStatus(t testing.TB, port int, host, path string, status int) {
	t.Helper()
	eventually(t, fmt.Sprintf("GET %s%s answers %d", host, path, status), func() error {
		got, body, err := throughHost(port, host, path)
		if err != nil {
			return err
		}
		if got != status {
			return fmt.Errorf("got %d %q", got, body)
		}
		return nil
	})
}
