package xds

import (
	"context"
	"strings"
	"testing"
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// The protocol-level NACK test: a scripted client rejects a version, and
// the server must not send it again, must count and log the NACK with the
// node and the error, must report it in CSDS, and must send the next
// version when there is one. Whether a resend happened is decided without
// any clock: the server handles a stream's requests in order, so after the
// NACK the client subscribes to another type, and a resend of the rejected
// version would reach the client before the answer to that subscription.
func TestNACKIsNotAnsweredWithTheRejectedVersion(t *testing.T) {
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			ts := startServer(t)
			f := fixture{listenerPort: 10001, clusters: map[string][]string{"a": {"127.0.0.1:1"}}}
			ts.publish(t, f)
			nodeID := "scripted-" + protocol
			c := dialScripted(ctx, t, ts, nodeID, delta)

			c.subscribe(resource.ListenerType)
			v1 := c.expect(resource.ListenerType)
			c.ack(v1)

			f.listenerPort = 10002
			ts.publish(t, f)
			v2 := c.expect(resource.ListenerType)
			if v2.version == v1.version {
				t.Fatalf("second version %s equals the first", v2.version)
			}
			const reason = "scripted client rejects this listener"
			c.nack(v2, v1, reason)

			// The ordering probe: anything the server sends because of the
			// NACK is sent before its answer to this new subscription.
			c.subscribe(resource.ClusterType)
			if got := c.recv(); got.typeURL != resource.ClusterType {
				t.Fatalf("after the NACK the server sent %s version %s, want the cluster response (the rejected version was %s)",
					got.typeURL, got.version, v2.version)
			}

			if got := ts.counter(t, "nacks", "listener", protocol); got != 1 {
				t.Errorf("nacks_total{type=listener,protocol=%s} = %v, want 1", protocol, got)
			}
			if got := ts.counter(t, "acks", "listener", protocol); got != 1 {
				t.Errorf("acks_total{type=listener,protocol=%s} = %v, want 1", protocol, got)
			}
			if lines := ts.logs.lines("NACK", "node="+nodeID, reason, "version="+v2.version); len(lines) != 1 {
				t.Errorf("want one log line for the NACK with node, error and version; got %d:\n%s", len(lines), ts.logs.String())
			}
			checkCSDSRejection(t, ts, nodeID, v1, v2.version, reason)
			if !strings.Contains(ts.scrape(t), `ingress_xds_nacks_total{protocol="`+protocol+`",type="listener"} 1`) {
				t.Error("/metrics does not show the NACK")
			}

			// A new version is sent as soon as it exists.
			f.listenerPort = 10003
			ts.publish(t, f)
			v3 := c.expect(resource.ListenerType)
			if v3.version == v2.version || v3.version != ts.Snapshot().GetVersion(resource.ListenerType) {
				t.Fatalf("after the fix got version %s, want the current %s", v3.version, ts.Snapshot().GetVersion(resource.ListenerType))
			}
		})
	}
}

// checkCSDSRejection checks that CSDS shows the node's listeners as NACKED,
// still running what it accepted, with the rejected version and the reason.
func checkCSDSRejection(t *testing.T, ts *testServer, nodeID string, accepted response, rejected, reason string) {
	t.Helper()
	resp, err := ts.clientStatus(&statusservice.ClientStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, cfg := range resp.GetConfig() {
		if cfg.GetNode().GetId() != nodeID {
			continue
		}
		for _, g := range cfg.GetGenericXdsConfigs() {
			if g.GetTypeUrl() != resource.ListenerType {
				continue
			}
			found = true
			if g.GetClientStatus() != adminv3.ClientResourceStatus_NACKED || g.GetConfigStatus() != statusservice.ConfigStatus_ERROR {
				t.Errorf("CSDS listener %s: %v/%v, want NACKED/ERROR", g.GetName(), g.GetClientStatus(), g.GetConfigStatus())
			}
			if want := accepted.resources[g.GetName()]; g.GetVersionInfo() != want {
				t.Errorf("CSDS listener %s runs version %q, want the ACKed %q", g.GetName(), g.GetVersionInfo(), want)
			}
			if es := g.GetErrorState(); es.GetVersionInfo() != rejected || es.GetDetails() != reason {
				t.Errorf("CSDS listener %s error state = %v, want version %s and details %q", g.GetName(), es, rejected, reason)
			}
		}
	}
	if !found {
		t.Errorf("CSDS has no listener for %s: %v", nodeID, resp)
	}
}

// scripted is a hand-driven ADS client, SotW or delta.
type scripted struct {
	t     *testing.T
	node  *corev3.Node
	sotw  discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	delta discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
}

type response struct {
	typeURL, version, nonce string
	// resources maps each resource name to its version: the response's
	// version in SotW, the resource's own in delta.
	resources map[string]string
}

func dialScripted(ctx context.Context, t *testing.T, ts *testServer, nodeID string, delta bool) *scripted {
	t.Helper()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(ts.dial(t))
	c := &scripted{t: t, node: &corev3.Node{Id: nodeID}}
	var err error
	if delta {
		c.delta, err = ads.DeltaAggregatedResources(ctx)
	} else {
		c.sotw, err = ads.StreamAggregatedResources(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *scripted) subscribe(typeURL string) {
	c.t.Helper()
	if c.delta != nil {
		c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{Node: c.node, TypeUrl: typeURL})
		return
	}
	c.sendSotW(&discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: typeURL})
}

func (c *scripted) ack(r response) {
	c.t.Helper()
	if c.delta != nil {
		c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: r.typeURL, ResponseNonce: r.nonce})
		return
	}
	c.sendSotW(&discoveryv3.DiscoveryRequest{TypeUrl: r.typeURL, VersionInfo: r.version, ResponseNonce: r.nonce})
}

// nack rejects r. As Envoy does, a SotW NACK carries the version last
// accepted, not the one rejected.
func (c *scripted) nack(r, lastAccepted response, reason string) {
	c.t.Helper()
	detail := &status.Status{Code: 3, Message: reason}
	if c.delta != nil {
		c.sendDelta(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: r.typeURL, ResponseNonce: r.nonce, ErrorDetail: detail})
		return
	}
	c.sendSotW(&discoveryv3.DiscoveryRequest{TypeUrl: r.typeURL, VersionInfo: lastAccepted.version, ResponseNonce: r.nonce, ErrorDetail: detail})
}

func (c *scripted) sendSotW(req *discoveryv3.DiscoveryRequest) {
	c.t.Helper()
	if err := c.sotw.Send(req); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *scripted) sendDelta(req *discoveryv3.DeltaDiscoveryRequest) {
	c.t.Helper()
	if err := c.delta.Send(req); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *scripted) recv() response {
	c.t.Helper()
	if c.delta != nil {
		resp, err := c.delta.Recv()
		if err != nil {
			c.t.Fatalf("recv: %v", err)
		}
		r := response{typeURL: resp.GetTypeUrl(), version: resp.GetSystemVersionInfo(), nonce: resp.GetNonce(), resources: map[string]string{}}
		for _, res := range resp.GetResources() {
			r.resources[res.GetName()] = res.GetVersion()
		}
		return r
	}
	resp, err := c.sotw.Recv()
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	r := response{typeURL: resp.GetTypeUrl(), version: resp.GetVersionInfo(), nonce: resp.GetNonce(), resources: map[string]string{}}
	for _, a := range resp.GetResources() {
		r.resources[resourceName(a.GetValue())] = resp.GetVersionInfo()
	}
	return r
}

func (c *scripted) expect(typeURL string) response {
	c.t.Helper()
	r := c.recv()
	if r.typeURL != typeURL {
		c.t.Fatalf("got a %s response, want %s", r.typeURL, typeURL)
	}
	return r
}

// resourceName reads the name of a Listener, RouteConfiguration, Cluster,
// ClusterLoadAssignment or Secret from its encoding: for all five it is
// field 1.
func resourceName(b []byte) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			return string(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}
