package xds

import (
	"context"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestNodeMatcher(t *testing.T) {
	str := func(m *matcherv3.StringMatcher) []*matcherv3.NodeMatcher {
		return []*matcherv3.NodeMatcher{{NodeId: m}}
	}
	for _, c := range []struct {
		name     string
		matchers []*matcherv3.NodeMatcher
		want     map[string]bool
	}{
		{"none matches all", nil, map[string]bool{"envoy-a": true, "x": true}},
		{"exact", str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "envoy-a"}}), map[string]bool{"envoy-a": true, "envoy-ab": false}},
		{"prefix", str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "envoy-"}}), map[string]bool{"envoy-a": true, "x-envoy-": false}},
		{"suffix ignoring case", str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: "-A"}, IgnoreCase: true}), map[string]bool{"envoy-a": true, "envoy-b": false}},
		{"contains", str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Contains{Contains: "voy"}}), map[string]bool{"envoy-a": true, "x": false}},
		{"regex is whole-string", str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "envoy-[ab]"}}}), map[string]bool{"envoy-a": true, "envoy-ab": false}},
		{"or of matchers", append(
			str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "a"}}),
			str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "b"}})...),
			map[string]bool{"a": true, "b": true, "c": false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			match, err := nodeMatcher(c.matchers)
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range c.want {
				if got := match(id); got != want {
					t.Errorf("match(%q) = %v, want %v", id, got, want)
				}
			}
		})
	}
	_, err := nodeMatcher([]*matcherv3.NodeMatcher{{NodeMetadatas: []*matcherv3.StructMatcher{{}}}})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("metadata matcher: %v, want Unimplemented", err)
	}
	_, err = nodeMatcher(str(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "("}}}))
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad regex: %v, want InvalidArgument", err)
	}
}

// The streaming CSDS call answers each request, over gRPC, and a client is
// known by the identity of its node without the list of its extensions.
//
// The ACK travels on the ADS stream and the query on another connection, so
// nothing orders them: the query may be answered before the server has read
// the ACK. The test waits for an observable sign instead of a clock: the
// server handles a stream's requests one at a time, in order, recording
// each (the ACK included) before it asks the cache for an answer, so once
// the answer to a later subscription on the same stream arrives, the ACK
// has been recorded.
func TestStreamClientStatus(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts := startServer(t)
	ts.publish(t, testFixture())
	c := dialScripted(ctx, t, ts, "streamed", false)
	c.node.Extensions = []*corev3.Extension{{Name: "envoy.filters.http.router"}}
	c.node.Metadata, _ = structpb.NewStruct(map[string]any{"zone": "a"})
	c.subscribe(typeURLFor(t, "cluster"))
	c.ack(c.expect(typeURLFor(t, "cluster")))
	// The ordering probe: listeners are subscribed to and answered, not
	// acknowledged, so CSDS reports no listener for this client.
	c.subscribe(typeURLFor(t, "listener"))
	c.expect(typeURLFor(t, "listener"))

	stream, err := statusservice.NewClientStatusDiscoveryServiceClient(ts.dial(t)).StreamClientStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"streamed", "someone-else"} {
		if err := stream.Send(&statusservice.ClientStatusRequest{NodeMatchers: []*matcherv3.NodeMatcher{{
			NodeId: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: id}},
		}}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if id == "someone-else" {
			if len(resp.GetConfig()) != 0 {
				t.Errorf("matcher for an absent node returned %v", resp)
			}
			continue
		}
		if len(resp.GetConfig()) != 1 {
			t.Fatalf("want one client, got %v", resp)
		}
		cfg := resp.GetConfig()[0]
		if len(cfg.GetNode().GetExtensions()) != 0 || cfg.GetNode().GetMetadata().GetFields()["zone"].GetStringValue() != "a" {
			t.Errorf("node = %v, want its id and metadata without extensions", cfg.GetNode())
		}
		if len(cfg.GetGenericXdsConfigs()) != 2 {
			t.Errorf("want the two clusters, got %v", cfg.GetGenericXdsConfigs())
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
}

func typeURLFor(t *testing.T, name string) string {
	t.Helper()
	u, ok := typeURLOf(name)
	if !ok {
		t.Fatalf("no type %q", name)
	}
	return u
}
