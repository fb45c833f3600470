package xds

import (
	"context"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
)

// callbacks connect go-control-plane's stream events to the client registry,
// the metrics and the logs. What they assume of when and how the server
// calls them is in docs/xds-cache.md ("assumption N" below).
type callbacks struct{ s *Server }

var _ serverv3.Callbacks = callbacks{}

func (c callbacks) OnStreamOpen(_ context.Context, id int64, typeURL string) error {
	c.s.clients.open(streamKey{id: id}, c.s.now())
	c.s.metrics.connected.WithLabelValues(protocolSotW).Inc()
	c.s.log.Debug("xDS stream opened", "stream", id, "protocol", protocolSotW, "type", typeURL)
	return nil
}

// OnStreamClosed comes once per stream, after its watches are cancelled,
// with the node of its first request (assumption 9).
func (c callbacks) OnStreamClosed(id int64, node *corev3.Node) {
	c.s.clients.close(streamKey{id: id})
	c.s.cache.forget(streamKey{id: id})
	c.s.observeClosed(streamKey{id: id}) // observer.go
	c.s.metrics.connected.WithLabelValues(protocolSotW).Dec()
	c.s.log.Info("xDS stream closed", "stream", id, "protocol", protocolSotW, "node", node.GetId())
}

// OnStreamRequest recognises ACKs and NACKs. A SotW NACK carries the version
// the Envoy last accepted, not the one it rejected; the resource cache
// compares that with the current version, finds them different and answers
// at once with the very snapshot just rejected, which the Envoy rejects
// again, in a tight loop for as long as the snapshot stands. Rewriting the
// request's version to the rejected one makes the cache wait instead, until
// a snapshot with different content is published. The request is the one
// go-control-plane then hands to the cache, which is what makes this work
// (assumption 2); and the server calls this for each request of a stream in
// order, before the cache sees it (assumption 1), so what a request answers
// is recorded before anything is sent because of it. A request with a stale
// nonce comes here too, even when the server then ignores it (assumption
// 4): the registry finds no response with that nonce and counts nothing.
//
// The first request of a type on a stream (no nonce yet) has its version
// cleared. An Envoy reconnecting to a restarted control plane names the
// version it runs; if it comes before the first Publish, the cache holds
// the request until a snapshot is set and then answers only if the
// versions differ, which they do not when the cluster did not change: the
// stream would stay silent, the Envoy unknown to CSDS, until the next
// change. Without the version, the first snapshot is sent, and Envoy,
// finding every resource identical, rebuilds nothing. With a snapshot
// already set, the cache answers a new stream anyway.
func (c callbacks) OnStreamRequest(id int64, req *discoveryv3.DiscoveryRequest) error {
	key := streamKey{id: id}
	names := c.s.cache.intern(req.GetTypeUrl(), req.GetResourceNames()) // stream.go
	req.ResourceNames = names                                           // the server subscribes to these (assumption 2)
	c.s.cache.bind(req, key)                                            // makebeforebreak.go
	ans, r := c.s.clients.received(key, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail(), nil, c.s.now())
	c.s.answered(key, req.GetTypeUrl(), ans, r, req.GetErrorDetail())
	if !fullStateInSotw(req.GetTypeUrl()) {
		// Resources of these types are added by partial responses and
		// leave the client when it stops asking for them.
		c.s.clients.keepOnly(key, req.GetTypeUrl(), names)
	}
	switch {
	case ans == answerNACK:
		req.VersionInfo = r.version
	case req.GetResponseNonce() == "":
		req.VersionInfo = ""
	}
	return nil
}

// OnStreamResponse is called just before the response is sent, with the
// message as sent (its nonce, which the ACK will name) and the context of
// the cache's response (assumption 15).
func (c callbacks) OnStreamResponse(ctx context.Context, id int64, req *discoveryv3.DiscoveryRequest, resp *discoveryv3.DiscoveryResponse) {
	// A full response is the whole state of its type, every resource at
	// the response's version; a partial one (routes, load assignments,
	// secrets) adds to what the client holds, each at its own version.
	// A full response's names come from the snapshot, shared by every
	// stream, not decoded from each response (a copy per Envoy of every
	// name).
	r := sentResponse{nonce: resp.GetNonce(), version: resp.GetVersionInfo(), full: true}
	if sent, ok := sentListOf(ctx); ok {
		r.list, r.full = sent.list, sent.full
	}
	c.s.clients.sent(streamKey{id: id}, resp.GetTypeUrl(), r)
	c.s.cache.sentRoutes(streamKey{id: id}, resp.GetTypeUrl(), resp.GetNonce()) // routeacks.go
	c.s.metrics.pushes.WithLabelValues(typeName(resp.GetTypeUrl()), protocolSotW).Inc()
	c.s.metrics.pushedResources.WithLabelValues(typeName(resp.GetTypeUrl()), protocolSotW).Add(float64(len(resp.GetResources())))
	c.s.log.Debug("sent xDS response", "stream", id, "node", req.GetNode().GetId(), "type", resp.GetTypeUrl(),
		"version", resp.GetVersionInfo(), "resources", len(resp.GetResources()), "nonce", resp.GetNonce())
}

func (c callbacks) OnDeltaStreamOpen(_ context.Context, id int64, typeURL string) error {
	c.s.clients.open(streamKey{delta: true, id: id}, c.s.now())
	c.s.metrics.connected.WithLabelValues(protocolDelta).Inc()
	c.s.log.Debug("xDS stream opened", "stream", id, "protocol", protocolDelta, "type", typeURL)
	return nil
}

func (c callbacks) OnDeltaStreamClosed(id int64, node *corev3.Node) {
	c.s.clients.close(streamKey{delta: true, id: id})
	c.s.cache.forget(streamKey{delta: true, id: id})
	c.s.observeClosed(streamKey{delta: true, id: id}) // observer.go
	c.s.metrics.connected.WithLabelValues(protocolDelta).Dec()
	c.s.log.Info("xDS stream closed", "stream", id, "protocol", protocolDelta, "node", node.GetId())
}

// OnStreamDeltaRequest needs no rewrite on a NACK: the delta server records
// what it sent per resource, so it has nothing new to send until the
// snapshot changes. The delta server fills a request's missing node only
// after this call, so only the first request carries it here; the registry
// keeps the first it sees (assumption 9). A reconnecting Envoy's
// initial_resource_versions are what it runs (assumption 12).
func (c callbacks) OnStreamDeltaRequest(id int64, req *discoveryv3.DeltaDiscoveryRequest) error {
	key := streamKey{delta: true, id: id}
	req.ResourceNamesSubscribe = c.s.cache.intern(req.GetTypeUrl(), req.GetResourceNamesSubscribe()) // stream.go
	c.s.cache.bind(req, key)                                                                         // makebeforebreak.go
	ans, r := c.s.clients.received(key, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail(), req.GetInitialResourceVersions(), c.s.now())
	c.s.answered(key, req.GetTypeUrl(), ans, r, req.GetErrorDetail())
	return nil
}

func (c callbacks) OnStreamDeltaResponse(id int64, req *discoveryv3.DeltaDiscoveryRequest, resp *discoveryv3.DeltaDiscoveryResponse) {
	c.s.clients.sent(streamKey{delta: true, id: id}, resp.GetTypeUrl(), sentResponse{
		nonce: resp.GetNonce(), version: resp.GetSystemVersionInfo(), list: c.s.cache.lists.namesOf(resp.GetResources()), removed: resp.GetRemovedResources(),
	})
	c.s.cache.sentRoutes(streamKey{delta: true, id: id}, resp.GetTypeUrl(), resp.GetNonce()) // routeacks.go
	c.s.metrics.pushes.WithLabelValues(typeName(resp.GetTypeUrl()), protocolDelta).Inc()
	c.s.metrics.pushedResources.WithLabelValues(typeName(resp.GetTypeUrl()), protocolDelta).Add(float64(len(resp.GetResources())))
	c.s.log.Debug("sent xDS response", "stream", id, "node", req.GetNode().GetId(), "type", resp.GetTypeUrl(),
		"version", resp.GetSystemVersionInfo(), "resources", len(resp.GetResources()), "removed", len(resp.GetRemovedResources()), "nonce", resp.GetNonce())
}

// REST (fetch) is served for completeness; it has no streams to track.
func (callbacks) OnFetchRequest(context.Context, *discoveryv3.DiscoveryRequest) error { return nil }

func (callbacks) OnFetchResponse(*discoveryv3.DiscoveryRequest, *discoveryv3.DiscoveryResponse) {}

// answered counts and logs an ACK or a NACK.
func (s *Server) answered(key streamKey, typeURL string, ans answer, r sentResponse, detail *status.Status) {
	s.observeAnswer(key, typeURL, ans, r) // observer.go
	protocol := protocolOf(key)
	node := s.clients.node(key)
	switch ans {
	case answerACK:
		s.metrics.acks.WithLabelValues(typeName(typeURL), protocol).Inc()
		s.log.Debug("envoy accepted configuration (ACK)", "node", node.GetId(), "stream", key.id, "protocol", protocol,
			"type", typeURL, "version", r.version)
	case answerNACK:
		s.metrics.nacks.WithLabelValues(typeName(typeURL), protocol).Inc()
		s.log.Error("envoy rejected configuration (NACK); it keeps its previous configuration and will not be sent this version again",
			"node", node.GetId(), "cluster", node.GetCluster(), "stream", key.id, "protocol", protocol,
			"type", typeURL, "version", r.version, "resources", r.count(), "code", detail.GetCode(),
			"error", detail.GetMessage())
	}
}
