package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	inspectv1 "github.com/ingress-xds/ingress-xds/xds/inspect/v1"
)

// Helpers of the fault tests (faults_test.go).

// envoyBuilds are the stats in which Envoy records rebuilding its
// listeners, clusters and routes, and the versions it runs: unchanged
// across an event means Envoy rebuilt nothing.
var envoyBuilds = []string{
	"listener_manager.listener_added", "listener_manager.listener_modified", "listener_manager.listener_removed",
	"listener_manager.listener_create_success",
	"cluster_manager.cluster_added", "cluster_manager.cluster_modified", "cluster_manager.cluster_removed",
}

// routeReloads matches the stats of Envoy's rebuilds of the HTTP routes:
// of the one route configuration, or of each scope's (route scopes).
const routeReloads = `^http\.ingress_http\.rds\.ingress_http(/[0-9]+)?\.config_reload$`

// buildStats reads envoyBuilds, and from the config dump the version and
// last update time of every dynamic resource, in the dump's order.
func buildStats(t *testing.T, envoy *framework.Envoy) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range envoyBuilds {
		out[s] = fmt.Sprint(stat(t, envoy, s))
	}
	reloads, err := envoy.Stats(routeReloads)
	if err != nil || len(reloads) == 0 {
		t.Fatalf("reading envoy's route rebuilds: %v (%d stats)", err, len(reloads))
	}
	for s, v := range reloads {
		out[s] = fmt.Sprint(v)
	}
	dump := withoutScopes(envoy.ConfigDump())
	for i, m := range dumpVersion.FindAllStringSubmatch(dump, -1) {
		out[fmt.Sprintf("config_dump %s #%d", m[1], i)] = m[2]
	}
	if len(out) == len(envoyBuilds)+len(reloads) {
		t.Fatalf("no version_info in envoy's config dump:\n%s", dump)
	}
	return out
}

// withoutScopes is a config dump without its route scopes' part (route
// scopes, serve --route-scopes): Envoy's SRDS subscription stamps the
// time of every answer it gets, identical ones too, though it builds
// nothing of a scope whose content is unchanged; the scopes' route
// configurations, which it would rebuild, stay in the dump.
func withoutScopes(dump string) string {
	start := strings.Index(dump, `"@type": "type.googleapis.com/envoy.admin.v3.ScopedRoutesConfigDump"`)
	if start < 0 {
		return dump
	}
	end := strings.Index(dump[start+1:], `"@type": "type.googleapis.com/envoy.admin.v3.`)
	if end < 0 {
		return dump[:start]
	}
	return dump[:start] + dump[start+1+end:]
}

var dumpVersion = regexp.MustCompile(`"(version_info|last_updated)": "([^"]*)"`)

// servedVersions returns the version of each resource type the control
// plane serves, from its Inspector.
func servedVersions(t *testing.T, cp *framework.ControlPlane) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := inspectv1.NewInspectorClient(cp.DialXDS(t)).GetSnapshot(ctx, &inspectv1.GetSnapshotRequest{VersionsOnly: true})
	if err != nil {
		t.Fatalf("Inspector: %v", err)
	}
	out := map[string]string{}
	for _, typ := range resp.GetTypes() {
		out[typ.GetTypeUrl()] = typ.GetVersion()
	}
	return out
}

// inSync returns nil once CSDS reports that node has ACKed every resource
// of the snapshot being served (listeners, routes and clusters at least),
// and says what is missing otherwise.
func inSync(t *testing.T, cp *framework.ControlPlane, node string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := statusservice.NewClientStatusDiscoveryServiceClient(cp.DialXDS(t)).FetchClientStatus(ctx, &statusservice.ClientStatusRequest{})
	if err != nil {
		return err
	}
	for _, c := range resp.GetConfig() {
		if c.GetNode().GetId() != node {
			continue
		}
		types := map[string]int{}
		for _, g := range c.GetGenericXdsConfigs() {
			if g.GetClientStatus() != adminv3.ClientResourceStatus_ACKED || g.GetConfigStatus() != statusservice.ConfigStatus_SYNCED {
				return fmt.Errorf("%s %s: %v/%v", g.GetTypeUrl(), g.GetName(), g.GetClientStatus(), g.GetConfigStatus())
			}
			types[g.GetTypeUrl()[strings.LastIndex(g.GetTypeUrl(), ".")+1:]]++
		}
		for _, want := range []string{"Listener", "RouteConfiguration", "Cluster"} {
			if types[want] == 0 {
				return fmt.Errorf("no %s ACKed yet (%v)", want, types)
			}
		}
		return nil
	}
	return fmt.Errorf("node %s is not connected", node)
}

// completed is how many rounds of checks the probe has finished.
func (p *probe) completed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rounds
}

// waitRounds waits until the probe has finished n more rounds: traffic
// that went on through a fault, rather than a pause of some length.
func waitRounds(t *testing.T, p *probe, n int, during string) {
	t.Helper()
	target := p.completed() + n
	framework.Eventually(t, 2*time.Minute, fmt.Sprintf("%d rounds of traffic %s", n, during), func() error {
		if got := p.completed(); got < target {
			return fmt.Errorf("%d of %d rounds", got, target)
		}
		return nil
	})
}

// diffStats lists the stats whose values differ.
func diffStats(before, after map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if before[k] != after[k] {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, before[k], after[k]))
		}
	}
	return out
}
