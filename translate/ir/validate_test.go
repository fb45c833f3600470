package ir

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"
	"testing"
	"time"
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

// violation is what a test expects of one *ValidationError.
type violation struct {
	kind  Kind
	name  string
	route int
	field string
	err   error  // the sentinel
	msg   string // a part of the message, which logs show
}

func (v violation) String() string {
	return fmt.Sprintf("%s %q route %d field %q: %v (%q)", v.kind, v.name, v.route, v.field, v.err, v.msg)
}

// violations returns the *ValidationErrors that err joins.
func violationsOf(t *testing.T, err error) []*ValidationError {
	t.Helper()
	var out []*ValidationError
	var walk func(error)
	walk = func(err error) {
		var ve *ValidationError
		switch j, ok := err.(interface{ Unwrap() []error }); {
		case errors.As(err, &ve) && ve == err:
			out = append(out, ve)
		case ok:
			for _, e := range j.Unwrap() {
				walk(e)
			}
		default:
			t.Errorf("Validate joined %T %v, not a *ValidationError", err, err)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// wantViolations checks that err is exactly the violations want, in order:
// each matched with errors.Is against its sentinel, read with errors.As
// for its object and field, its message holding the part given.
func wantViolations(t *testing.T, err error, want ...violation) {
	t.Helper()
	got := violationsOf(t, err)
	for _, w := range want {
		if !errors.Is(err, w.err) {
			t.Errorf("errors.Is(Validate(), %v) = false; Validate() = %v", w.err, err)
		}
	}
	var first *ValidationError
	if len(want) > 0 && !errors.As(err, &first) {
		t.Errorf("errors.As(Validate(), *ValidationError) = false; Validate() = %v", err)
	}
	match := func(ve *ValidationError, w violation) bool {
		return ve.Kind == w.kind && ve.Name == w.name && ve.Route == w.route && ve.Field == w.field &&
			errors.Is(ve, w.err) && strings.Contains(ve.Error(), w.msg)
	}
	if len(got) != len(want) {
		t.Fatalf("Validate() = %v\n%d violations, want %d: %v", err, len(got), len(want), want)
	}
	for i, w := range want {
		if ve := got[i]; !match(ve, w) {
			t.Errorf("violation %d: %s %q route %d field %q, %q; want %v", i, ve.Kind, ve.Name, ve.Route, ve.Field, ve.Error(), w)
		}
		if ve := got[i]; errors.Is(ve, ErrBadValue) {
			t.Errorf("violation %d, %q: the generic ErrBadValue; every check has a sentinel of its own", i, ve.Error())
		}
	}
}

func TestValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatalf("the valid IR fails: %v", err)
	}
	const host = "a.example.com"
	policy := &ClusterPolicy{LoadBalancer: LeastRequest}
	for _, tc := range []struct {
		name    string
		breakIt func(*IR)
		want    []violation
	}{
		{"route to an unlisted cluster", func(m *IR) { m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].Cluster = "nope" },
			[]violation{route("Action.Forward.Clusters[0].Cluster", ErrUnlistedCluster, `cluster "nope" is not listed`)}},
		{"route over TLS to an unlisted cluster", func(m *IR) { m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].TLSCluster = "nope" },
			[]violation{route("Action.Forward.Clusters[0].TLSCluster", ErrUnlistedCluster, `cluster "nope" (over TLS) is not listed`)}},
		{"two actions", func(m *IR) { m.VirtualHosts[0].Routes[0].Action.Direct = &DirectResponse{Status: 503} },
			[]violation{route("Action", ErrBadAction, "exactly one of forward, redirect and direct, has 2")}},
		{"no action", func(m *IR) { m.VirtualHosts[0].Routes[0].Action = Action{} },
			[]violation{route("Action", ErrBadAction, "exactly one of forward, redirect and direct, has 0")}},
		{"cluster of an unlisted backend", func(m *IR) { m.Backends = nil },
			[]violation{{KindCluster, "default/a/80", 0, "Backend", ErrUnlistedBackend, `backend "default/a/80" is not listed`}}},
		{"cluster named against its policy", func(m *IR) { m.Clusters[0].Policy = policy },
			[]violation{{KindCluster, "default/a/80", 0, "Name", ErrClusterName, "name should be " + ClusterName("default/a/80", policy) + " for its backend and policy"}}},
		{"hosts out of order", func(m *IR) {
			m.VirtualHosts = append([]*VirtualHost{{Host: "b.example.com"}}, m.VirtualHosts...)
		}, []violation{{KindVirtualHost, host, 0, "", ErrUnsorted, `not sorted: after "b.example.com"`}}},
		{"any depth for an exact host", func(m *IR) { m.VirtualHosts[0].AnyDepth = true },
			[]violation{{KindVirtualHost, host, 0, "AnyDepth", ErrBadHost, `any depth for "a.example.com", which is no *. wildcard`}}},
		{"unlisted certificate", func(m *IR) { m.VirtualHosts[0].Certificate = "default/cert" },
			[]violation{{KindVirtualHost, host, 0, "Certificate", ErrUnlistedCertificate, `certificate "default/cert" is not listed`}}},
		{"TLS terminated without a certificate", func(m *IR) {
			m.VirtualHosts[0].Passthrough = &Passthrough{Cluster: "default/a/80", Terminate: true}
		}, []violation{{KindVirtualHost, host, 0, "Passthrough.Terminate", ErrConflict, "passthrough: terminating TLS needs the host's certificate"}}},
		{"a split of one", func(m *IR) {
			m.VirtualHosts[0].Passthrough = &Passthrough{Split: []PassthroughShare{{Cluster: "default/a/80", Weight: 1}}}
		}, []violation{{KindVirtualHost, host, 0, "Passthrough.Split", ErrConflict, "passthrough: a split needs two clusters or more, not 1 (one is Cluster)"}}},
		{"a cluster and a split", func(m *IR) {
			m.VirtualHosts[0].Passthrough = &Passthrough{Cluster: "default/a/80", Split: []PassthroughShare{{Cluster: "default/a/80", Weight: 1}}}
		}, []violation{{KindVirtualHost, host, 0, "Passthrough.Split", ErrConflict, "passthrough: a passthrough goes to Cluster or to a Split, not both"}}},
		{"a split's zero weight", func(m *IR) {
			m.VirtualHosts[0].Passthrough = &Passthrough{Split: []PassthroughShare{{Cluster: "default/a/80", Weight: 1}, {Cluster: "default/a/80", Weight: 0}}}
		}, []violation{{KindVirtualHost, host, 0, "Passthrough.Split", ErrConflict, `passthrough: cluster "default/a/80": a split needs weights above zero`}}},
		{"a split to an unlisted cluster", func(m *IR) {
			m.VirtualHosts[0].Passthrough = &Passthrough{Split: []PassthroughShare{{Cluster: "default/a/80", Weight: 1}, {Cluster: "nope", Weight: 2}}}
		}, []violation{{KindVirtualHost, host, 0, "Passthrough.Cluster", ErrUnlistedCluster, `passthrough: cluster "nope" is not listed`}}},
		{"regex RE2 refuses", func(m *IR) { m.VirtualHosts[0].Routes[0].Match = Match{PathType: PathRegex, Path: "(a"} },
			[]violation{route("Match.Path", ErrBadRegex, "path regex: error parsing regexp")}},
		{"header value with CR LF", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{RequestHeaders: &HeaderChanges{Set: []Header{{Name: "x-a", Value: "1\r\nx-b: 2"}}}}
		}, []violation{route("Policy.RequestHeaders.Set[0].Value", ErrBadHeader, "policy: header x-a: value holds control characters")}},
		{"header part of an unknown variable", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{RequestHeaders: &HeaderChanges{Set: []Header{{Name: "x-a", Parts: []ValuePart{{Var: "Secret"}}}}}}
		}, []violation{route("Policy.RequestHeaders.Set[0].Parts[0]", ErrBadHeader, `policy: header x-a: unknown variable "Secret"`)}},
		{"a response header in a request header", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{RequestHeaders: &HeaderChanges{Set: []Header{{Name: "x-a", Parts: []ValuePart{{Var: VarResponseHeader, Name: "x-b"}}}}}}
		}, []violation{route("Policy.RequestHeaders.Set[0].Parts[0]", ErrBadHeader, "policy: header x-a: a response header in a request header's value")}},
		{"header text part with CR LF", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ResponseHeaders: &HeaderChanges{AddOnSuccess: []Header{{Name: "x-a", Parts: []ValuePart{{Text: "1\r\n"}}}}}}
		}, []violation{route("Policy.ResponseHeaders.AddOnSuccess[0].Parts[0]", ErrBadHeader, "policy: header x-a: text holds control characters")}},
		{"a request added on success", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{RequestHeaders: &HeaderChanges{AddOnSuccess: []Header{{Name: "x-a", Value: "1"}}}}
		}, []violation{route("Policy.RequestHeaders.AddOnSuccess", ErrConflict, "policy: a request has no status")}},
		{"a request's expiry", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{RequestHeaders: &HeaderChanges{Expires: &Expiry{Seconds: 60}}}
		}, []violation{route("Policy.RequestHeaders.Expires", ErrConflict, "policy: a request has no expiry")}},
		{"an expiry both epoch and max", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ResponseHeaders: &HeaderChanges{Expires: &Expiry{Epoch: true, Max: true}}}
		}, []violation{route("Policy.ResponseHeaders.Expires", ErrConflict, "policy: expiry: more than one")}},
		{"an expiry past a hundred years", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ResponseHeaders: &HeaderChanges{Expires: &Expiry{Seconds: -MaxExpirySeconds - 1}}}
		}, []violation{route("Policy.ResponseHeaders.Expires.Seconds", ErrOutOfRange, "policy: expiry of")}},
		{"a share's header value with CR LF", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].RequestHeaders = &HeaderChanges{Set: []Header{{Name: "x-a", Value: "1\r\nx-b: 2"}}}
		}, []violation{route("Action.Forward.Clusters[0].RequestHeaders.Set[0].Value", ErrBadHeader, "header x-a: value holds control characters")}},
		{"a share's response added on success", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].ResponseHeaders = &HeaderChanges{AddOnSuccess: []Header{{Name: "x-a", Value: "1"}}}
		}, []violation{route("Action.Forward.Clusters[0].ResponseHeaders", ErrConflict, "a share's response headers are changed on every status")}},
		{"a share's response headers beside the route's expiry", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].ResponseHeaders = &HeaderChanges{Set: []Header{{Name: "x-a", Value: "1"}}}
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ResponseHeaders: &HeaderChanges{Expires: &Expiry{Seconds: 60}}}
		}, []violation{route("Action.Forward.Clusters[0].ResponseHeaders", ErrConflict, "a share's response headers beside the route's additions on success or expiry")}},
		{"redirect path regex RE2 refuses", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action = Action{Redirect: &Redirect{Code: 301, PathRegex: &RegexRewrite{Pattern: "(a", Substitution: "/"}}}
		}, []violation{route("Action.Redirect.PathRegex.Pattern", ErrBadRegex, "redirect path regex: error parsing regexp")}},
		{"redirect path regex and path", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action = Action{Redirect: &Redirect{Code: 301, Path: "/a", PathRegex: &RegexRewrite{Pattern: "^(.*)$", Substitution: "/"}}}
		}, []violation{route("Action.Redirect.PathRegex", ErrConflict, "redirect: a path regex and a path")}},
		{"relative redirect to another host", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action = Action{Redirect: &Redirect{Code: 301, Host: "example.com", Path: "/a", Relative: true}}
		}, []violation{route("Action.Redirect.Relative", ErrConflict, "redirect: relative, with a scheme, host")}},
		{"bad redirect code", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Action = Action{Redirect: &Redirect{Code: 200}}
		}, []violation{route("Action.Redirect.Code", ErrOutOfRange, "redirect code 200 is not 301")}},
		{"CIDR that is not one", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{IPRules: &IPRules{Allow: []string{"10.0.0.1/8"}}}
		}, []violation{route("Policy.IPRules.Allow[0]", ErrBadAddress, `"10.0.0.1/8" is not a canonical CIDR`)}},
		{"endpoint that is no address", func(m *IR) { m.Backends[0].Endpoints[0].Address = "host.example" },
			[]violation{{KindBackend, "default/a/80", 0, "Endpoints[0].Address", ErrBadAddress, `endpoint "host.example"`}}},
		{"affinity cookie name that is no token", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{Affinity: &SessionAffinity{Cookie: "a b"}}
		}, []violation{route("Policy.Affinity.Cookie", ErrBadHeader, `affinity cookie name "a b" is not a token`)}},
		{"proxy headers without the port clients reach", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ProxyHeaders: ProxyHeadersSet}
		}, []violation{{KindListener, "http", 0, "Downstream.ForwardedPort", ErrOutOfRange, "forwarded port 0"}}},
		{"a forwarded port with the client's headers as sent", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ForwardedPort: 80}
		}, []violation{{KindListener, "http", 0, "Downstream.ForwardedPort", ErrConflict, "forwarded port without proxy headers"}}},
		{"unknown proxy headers", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ProxyHeaders: "some", ForwardedPort: 80}
		}, []violation{{KindListener, "http", 0, "Downstream.ProxyHeaders", ErrUnknownValue, `proxy headers "some"`}}},
		{"PROXY protocol peers without the PROXY protocol, one no CIDR", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ProxyProtocolFrom: "10.0.0.0/8,10.0.0.1/8"}
		}, []violation{
			{KindListener, "http", 0, "Downstream.ProxyProtocolFrom", ErrConflict, "without the PROXY protocol"},
			{KindListener, "http", 0, "Downstream.ProxyProtocolFrom", ErrBadAddress, `peer CIDR "10.0.0.1/8"`},
		}},
		{"affinity cookie attribute with a ;", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{Affinity: &SessionAffinity{Cookie: "a", Path: "/a; Domain=evil.example"}}
		}, []violation{route("Policy.Affinity.Path", ErrBadHeader, `affinity cookie attribute "/a; Domain=evil.example"`)}},
		{"a session ticket key on a plain listener, and short", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{SessionTicketKey: make([]byte, 48)}
		}, []violation{
			{KindListener, "http", 0, "Downstream", ErrConflict, "TLS settings on a listener of protocol HTTP"},
			{KindListener, "http", 0, "Downstream.SessionTicketKey", ErrOutOfRange, "a session ticket key of 48 bytes, not 80"},
		}},
		{"a PROXY protocol timeout without the PROXY protocol", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{ProxyProtocolTimeout: Duration(time.Second)}
		}, []violation{{KindListener, "http", 0, "Downstream.ProxyProtocolTimeout", ErrConflict, "a PROXY protocol timeout of 1s without the PROXY protocol"}}},
		{"a session ticket key with tickets off", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{SessionTicketKey: make([]byte, SessionTicketKeyBytes), NoSessionTickets: true}
		}, []violation{
			{KindListener, "http", 0, "Downstream", ErrConflict, "TLS settings on a listener of protocol HTTP"},
			{KindListener, "http", 0, "Downstream.SessionTicketKey", ErrConflict, "with session tickets off"},
		}},
		{"access log format without its newline", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{AccessLog: &AccessLog{Format: "%RESPONSE_CODE%"}}
		}, []violation{{KindListener, "http", 0, "Downstream.AccessLog.Format", ErrBadFormat, "without its newline"}}},
		{"access log to a file", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{AccessLog: &AccessLog{Format: "%RESPONSE_CODE%\n", Path: "/var/log/envoy.log"}}
		}, []violation{{KindListener, "http", 0, "Downstream.AccessLog.Path", ErrUnknownValue, `access log path "/var/log/envoy.log"`}}},
		{"access log JSON format that is no object", func(m *IR) {
			m.Listeners[0].Downstream = &Downstream{AccessLog: &AccessLog{JSON: `["%RESPONSE_CODE%"]`}}
		}, []violation{{KindListener, "http", 0, "Downstream.AccessLog.JSON", ErrBadFormat, "no JSON object"}}},
		{"tracing to no collector", func(m *IR) {
			m.Listeners[0].Tracing = &Tracing{CollectorHost: "http://otel", CollectorPort: 0, Ratio: 2}
		}, []violation{
			{KindListener, "http", 0, "Tracing.CollectorHost", ErrBadHost, `collector host "http://otel"`},
			{KindListener, "http", 0, "Tracing.CollectorPort", ErrOutOfRange, "collector port 0"},
			{KindListener, "http", 0, "Tracing.Ratio", ErrOutOfRange, "sampling ratio 2"},
		}},
		{"access log name with a quote", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Log = &RouteLog{Upstream: "a'b", CanaryCluster: "c"}
		}, []violation{route("Log.Upstream", ErrBadName, `access log name "a'b"`), route("Log.CanaryUpstream", ErrConflict, "canary's cluster without")}},
		{"request metrics path with a control character", func(m *IR) {
			m.VirtualHosts[0].Routes[0].Log = &RouteLog{Namespace: "default", Path: "/a\nb"}
		}, []violation{route("Log.Path", ErrBadName, `request metrics path "/a\nb"`)}},
		{"local reply status out of range", func(m *IR) {
			m.Listeners[0].LocalReplyCodes = &LocalReplyCodes{UpstreamFailure: 502, ConnectTimeout: 999}
		}, []violation{{KindListener, "http", 0, "LocalReplyCodes.ConnectTimeout", ErrOutOfRange, "local reply status 999"}}},
		{"local reply codes that change nothing", func(m *IR) { m.Listeners[0].LocalReplyCodes = &LocalReplyCodes{} },
			[]violation{{KindListener, "http", 0, "LocalReplyCodes", ErrNoOp, "local reply codes that change nothing"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.breakIt(m)
			wantViolations(t, m.Validate(), tc.want...)
		})
	}
}

// TestValidationErrorReads: the message of a violation, which logs show,
// names the object and says what is wrong; the sentinel and the cause
// underneath both match.
func TestValidationErrorReads(t *testing.T) {
	m := valid()
	m.VirtualHosts[0].Routes[0].Match = Match{PathType: PathRegex, Path: "(a"}
	m.Clusters[0].Backend = "default/b/80"
	err := m.Validate()
	want := `virtual host "a.example.com" route 0: path regex: error parsing regexp: missing closing ): ` + "`(a`" + "\n" +
		`cluster default/a/80: backend "default/b/80" is not listed` + "\n" +
		`cluster default/a/80: name should be default/b/80 for its backend and policy`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v\nwant %s", err, want)
	}
	if !errors.Is(err, ErrBadRegex) || !errors.Is(err, ErrUnlistedBackend) || !errors.Is(err, ErrClusterName) {
		t.Error("a sentinel of the three violations does not match")
	}
	if errors.Is(err, ErrUnlistedCluster) {
		t.Error("ErrUnlistedCluster matches, which no violation is")
	}
	var cause *syntax.Error
	if !errors.As(err, &cause) || cause.Code != syntax.ErrMissingParen {
		t.Errorf("the regexp's own error is not underneath: %v", cause)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Kind != KindRoute || ve.Name != "a.example.com" || ve.Field != "Match.Path" {
		t.Errorf("errors.As gives %+v, want the route's violation first", ve)
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
