package envoy_test

import (
	"bytes"
	"fmt"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/internal/envoytest"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// TestRouteScopesRouteAlike: for every golden IR and a few numbers of
// scopes, the scoped form (Options.RouteScopes) is today's output with the
// plain-HTTP route configuration split: scope i holds, in the same order,
// the virtual hosts one of whose names hashes to i and every wildcard and
// catch-all virtual host, each the same message as in the one configuration,
// and its settings are the one configuration's, the scope header removed
// upstream. The listener routes
// through the scopes, its early header mutation setting the scope;
// everything else is the same. Each publishes as a
// consistent, valid snapshot, and the real Envoy accepts it.
func TestRouteScopesRouteAlike(t *testing.T) {
	var bin string
	if !testing.Short() {
		bin = envoytest.Binary(t)
	}
	for name, path := range goldenIRs(t) {
		t.Run(name, func(t *testing.T) {
			m := readIR(t, path)
			one, err := envoy.NewRenderer().Render(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 4, 16} {
				scoped, err := envoy.NewRendererWith(envoy.Options{RouteScopes: n}).Render(m)
				if err != nil {
					t.Fatal(err)
				}
				sameList(t, "clusters", one.Clusters, scoped.Clusters)
				sameList(t, "endpoints", one.Endpoints, scoped.Endpoints)
				sameList(t, "secrets", one.Secrets, scoped.Secrets)
				checkScopedRoutes(t, m, n, one, scoped)
				if err := xds.Validate(scoped); err != nil {
					t.Errorf("%d scopes: invalid: %v", n, err)
				}
				if _, err := xds.NewSnapshot(scoped); err != nil {
					t.Errorf("%d scopes: not a consistent snapshot: %v", n, err)
				}
				if bin != "" && n == 4 {
					envoytest.Validate(t, bin, scoped)
				}
			}
		})
	}
}

// checkScopedRoutes compares the route configurations and listeners of
// one (no scopes) and scoped (n scopes) renderings of m.
func checkScopedRoutes(t *testing.T, m *ir.IR, n int, one, scoped *envoy.Resources) {
	t.Helper()
	plain := map[string]bool{}
	for _, l := range m.Listeners {
		plain[l.Name] = l.Protocol == ir.HTTP
	}
	hosts := map[string]*ir.VirtualHost{}
	for _, vh := range m.VirtualHosts {
		hosts[vh.Host] = vh
	}
	byName := map[string]*routev3.RouteConfiguration{}
	for _, rc := range scoped.Routes {
		byName[rc.GetName()] = rc
	}
	if len(byName) != len(scoped.Routes) {
		t.Fatalf("%d scopes: route configuration names repeat", n)
	}
	want := 0
	for _, rc := range one.Routes {
		if !plain[rc.GetName()] {
			want++
			sameMessage(t, "route configuration "+rc.GetName(), rc, byName[rc.GetName()])
			continue
		}
		want += n
		if _, ok := byName[rc.GetName()]; ok {
			t.Errorf("%d scopes: the unscoped route configuration %s is still sent", n, rc.GetName())
		}
		for i := range n {
			got := byName[envoy.ScopeRouteName(rc.GetName(), i)]
			if got == nil {
				t.Fatalf("%d scopes: no route configuration for scope %d", n, i)
			}
			settings := proto.Clone(rc).(*routev3.RouteConfiguration)
			settings.VirtualHosts = nil
			settings.Name = got.GetName()
			settings.RequestHeadersToRemove = append(settings.RequestHeadersToRemove, envoy.RouteScopeHeader)
			rest := proto.Clone(got).(*routev3.RouteConfiguration)
			rest.VirtualHosts = nil
			sameMessage(t, "scope "+got.GetName()+"'s settings", settings, rest)
			var wantHosts []*routev3.VirtualHost
			for j, vh := range rc.GetVirtualHosts() {
				if inScope(m.VirtualHosts[j], n, i) {
					wantHosts = append(wantHosts, vh)
				}
			}
			if !slices.Equal(vhostNames(wantHosts), vhostNames(got.GetVirtualHosts())) {
				t.Errorf("%d scopes: scope %d holds %v, want %v", n, i, vhostNames(got.GetVirtualHosts()), vhostNames(wantHosts))
				continue
			}
			for j, vh := range got.GetVirtualHosts() {
				sameButScopeHeader(t, "scope "+got.GetName()+"'s virtual host "+vh.GetName(), wantHosts[j], vh)
			}
		}
	}
	if len(scoped.Routes) != want {
		t.Errorf("%d scopes: %d route configurations, want %d", n, len(scoped.Routes), want)
	}
	if len(one.ScopedRoutes) != 0 {
		t.Errorf("without scopes, %d scopes sent", len(one.ScopedRoutes))
	}
	if len(one.Listeners) != len(scoped.Listeners) {
		t.Fatalf("%d scopes: %d listeners, want %d", n, len(scoped.Listeners), len(one.Listeners))
	}
	for i, l := range one.Listeners {
		if !plain[l.GetName()] {
			sameMessage(t, "listener "+l.GetName(), l, scoped.Listeners[i])
			continue
		}
		hcm := connectionManager(t, scoped.Listeners[i].GetFilterChains()[0].GetFilters()[0].GetTypedConfig())
		if hcm.GetScopedRoutes().GetScopedRds().GetScopedRdsConfigSource().GetAds() == nil || hcm.GetScopedRoutes().GetScopeKeyBuilder().GetFragments()[0].GetHeaderValueExtractor().GetName() != envoy.RouteScopeHeader {
			t.Errorf("%d scopes: listener %s routes through %v", n, l.GetName(), hcm.GetRouteSpecifier())
		}
		// The scopes, over SRDS: scope j keyed "j", with its route
		// configuration.
		if len(scoped.ScopedRoutes) != n {
			t.Fatalf("%d scopes: %d scopes sent", n, len(scoped.ScopedRoutes))
		}
		for j, sc := range scoped.ScopedRoutes {
			name := envoy.ScopeRouteName(l.GetName(), j)
			if key := sc.GetKey().GetFragments(); sc.GetName() != name || sc.GetRouteConfigurationName() != name || len(key) != 1 || key[0].GetStringKey() != strconv.Itoa(j) {
				t.Errorf("%d scopes: scope %d is %v", n, j, sc)
			}
		}
		// The scope's header is set first; the unscoped listener's own
		// early mutations (the original forwarded headers) follow.
		unscoped := connectionManager(t, l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig())
		ext := hcm.GetEarlyHeaderMutationExtensions()
		if len(ext) != 1+len(unscoped.GetEarlyHeaderMutationExtensions()) || !strings.Contains(string(ext[0].GetTypedConfig().GetValue()), envoy.RouteScopeHeader) {
			t.Errorf("%d scopes: listener %s's early header mutations are %v", n, l.GetName(), ext)
		}
		// But for the routes and the scope's header, the same connection
		// manager.
		hcm.RouteSpecifier = unscoped.RouteSpecifier
		hcm.EarlyHeaderMutationExtensions = ext[1:]
		sameMessage(t, "listener "+l.GetName()+"'s connection manager", unscoped, hcm)
	}
}

// sameButScopeHeader is sameMessage but for the scope header the scoped
// form's error pages set on the request they run again (errorpages.go).
func sameButScopeHeader(t *testing.T, what string, want, got proto.Message) {
	t.Helper()
	w, g := expandedJSON(t, want), expandedJSON(t, got)
	stripped := scopeHeaderOption.ReplaceAll(g, nil)
	if len(stripped) != len(g) && bytes.Contains(w, []byte(envoy.RouteScopeHeader)) {
		t.Errorf("%s: the scope header in the unscoped form", what)
	}
	if !bytes.Equal(w, stripped) {
		t.Errorf("%s: got %s\nwant %s", what, stripped, w)
	}
}

// scopeHeaderOption is the scope header's option in compact JSON.
var scopeHeaderOption = regexp.MustCompile(`,\{"header":\{"key":"x-ingress-xds-route-scope","value":"[^"]*"\},"appendAction":"OVERWRITE_IF_EXISTS_OR_ADD"\}`)

// inScope says whether vh's virtual host belongs to scope i of n: by one
// of its names, or in every scope for a wildcard.
func inScope(vh *ir.VirtualHost, n, i int) bool {
	if strings.HasPrefix(vh.Host, "*") {
		return true
	}
	for _, name := range append([]string{vh.Host}, vh.Aliases...) {
		if envoy.RouteScope(name, n) == i {
			return true
		}
	}
	return false
}

func vhostNames(vhs []*routev3.VirtualHost) []string {
	var out []string
	for _, vh := range vhs {
		out = append(out, vh.GetName())
	}
	return out
}

func connectionManager(t *testing.T, a interface {
	GetValue() []byte
}) *hcmv3.HttpConnectionManager {
	t.Helper()
	hcm := &hcmv3.HttpConnectionManager{}
	if err := proto.Unmarshal(a.GetValue(), hcm); err != nil {
		t.Fatal(err)
	}
	return hcm
}

// TestRouteScopeHash: the hash ignores what Envoy's domain matching
// ignores (case, a port, a trailing dot), spreads names over the scopes,
// and is what the CEL expression Envoy evaluates computes: each of its
// regular expressions, run here by Go's RE2 (Envoy's too), gives the bit
// RouteScope gives, for hosts as clients write them.
func TestRouteScopeHash(t *testing.T) {
	for _, n := range []int{1, 2, 64, 1024} {
		if envoy.RouteScope("Cafe.Example.COM:8080", n) != envoy.RouteScope("cafe.example.com.", n) {
			t.Errorf("%d scopes: the scope depends on the case, the port or the trailing dot", n)
		}
	}
	counts := make([]int, 16)
	for i := range 1600 {
		counts[envoy.RouteScope("ingress-"+strconv.Itoa(i)+".ns-"+strconv.Itoa(i%7)+".example.com", 16)]++
	}
	for s, c := range counts {
		if c < 50 || c > 150 {
			t.Errorf("scope %d holds %d of 1,600 hosts: the hash does not spread them", s, c)
		}
	}
	// Numbered names, as the load command's (ing-00042-a.load.test), differ
	// by the order and repetition of their digits, which a count of
	// characters alone does not see (with it, one of 256 scopes held 68
	// of 2,000 such hosts). No scope may hold more than four times its
	// share; with a uniform hash the fullest would hold about twice.
	for _, n := range []int{256, 1024} {
		counts := make([]int, n)
		hosts := 0
		for i := range 4 * n {
			for _, suffix := range []string{"a", "b"} {
				counts[envoy.RouteScope(fmt.Sprintf("ing-%05d-%s.load.test", i, suffix), n)]++
				hosts++
			}
		}
		if most := slices.Max(counts); most > 4*hosts/n {
			t.Errorf("%d numbered hosts over %d scopes: one scope holds %d (a share is %d)", hosts, n, most, hosts/n)
		}
	}
	term := regexp.MustCompile(`request\.host\.matches\('([^']*)'\) == request\.host\.matches\('([^']*)'\) \? ([0-9]+) : 0\)`)
	hosts := []string{"", "a", "cafe.example.com", "CAFE.Example.com", "cafe.example.com:8443", "cafe.example.com.",
		"x-1.y-2.example.org", "ingress-42.bench.example.com", "a:b:c", "[::1]:80", "under_score.example", "0.0.0.0",
		"ing-00011-a.load.test", "ing-00000-a.load.test", "a b.example", "caf\u00e9.example", "short", "x.", ".x", "x..y", "a:80.b"}
	for i := range 200 {
		hosts = append(hosts, "h"+strconv.Itoa(i*7919)+".scopes.example.com")
	}
	for _, n := range []int{2, 64, 1024, 4096} {
		expr := envoy.RouteScopeExpression(n)
		terms := term.FindAllStringSubmatch(expr, -1)
		if len(terms) != bits.TrailingZeros(uint(n)) {
			t.Fatalf("%d scopes: %d terms in %s", n, len(terms), expr)
		}
		for _, host := range hosts {
			got := 0
			for _, m := range terms {
				bit, _ := strconv.Atoi(m[3])
				if regexp.MustCompile(m[1]).MatchString(host) == regexp.MustCompile(m[2]).MatchString(host) {
					got += bit
				}
			}
			if want := envoy.RouteScope(host, n); got != want {
				t.Errorf("%d scopes, Host %q: the expression gives %d, RouteScope %d", n, host, got, want)
			}
		}
	}
	if !envoy.ValidRouteScopes(0) || !envoy.ValidRouteScopes(4096) || envoy.ValidRouteScopes(3) || envoy.ValidRouteScopes(8192) {
		t.Error("ValidRouteScopes takes 0 and powers of two up to 4096 only")
	}
}

// TestRouteScopesReuseUnchangedScopes: a render after one host's routes
// changed hands out the same route configuration for every scope but the
// host's, so that xDS sends Envoy that one alone.
func TestRouteScopesReuseUnchangedScopes(t *testing.T) {
	m := readIR(t, goldenIRs(t)["wildcard"])
	var exact int = -1
	for i, vh := range m.VirtualHosts {
		if !strings.HasPrefix(vh.Host, "*") && len(vh.Aliases) == 0 {
			exact = i
			break
		}
	}
	if exact < 0 {
		t.Fatal("the case has no exact host")
	}
	const n = 8
	r := envoy.NewRendererWith(envoy.Options{RouteScopes: n})
	first, err := r.Render(m)
	if err != nil {
		t.Fatal(err)
	}
	next := *m
	next.VirtualHosts = slices.Clone(m.VirtualHosts)
	changed := *next.VirtualHosts[exact]
	route := *changed.Routes[0] // a new value (the IR's identity contract)
	changed.Routes = append([]*ir.Route{&route}, changed.Routes[1:]...)
	next.VirtualHosts[exact] = &changed
	second, err := r.Render(&next)
	if err != nil {
		t.Fatal(err)
	}
	scope := envoy.ScopeRouteName("ingress_http", envoy.RouteScope(changed.Host, n))
	if len(first.Routes) != len(second.Routes) {
		t.Fatalf("%d route configurations, then %d", len(first.Routes), len(second.Routes))
	}
	for i := range first.Routes {
		name := first.Routes[i].GetName()
		if !strings.HasPrefix(name, "ingress_http/") {
			continue
		}
		if same := first.Routes[i] == second.Routes[i]; same != (name != scope) {
			t.Errorf("route configuration %s: handed out again: %v, want %v", name, same, name != scope)
		}
	}
}

// BenchmarkRouteScopeSpread hashes the load command's hosts
// (ing-00042-a.load.test, two an Ingress) and reports how full the fullest
// scope is and the scope a host shares at the 99th percentile, beside
// the share of a uniform spread (the time is the counting's alone) (docs/benchmarks.md, "A scope hash for
// numbered names").
func BenchmarkRouteScopeSpread(b *testing.B) {
	for _, c := range []struct{ ingresses, scopes int }{{1000, 256}, {1000, 512}, {10000, 1024}, {10000, 4096}} {
		b.Run(fmt.Sprintf("ingresses=%d/scopes=%d", c.ingresses, c.scopes), func(b *testing.B) {
			var hosts []string
			for i := range c.ingresses {
				for _, suffix := range []string{"a", "b"} {
					hosts = append(hosts, fmt.Sprintf("ing-%05d-%s.load.test", i, suffix))
				}
			}
			scopes := make([]int, len(hosts))
			for i, h := range hosts {
				scopes[i] = envoy.RouteScope(h, c.scopes)
			}
			counts := make([]int, c.scopes)
			for b.Loop() {
				clear(counts)
				for _, s := range scopes {
					counts[s]++
				}
			}
			shared := make([]int, 0, len(hosts))
			for _, s := range scopes {
				shared = append(shared, counts[s])
			}
			slices.Sort(shared)
			b.ReportMetric(float64(slices.Max(counts)), "most-in-a-scope")
			b.ReportMetric(float64(shared[len(shared)*99/100]), "p99-host's-scope")
			b.ReportMetric(float64(len(hosts))/float64(c.scopes), "share")
		})
	}
}
