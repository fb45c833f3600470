package envoy_test

import (
	"bytes"
	"encoding/json"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// TestVirtualHostDiscoveryRoutesAlike: for every golden IR, the VHDS form
// (Options.VirtualHostDiscovery) is today's output with the plain-HTTP
// route configurations' virtual hosts moved out, each renamed for its
// route configuration and otherwise the same message, and those route
// configurations saying their virtual hosts come over ADS; everything else
// is the same. It publishes as a consistent, valid snapshot. Rendering
// again after a change of one host hands out the other hosts' very
// messages, so that xDS sends only the changed one.
func TestVirtualHostDiscoveryRoutesAlike(t *testing.T) {
	for name, path := range goldenIRs(t) {
		t.Run(name, func(t *testing.T) {
			m := readIR(t, path)
			inline, split := renderWith(t, m, envoy.Options{}), renderWith(t, m, envoy.Options{VirtualHostDiscovery: true})
			sameList(t, "listeners", inline.Listeners, split.Listeners)
			sameList(t, "clusters", inline.Clusters, split.Clusters)
			sameList(t, "endpoints", inline.Endpoints, split.Endpoints)
			sameList(t, "secrets", inline.Secrets, split.Secrets)
			if len(inline.VirtualHosts) != 0 {
				t.Errorf("without discovery, %d virtual hosts of their own", len(inline.VirtualHosts))
			}
			plain := map[string]bool{}
			for _, l := range m.Listeners {
				plain[l.Name] = l.Protocol == ir.HTTP
			}
			if len(split.Routes) != len(inline.Routes) {
				t.Fatalf("%d route configurations, want %d", len(split.Routes), len(inline.Routes))
			}
			var want []*routev3.VirtualHost
			for i, rc := range inline.Routes {
				got := split.Routes[i]
				if !plain[rc.GetName()] {
					sameMessage(t, "route configuration "+rc.GetName(), rc, got)
					continue
				}
				if len(got.GetVirtualHosts()) != 0 || got.GetVhds().GetConfigSource().GetAds() == nil {
					t.Errorf("route configuration %s: %d virtual hosts inline, VHDS %v; want none, over ADS", rc.GetName(), len(got.GetVirtualHosts()), got.GetVhds())
				}
				rest := proto.Clone(rc).(*routev3.RouteConfiguration)
				rest.VirtualHosts, rest.Vhds = nil, got.GetVhds()
				sameMessage(t, "route configuration "+rc.GetName()+" but its virtual hosts", rest, got)
				for _, vh := range rc.GetVirtualHosts() {
					renamed := proto.Clone(vh).(*routev3.VirtualHost)
					renamed.Name = envoy.VirtualHostResourceName(rc.GetName(), vh.GetName())
					want = append(want, renamed)
				}
			}
			sameList(t, "virtual hosts", want, split.VirtualHosts)
			if err := xds.Validate(split); err != nil {
				t.Errorf("invalid: %v", err)
			}
			if _, err := xds.NewSnapshot(split); err != nil {
				t.Errorf("not a consistent snapshot: %v", err)
			}
		})
	}
}

// TestVirtualHostDiscoveryReusesUnchangedHosts: a render after one host's
// routes changed hands out the same messages for every other host.
func TestVirtualHostDiscoveryReusesUnchangedHosts(t *testing.T) {
	m := readIR(t, goldenIRs(t)["wildcard"])
	if len(m.VirtualHosts) < 2 {
		t.Fatalf("the case has %d virtual hosts, want several", len(m.VirtualHosts))
	}
	r := envoy.NewRendererWith(envoy.Options{VirtualHostDiscovery: true})
	first, err := r.Render(m)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Render(withFirstRouteRenewed(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.VirtualHosts) != len(second.VirtualHosts) {
		t.Fatalf("%d virtual hosts, then %d", len(first.VirtualHosts), len(second.VirtualHosts))
	}
	for i := range first.VirtualHosts {
		if same := first.VirtualHosts[i] == second.VirtualHosts[i]; same != (i != 0) {
			t.Errorf("virtual host %s: handed out again: %v, want %v", first.VirtualHosts[i].GetName(), same, i != 0)
		}
	}
}

// renderWith renders m with a new Renderer of the given options.
func renderWith(t *testing.T, m *ir.IR, o envoy.Options) *envoy.Resources {
	t.Helper()
	res, err := envoy.NewRendererWith(o).Render(m)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// withFirstRouteRenewed is m with a new value for its first virtual
// host's first route (the IR's identity contract: a changed value is a
// new one).
func withFirstRouteRenewed(m *ir.IR) *ir.IR {
	next := *m
	next.VirtualHosts = append([]*ir.VirtualHost(nil), m.VirtualHosts...)
	changed := *next.VirtualHosts[0]
	route := *changed.Routes[0]
	changed.Routes = append([]*ir.Route{&route}, changed.Routes[1:]...)
	next.VirtualHosts[0] = &changed
	return &next
}

func sameList[T proto.Message](t *testing.T, what string, want, got []T) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d, want %d", what, len(got), len(want))
		return
	}
	for i := range want {
		sameMessage(t, what, want[i], got[i])
	}
}

func sameMessage(t *testing.T, what string, want, got proto.Message) {
	t.Helper()
	// As JSON: a per-route configuration is packed with its maps in any
	// order, which proto.Equal would tell apart.
	if w, g := expandedJSON(t, want), expandedJSON(t, got); !bytes.Equal(w, g) {
		t.Errorf("%s: got %s\nwant %s", what, g, w)
	}
}

// expandedJSON is m, its encoded stand-ins expanded, as compact JSON.
func expandedJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	x, err := envoy.Expand(m)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protojson.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return compactJSON(t, raw)
}

func compactJSON(t *testing.T, raw []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
