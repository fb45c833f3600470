package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
)

// routeTable summarises the route configurations by virtual host name: a
// line with the domains the host matches, then one line per route in match
// order, such as "Prefix /coffee -> e2e/coffee/80" or "Exact /x -> direct
// 503". Comparing these lines states what Envoy will do without tying the
// tests to every field of the protos.
func routeTable(s *adsclient.Snapshot) map[string][]string {
	table := map[string][]string{}
	for _, rc := range s.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			lines := []string{"domains " + strings.Join(vh.GetDomains(), ",")}
			for _, r := range vh.GetRoutes() {
				m := r.GetMatch()
				match := "?"
				switch {
				case m.GetPath() != "":
					match = "Exact " + m.GetPath()
				case m.GetPathSeparatedPrefix() != "":
					match = "Prefix " + m.GetPathSeparatedPrefix()
				case m.GetPrefix() != "":
					match = "Prefix " + m.GetPrefix()
				}
				action := "?"
				switch {
				case r.GetRoute().GetCluster() != "":
					action = r.GetRoute().GetCluster()
				case r.GetDirectResponse() != nil:
					action = fmt.Sprintf("direct %d", r.GetDirectResponse().GetStatus())
				}
				lines = append(lines, match+" -> "+action)
			}
			// Over VHDS (serve --vhds) a virtual host is named
			// <route configuration>/<host>: the host is the key.
			name := vh.GetName()
			name = name[strings.LastIndexByte(name, '/')+1:]
			table[name] = lines
		}
	}
	return table
}

// endpoints returns the cluster's endpoints as sorted "ip:port" strings.
func endpoints(s *adsclient.Snapshot, cluster string) []string {
	var out []string
	for _, locality := range s.Endpoints[cluster].GetEndpoints() {
		for _, ep := range locality.GetLbEndpoints() {
			a := ep.GetEndpoint().GetAddress().GetSocketAddress()
			out = append(out, fmt.Sprintf("%s:%d", a.GetAddress(), a.GetPortValue()))
		}
	}
	sort.Strings(out)
	return out
}

// clusterNames returns the names of the clusters, sorted.
func clusterNames(s *adsclient.Snapshot) []string {
	var out []string
	for name := range s.Clusters {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// waitXDS waits until check passes on the client's snapshot, logs how long
// that took, and fails the test with check's last complaint otherwise.
func waitXDS(t *testing.T, c *adsclient.Client, what string, check func(*adsclient.Snapshot) error) *adsclient.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	start := time.Now()
	var last error
	snap, err := c.WaitFor(ctx, func(s *adsclient.Snapshot) bool {
		last = check(s)
		return last == nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last mismatch: %v", what, err, last)
	}
	if len(snap.Rejected) > 0 {
		t.Errorf("the ADS client rejected responses: %q", snap.Rejected)
	}
	t.Logf("%s: took %s", what, time.Since(start).Round(time.Millisecond))
	return snap
}
