package gatewayapi_test

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestBuilderHandsOutUnchangedValues holds the Builder to the IR's
// contract: the same IR while nothing it reads changed; after a Route
// change, the same backends and clusters (whose Services and
// EndpointSlices did not change) and the same routes of the other
// Routes; after an EndpointSlice change, a new backend for that Service
// alone. Each equals a fresh build.
func TestBuilderHandsOutUnchangedValues(t *testing.T) {
	st, err := kube.LoadState("testdata/basic.yaml", kube.ClassFilter{WatchClassless: true})
	if err != nil {
		t.Fatal(err)
	}
	b := gatewayapi.NewBuilder(goldenOptions)
	first := b.Build(st)
	if b.Build(st) != first {
		t.Fatal("an unchanged State gave a new IR")
	}

	next := *st
	g := *st.Gateway
	g.HTTPRoutes = slices.Clone(g.HTTPRoutes)
	for i, r := range g.HTTPRoutes {
		if r.Name == "shop" {
			r = r.DeepCopy()
			r.Spec.Hostnames[0] = "store.example.com"
			g.HTTPRoutes[i] = r
		}
	}
	next.Gateway = &g
	second := b.Build(&next)
	if second == first {
		t.Fatal("a changed HTTPRoute gave the same IR")
	}
	if !slices.Equal(second.Backends, first.Backends) || !slices.Equal(second.Clusters, first.Clusters) {
		t.Error("a Route change made new backends or clusters for unchanged Services")
	}
	// The unchanged Route's routes are the same values (the catch-all
	// host is its alone).
	if first.VirtualHosts[0].Host != "*" || second.VirtualHosts[0].Host != "*" || !slices.Equal(second.VirtualHosts[0].Routes, first.VirtualHosts[0].Routes) {
		t.Error("a Route change made new routes for another, unchanged Route")
	}
	sameAsFresh(t, b, second, &next)

	third := next
	third.EndpointSlices = maps.Clone(next.EndpointSlices)
	v1 := types.NamespacedName{Namespace: "default", Name: "shop-v1"}
	changed := *third.EndpointSlices[v1][0]
	changed.Ready = []string{"10.0.0.9"}
	third.EndpointSlices[v1] = []*kube.EndpointSlice{&changed}
	out := b.Build(&third)
	for i, be := range out.Backends {
		if fresh := be.Service == v1; fresh == (be == second.Backends[i]) {
			t.Errorf("backend %s: new %t, want new only for the changed Service", be.Name, be != second.Backends[i])
		}
	}
	sameAsFresh(t, b, out, &third)
}

// goldenObjects are every golden case's objects (of two of one name, the
// later file's).
func goldenObjects(t *testing.T) kube.Objects {
	t.Helper()
	var objs kube.Objects
	for _, input := range goldenCases(t) {
		f, err := os.Open(input)
		if err != nil {
			t.Fatal(err)
		}
		err = kube.DecodeManifests(f, input, &objs)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// sameAsFresh compares the Builder's IR and status with a fresh build's.
func sameAsFresh(t *testing.T, b *gatewayapi.Builder, got any, st *kube.State) {
	t.Helper()
	want, status := gatewayapi.BuildWithStatus(st, goldenOptions)
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("the Builder's IR differs from a fresh build's:\n got %s\nwant %s", g, w)
	}
	if g, w := mustJSON(t, b.Status()), mustJSON(t, status); g != w {
		t.Errorf("the Builder's status differs from a fresh build's:\n got %s\nwant %s", g, w)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := envoy.IndentJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestBuilderMatchesFreshBuild runs a random series of changes over every
// golden case's objects at once (of two of one name, the later file's),
// as sources make them (changed objects and lists are new values), and
// holds the Builder's IR and status to a fresh build's after each.
func TestBuilderMatchesFreshBuild(t *testing.T) {
	objs := goldenObjects(t)
	st := objs.State(kube.ClassFilter{WatchClassless: true})
	b := gatewayapi.NewBuilder(goldenOptions)
	rng := rand.New(rand.NewSource(1))
	for step := 0; step < 500; step++ {
		next := *st
		g := *st.Gateway
		next.Gateway = &g
		switch rng.Intn(5) {
		case 0: // edit an HTTPRoute: drop its last rule
			if len(g.HTTPRoutes) > 0 {
				g.HTTPRoutes = slices.Clone(g.HTTPRoutes)
				i := rng.Intn(len(g.HTTPRoutes))
				r := g.HTTPRoutes[i].DeepCopy()
				if n := len(r.Spec.Rules); n > 0 {
					r.Spec.Rules = r.Spec.Rules[:n-1]
				}
				g.HTTPRoutes[i] = r
			}
		case 1: // delete a Service
			next.Services = maps.Clone(st.Services)
			for name := range next.Services {
				if rng.Intn(4) == 0 {
					delete(next.Services, name)
					break
				}
			}
		case 2: // change a Service's endpoints
			next.EndpointSlices = maps.Clone(st.EndpointSlices)
			for name, list := range next.EndpointSlices {
				s := *list[0]
				s.Ready = append(slices.Clone(s.Ready), fmt.Sprintf("10.9.%d.%d", step/250, step%250))
				next.EndpointSlices[name] = []*kube.EndpointSlice{&s}
				break
			}
		case 3: // drop a ReferenceGrant
			if len(g.ReferenceGrants) > 0 {
				g.ReferenceGrants = slices.Delete(slices.Clone(g.ReferenceGrants), 0, 1)
			}
		default: // edit a GRPCRoute or nothing at all
			if len(g.GRPCRoutes) > 0 && rng.Intn(2) == 0 {
				g.GRPCRoutes = slices.Clone(g.GRPCRoutes)
				r := g.GRPCRoutes[0].DeepCopy()
				r.Spec.Hostnames = append(r.Spec.Hostnames, gwapiv1.Hostname(fmt.Sprintf("g%d.example.com", step)))
				g.GRPCRoutes[0] = r
			} else {
				next.Gateway = st.Gateway
			}
		}
		st = &next
		sameAsFresh(t, b, b.Build(st), st)
		if t.Failed() {
			t.Fatalf("step %d", step)
		}
	}
}

// TestBuilderFollowsBackendTLS: a Route's routes are made again when
// what its backends' BackendTLSPolicies read changes (a CA ConfigMap
// gone, then a policy gone), never handed out as the last build made
// them: each build equals a fresh one.
func TestBuilderFollowsBackendTLS(t *testing.T) {
	st := loadCase(t, "testdata/backendtls.yaml")
	b := gatewayapi.NewBuilder(goldenOptions)
	first := b.Build(st)

	withoutCA := *st
	withoutCA.ConfigMaps = maps.Clone(st.ConfigMaps)
	delete(withoutCA.ConfigMaps, types.NamespacedName{Namespace: "default", Name: "backend-ca"})
	second := b.Build(&withoutCA)
	if second == first {
		t.Fatal("a CA ConfigMap's removal gave the same IR")
	}
	sameAsFresh(t, b, second, &withoutCA)

	withoutPolicy := withoutCA
	g := *st.Gateway
	g.BackendTLSPolicies = slices.DeleteFunc(slices.Clone(g.BackendTLSPolicies), func(p *gwapiv1.BackendTLSPolicy) bool { return p.Name == "no-ca" })
	withoutPolicy.Gateway = &g
	sameAsFresh(t, b, b.Build(&withoutPolicy), &withoutPolicy)
}

// TestBuilderKeepsClientCertificates: a listener's client-certificate
// validation is the very same value after a change elsewhere, so that
// the renderer keeps its hosts' filter chains.
func TestBuilderKeepsClientCertificates(t *testing.T) {
	st := loadCase(t, "testdata/clientcert.yaml")
	b := gatewayapi.NewBuilder(goldenOptions)
	first := b.Build(st)
	next := *st
	next.Services = maps.Clone(st.Services) // a change the validations do not read
	second := b.Build(&next)
	if second == first {
		t.Fatal("a new Services map gave the same IR")
	}
	checked := 0
	for i, vh := range second.VirtualHosts {
		if vh.ClientCert == nil {
			continue
		}
		checked++
		if vh.ClientCert != first.VirtualHosts[i].ClientCert {
			t.Errorf("host %s: a new client-certificate validation though nothing it reads changed", vh.Host)
		}
	}
	if checked == 0 {
		t.Fatal("no host of the clientcert case validates clients")
	}
	sameAsFresh(t, b, second, &next)
}

// incrementalGateway is a Gateway of its own hostnames beside the golden
// cases' (whose listeners' groups hold GRPCRoutes, TLSRoutes and
// wildcards): an exact and a wildcard HTTP listener, an HTTPS one with
// the https case's certificate, so that HTTPRoutes of hosts by name are
// edited in place there.
const incrementalGateway = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: incr, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners:
  - {name: a, port: 8080, protocol: HTTP, hostname: a.incr.example.com, allowedRoutes: {namespaces: {from: All}}}
  - {name: http, port: 8080, protocol: HTTP, hostname: "*.incr.example.com", allowedRoutes: {namespaces: {from: All}}}
  - name: https
    port: 8443
    protocol: HTTPS
    hostname: "*.incr.example.com"
    tls: {certificateRefs: [{name: tls-cert}]}
    allowedRoutes: {namespaces: {from: All}}
`

// incrListenerA is the incr Gateway's first listener, which the series
// takes away and puts back.
var incrListenerA gwapiv1.Listener

// TestBuilderEditsRoutesAsFreshBuilds runs a long random series of
// HTTPRoute changes (edits of hostnames and rules, hostnames moved
// between Routes, Routes added and deleted, several Routes of one host
// ordered by precedence and age, Routes not attached, wildcard
// hostnames that the Builder does not edit in place), with now and then
// a change of something else (a Service gone or back, a Gateway's status
// written, its spec changed), and holds
// the Builder's IR and status to a fresh build's after each step; the
// values of the hosts a change did not touch stay the same.
func TestBuilderEditsRoutesAsFreshBuilds(t *testing.T) {
	objs := goldenObjects(t)
	if err := kube.DecodeManifests(strings.NewReader(incrementalGateway), "incr", &objs); err != nil {
		t.Fatal(err)
	}
	st := objs.State(kube.ClassFilter{WatchClassless: true})
	for _, gw := range st.Gateway.Gateways {
		if gw.Name == "incr" {
			incrListenerA = gw.Spec.Listeners[0]
		}
	}
	rng := rand.New(rand.NewSource(7))
	hosts := []gwapiv1.Hostname{"a.incr.example.com", "b.incr.example.com", "c.incr.example.com", "d.x.incr.example.com",
		"e.incr.example.com", "other.example.org", "*.w.incr.example.com", "B.incr.example.com"}
	services := []string{"shop-v1", "shop-v2", "missing"}
	paths := []string{"/", "/a", "/a/b", "/b", "/a/"}
	gwNamespace, https := gwapiv1.Namespace("default"), gwapiv1.SectionName("https")
	random := func(name string) *gwapiv1.HTTPRoute {
		r := &gwapiv1.HTTPRoute{}
		r.Namespace, r.Name = []string{"default", "team"}[rng.Intn(2)], name
		r.CreationTimestamp.Time = time.Date(2026, 1, 1+rng.Intn(3), 0, 0, 0, 0, time.UTC)
		r.Spec.ParentRefs = []gwapiv1.ParentReference{{Name: "incr", Namespace: &gwNamespace}}
		if rng.Intn(4) == 0 {
			r.Spec.ParentRefs[0].SectionName = &https
		}
		for range 1 + rng.Intn(2) {
			r.Spec.Hostnames = append(r.Spec.Hostnames, hosts[rng.Intn(len(hosts)-2)])
		}
		if rng.Intn(10) == 0 {
			r.Spec.Hostnames = append(r.Spec.Hostnames, hosts[len(hosts)-2+rng.Intn(2)])
		}
		for range 1 + rng.Intn(3) {
			r.Spec.Rules = append(r.Spec.Rules, randomRule(rng, paths, services))
		}
		return r
	}
	g := *st.Gateway
	for i := range 30 {
		g.HTTPRoutes = append(g.HTTPRoutes, random(fmt.Sprintf("incr-%d", i)))
	}
	st.Gateway = &g

	b := gatewayapi.NewBuilder(goldenOptions)
	b.Build(st)
	added := 30
	for step := range 1000 {
		next := *st
		g := *st.Gateway
		next.Gateway = &g
		g.HTTPRoutes = slices.Clone(g.HTTPRoutes)
		// The series' own Routes, so that the other Gateways' hosts are
		// never touched (TestBuilderMatchesFreshBuild edits theirs).
		pick := func() int {
			for {
				if i := rng.Intn(len(g.HTTPRoutes)); strings.HasPrefix(g.HTTPRoutes[i].Name, "incr-") {
					return i
				}
			}
		}
		i := pick()
		switch op := rng.Intn(12); {
		case op < 3: // a hostname changed
			r := g.HTTPRoutes[i].DeepCopy()
			if len(r.Spec.Hostnames) > 0 {
				r.Spec.Hostnames[rng.Intn(len(r.Spec.Hostnames))] = hosts[rng.Intn(len(hosts))]
			}
			g.HTTPRoutes[i] = r
		case op < 5: // a rule added, dropped or changed
			r := g.HTTPRoutes[i].DeepCopy()
			switch n := len(r.Spec.Rules); {
			case n > 1 && rng.Intn(2) == 0:
				k := rng.Intn(n)
				r.Spec.Rules = slices.Delete(r.Spec.Rules, k, k+1)
			case n > 0 && rng.Intn(2) == 0:
				r.Spec.Rules[rng.Intn(n)] = randomRule(rng, paths, services)
			default:
				r.Spec.Rules = append(r.Spec.Rules, randomRule(rng, paths, services))
			}
			g.HTTPRoutes[i] = r
		case op < 6: // a hostname moved to another Route
			j := pick()
			from, to := g.HTTPRoutes[i].DeepCopy(), g.HTTPRoutes[j].DeepCopy()
			if i != j && len(from.Spec.Hostnames) > 0 {
				to.Spec.Hostnames = append(to.Spec.Hostnames, from.Spec.Hostnames[0])
				from.Spec.Hostnames = from.Spec.Hostnames[1:]
				g.HTTPRoutes[i], g.HTTPRoutes[j] = from, to
			}
		case op < 7: // a Route added, in name order (as a State's list is) or at the end, maybe another edited too
			added++
			if rng.Intn(2) == 0 {
				r := g.HTTPRoutes[i].DeepCopy()
				r.Spec.Rules = append(r.Spec.Rules, randomRule(rng, paths, services))
				g.HTTPRoutes[i] = r
			}
			g.HTTPRoutes = append(g.HTTPRoutes, random(fmt.Sprintf("incr-%d", added)))
			if rng.Intn(4) > 0 {
				slices.SortFunc(g.HTTPRoutes, func(a, c *gwapiv1.HTTPRoute) int {
					return cmp.Or(cmp.Compare(a.Namespace, c.Namespace), cmp.Compare(a.Name, c.Name))
				})
			}
		case op < 8: // a Route deleted
			if len(g.HTTPRoutes) > 40 {
				g.HTTPRoutes = slices.Delete(g.HTTPRoutes, i, i+1)
			}
		case op < 9: // a Route's parentRef moved to the other listener, or off ours
			r := g.HTTPRoutes[i].DeepCopy()
			switch ref := &r.Spec.ParentRefs[0]; {
			case ref.Name != "incr":
				ref.Name = "incr"
			case ref.SectionName == nil:
				ref.SectionName = &https
			case rng.Intn(2) == 0:
				ref.SectionName = nil
			default:
				ref.Name = "not-ours"
			}
			g.HTTPRoutes[i] = r
		case op < 10: // two Routes changed at once
			for range 2 {
				k := pick()
				r := g.HTTPRoutes[k].DeepCopy()
				r.Spec.Rules = append(r.Spec.Rules, randomRule(rng, paths, services))
				g.HTTPRoutes[k] = r
			}
		case op < 11: // the same objects in new lists, a Gateway's and Routes' status written (new objects of the same spec)
			for range rng.Intn(3) {
				k := pick()
				written := g.HTTPRoutes[k].DeepCopy()
				written.Status.Parents = append(written.Status.Parents, gwapiv1.RouteParentStatus{ControllerName: "example.com/written"})
				g.HTTPRoutes[k] = written
			}
			g.Gateways = slices.Clone(g.Gateways)
			k := rng.Intn(len(g.Gateways))
			written := g.Gateways[k].DeepCopy()
			written.Status.Listeners = append(written.Status.Listeners, gwapiv1.ListenerStatus{Name: "written", AttachedRoutes: int32(step)})
			if written.Name == "incr" && rng.Intn(3) == 0 {
				// Its spec changed too, the generation not (as in a
				// file): listener a taken away or put back.
				if written.Spec.Listeners[0].Name == "a" {
					written.Spec.Listeners = written.Spec.Listeners[1:]
				} else {
					written.Spec.Listeners = append([]gwapiv1.Listener{incrListenerA}, written.Spec.Listeners...)
				}
			}
			g.Gateways[k] = written
		default: // something other than a Route: a Service gone or back
			next.Services = maps.Clone(st.Services)
			name := types.NamespacedName{Namespace: "default", Name: "shop-v2"}
			if next.Services[name] != nil {
				delete(next.Services, name)
			} else {
				next.Services[name] = objs.State(kube.ClassFilter{WatchClassless: true}).Services[name]
			}
		}
		before, edits := b.Build(st), gatewayapi.EditsOf(b)
		was := b.Status()
		st = &next
		got := b.Build(st)
		sameAsFresh(t, b, got, st)
		if t.Failed() {
			t.Fatalf("step %d", step)
		}
		// The account of the HTTPRoutes' status: every entry but those
		// it names is the last status's.
		if now := b.Status(); now.HTTPRoutesSince != nil {
			if reflect.ValueOf(now.HTTPRoutesSince).UnsafePointer() != reflect.ValueOf(was.HTTPRoutes).UnsafePointer() {
				t.Fatalf("step %d: the HTTPRoutes' status is accounted against another map than the last status's", step)
			}
			for _, m := range []map[string]gwapiv1.HTTPRouteStatus{was.HTTPRoutes, now.HTTPRoutes} {
				for key := range m {
					if !slices.Contains(now.HTTPRoutesChanged, key) && !reflect.DeepEqual(was.HTTPRoutes[key], now.HTTPRoutes[key]) {
						t.Fatalf("step %d: HTTPRoute %s's status changed, and the account does not name it", step, key)
					}
				}
			}
		}
		if gatewayapi.EditsOf(b) == edits {
			continue
		}
		// Edited in place: the other Gateways' hosts are the same values.
		for _, vh := range got.VirtualHosts {
			if !strings.HasSuffix(vh.Host, "incr.example.com") && vh.Host != "other.example.org" && hostIn(before, vh.Host) != vh {
				t.Fatalf("step %d: host %s, which the change did not touch, is a new value", step, vh.Host)
			}
		}
	}
	n := gatewayapi.EditsOf(b)
	t.Logf("%d of 1000 changes edited the last build in place", n)
	if n < 400 {
		t.Errorf("%d of 1000 builds edited the last one in place: the series hardly tests it", n)
	}
}

// hostIn is the virtual host of a name in m, nil when none.
func hostIn(m *ir.IR, name string) *ir.VirtualHost {
	for _, vh := range m.VirtualHosts {
		if vh.Host == name {
			return vh
		}
	}
	return nil
}

// randomRule is a rule of one or two path matches to a Service (or a
// missing one).
func randomRule(rng *rand.Rand, paths, services []string) gwapiv1.HTTPRouteRule {
	var rule gwapiv1.HTTPRouteRule
	for range 1 + rng.Intn(2) {
		kind := []gwapiv1.PathMatchType{gwapiv1.PathMatchPathPrefix, gwapiv1.PathMatchExact}[rng.Intn(2)]
		path := paths[rng.Intn(len(paths))]
		rule.Matches = append(rule.Matches, gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: &kind, Value: &path}})
	}
	port := gwapiv1.PortNumber(80)
	rule.BackendRefs = []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{
		Name: gwapiv1.ObjectName(services[rng.Intn(len(services))]), Port: &port}}}}
	return rule
}
