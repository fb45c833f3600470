package ir

import (
	"strings"
	"testing"
)

// valid is a small IR that keeps the contract; each case breaks it once.
func valid() *IR {
	return &IR{
		Listeners: []*Listener{{Name: "http", Address: "0.0.0.0", Port: 8080, Protocol: HTTP}},
		VirtualHosts: []*VirtualHost{{Host: "a.example.com", Routes: []*Route{{
			Match:  Match{PathType: PathPrefix, Path: "/"},
			Action: Action{Forward: &Forward{Clusters: []WeightedCluster{{Cluster: "default/a/80", Weight: 1}}}},
		}}}},
		Clusters: []*Cluster{{Name: "default/a/80", Backend: "default/a/80"}},
		Backends: []*Backend{{Name: "default/a/80", Port: 80, Endpoints: []Endpoint{{Address: "10.0.0.1", Port: 8080}}}},
	}
}

func TestValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatalf("the valid IR fails: %v", err)
	}
	policy := &ClusterPolicy{LoadBalancer: LeastRequest}
	for _, tc := range []struct {
		name    string
		breakIt func(*IR)
		want    string
	}{
		{"route to an unlisted cluster", func(m *IR) { m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].Cluster = "nope" }, `cluster "nope" is not listed`},
		{"route over TLS to an unlisted cluster", func(m *IR) { m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].TLSCluster = "nope" }, `cluster "nope" (over TLS) is not listed`},
		{"two actions", func(m *IR) { m.VirtualHosts[0].Routes[0].Action.Direct = &DirectResponse{Status: 503} }, "exactly one"},
		{"no action", func(m *IR) { m.VirtualHosts[0].Routes[0].Action = Action{} }, "exactly one"},
		{"cluster of an unlisted backend", func(m *IR) { m.Backends = nil }, `backend "default/a/80" is not listed`},
		{"cluster named against its policy", func(m *IR) { m.Clusters[0].Policy = policy }, "name should be default/a/80/"},
		{"hosts out of order", func(m *IR) {
			m.VirtualHosts = append([]*VirtualHost{{Host: "b.example.com"}}, m.VirtualHosts...)
		}, "not sorted"},
		{"unlisted certificate", func(m *IR) { m.VirtualHosts[0].Certificate = "default/cert" }, "certificate"},
		{"regex RE2 refuses", func(m *IR) { m.VirtualHosts[0].Routes[0].Match = Match{PathType: PathRegex, Path: "(a"} }, "path regex"},
		{"header value with CR LF", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{RequestHeaders: &HeaderChanges{Set: []Header{{Name: "x-a", Value: "1\r\nx-b: 2"}}}}
		}, "control characters"},
		{"bad redirect code", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action = Action{Redirect: &Redirect{Code: 200}}
		}, "redirect code"},
		{"CIDR that is not one", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{IPRules: &IPRules{Allow: []string{"10.0.0.1/8"}}}
		}, "canonical CIDR"},
		{"endpoint that is no address", func(m *IR) { m.Backends[0].Endpoints[0].Address = "host.example" }, "endpoint"},
		{"affinity cookie name that is no token", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{Affinity: &SessionAffinity{Cookie: "a b"}}
		}, "not a token"},
		{"proxy headers without the port clients reach", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ProxyHeaders: ProxyHeadersSet}
		}, "forwarded port 0"},
		{"a forwarded port with the client's headers as sent", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ForwardedPort: 80}
		}, "forwarded port without proxy headers"},
		{"unknown proxy headers", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ProxyHeaders: "some", ForwardedPort: 80}
		}, `proxy headers "some"`},
		{"affinity cookie attribute with a ;", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{Affinity: &SessionAffinity{Cookie: "a", Path: "/a; Domain=evil.example"}}
		}, "affinity cookie attribute"},
		{"local reply status out of range", func(m *IR) {
			m.Listeners[0].LocalReplyCodes = &LocalReplyCodes{UpstreamFailure: 502, ConnectTimeout: 999}
		}, "local reply status 999"},
		{"local reply codes that change nothing", func(m *IR) { m.Listeners[0].LocalReplyCodes = &LocalReplyCodes{} }, "change nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.breakIt(m)
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// A policy cluster is named after its backend and a hash of the policy: the
// same policy gives the same name, another policy another.
func TestClusterName(t *testing.T) {
	a, b := &ClusterPolicy{LoadBalancer: LeastRequest}, &ClusterPolicy{LoadBalancer: Random}
	if got := ClusterName("ns/s/80", nil); got != "ns/s/80" {
		t.Errorf("default policy: %q", got)
	}
	if got := ClusterName("ns/s/80", &ClusterPolicy{}); got != "ns/s/80" {
		t.Errorf("zero policy: %q", got)
	}
	if ClusterName("ns/s/80", a) != ClusterName("ns/s/80", &ClusterPolicy{LoadBalancer: LeastRequest}) {
		t.Error("equal policies named apart")
	}
	if ClusterName("ns/s/80", a) == ClusterName("ns/s/80", b) || !strings.HasPrefix(ClusterName("ns/s/80", a), "ns/s/80/") {
		t.Errorf("policies %q and %q", ClusterName("ns/s/80", a), ClusterName("ns/s/80", b))
	}
}
