package envoy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// TestAutoRouteScopesSizes: none below the line, then a power of two of
// about one scope per HostsPerAutoRouteScope hosts, at most MaxRouteScopes.
func TestAutoRouteScopesSizes(t *testing.T) {
	from, per := envoy.AutoRouteScopesFrom, envoy.HostsPerAutoRouteScope
	for _, c := range []struct{ hosts, want int }{
		{0, 0},
		{from - 1, 0},
		{from, pow2Above(from / per)},
		{2 * from, pow2Above(2 * from / per)},
		{20000, pow2Above(20000 / per)},
		{per * envoy.MaxRouteScopes * 4, envoy.MaxRouteScopes},
	} {
		got := envoy.AutoRouteScopes(c.hosts)
		if got != c.want || !envoy.ValidRouteScopes(got) {
			t.Errorf("AutoRouteScopes(%d) = %d, want %d", c.hosts, got, c.want)
		}
		if got > 0 && got < envoy.MaxRouteScopes && c.hosts/got > per {
			t.Errorf("AutoRouteScopes(%d) = %d: %d hosts a scope, more than %d", c.hosts, got, c.hosts/got, per)
		}
	}
}

func pow2Above(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// TestAutoRouteScopesFollowTheHosts: one renderer with
// Options.AutoRouteScopes, given IRs of more and then fewer hosts, renders
// each as a renderer of that fixed number of scopes does from nothing (the
// listener and every route configuration equal), grows as soon as the
// hosts ask for more, and shrinks only once they are half of what would
// keep the number, so that hosts moving about a line do not change it back
// and forth. Each rendering is a valid, consistent snapshot.
func TestAutoRouteScopesFollowTheHosts(t *testing.T) {
	base := readIR(t, goldenIRs(t)["wildcard"])
	from := envoy.AutoRouteScopesFrom
	r := envoy.NewRendererWith(envoy.Options{AutoRouteScopes: true})
	for _, step := range []struct{ hosts, want int }{
		{10, 0},
		{from, envoy.AutoRouteScopes(from)},
		{4 * from, envoy.AutoRouteScopes(4 * from)},
		{3 * from, envoy.AutoRouteScopes(4 * from)}, // fewer, not half
		{from + 1, envoy.AutoRouteScopes(from)},     // half and more
		{from - 1, envoy.AutoRouteScopes(from)},     // below the line, not half
		{from/2 - 10, 0},                            // less than half (the case's wildcards count too)
	} {
		m := withHosts(t, base, step.hosts)
		got, err := r.Render(m)
		if err != nil {
			t.Fatalf("%d hosts: %v", step.hosts, err)
		}
		if r.RouteScopes() != step.want || len(got.ScopedRoutes) != step.want {
			t.Fatalf("%d hosts: %d scopes (%d sent), want %d", step.hosts, r.RouteScopes(), len(got.ScopedRoutes), step.want)
		}
		fresh, err := envoy.NewRendererWith(envoy.Options{RouteScopes: step.want}).Render(m)
		if err != nil {
			t.Fatal(err)
		}
		sameMessages(t, fmt.Sprintf("%d hosts: listeners", step.hosts), fresh.Listeners, got.Listeners)
		sameMessages(t, fmt.Sprintf("%d hosts: routes", step.hosts), fresh.Routes, got.Routes)
		if err := xds.Validate(got); err != nil {
			t.Errorf("%d hosts: invalid: %v", step.hosts, err)
		}
		if _, err := xds.NewSnapshot(got); err != nil {
			t.Errorf("%d hosts: not a consistent snapshot: %v", step.hosts, err)
		}
	}
}

// withHosts is m with its exact virtual hosts replaced by n copies of the
// first, each named hNNNNN.auto.test, in the IR's order.
func withHosts(t *testing.T, m *ir.IR, n int) *ir.IR {
	t.Helper()
	var exact *ir.VirtualHost
	var kept []*ir.VirtualHost
	for _, vh := range m.VirtualHosts {
		if strings.HasPrefix(vh.Host, "*") {
			kept = append(kept, vh)
		} else if exact == nil && len(vh.Aliases) == 0 {
			exact = vh
		}
	}
	if exact == nil {
		t.Fatal("the case has no exact host")
	}
	out := *m
	out.VirtualHosts = kept
	for i := range n {
		vh := *exact
		vh.Host = fmt.Sprintf("h%05d.auto.test", i)
		out.VirtualHosts = append(out.VirtualHosts, &vh)
	}
	slices.SortStableFunc(out.VirtualHosts, func(a, b *ir.VirtualHost) int { return strings.Compare(a.Host, b.Host) })
	if err := out.Validate(); err != nil {
		t.Fatalf("%d hosts: %v", n, err)
	}
	return &out
}

func sameMessages[M proto.Message](t *testing.T, what string, want, got []M) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(want[i], got[i]) {
			t.Errorf("%s: #%d differs from a renderer's of that number of scopes", what, i)
		}
	}
}
