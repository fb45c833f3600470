package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
)

// A lightClient is one of the many ADS clients of the fan-out test. It
// subscribes to all four types at once (delta ones to virtual hosts too), with the route and load assignment
// names the main client found, ACKs everything, and records only which
// version of each type arrived when. It decodes no resource, not even into
// an Any's bytes (LightCodec): 2,000 clients that each decoded the route
// configuration on the control plane's cores would measure the load
// command, not the control plane.
//
// With on-demand clusters (names.onDemand set, delta only) it subscribes
// as a delta Envoy of the DaemonSet does: to every listener and to the
// clusters' wildcard, which leaves out the clusters that come on demand;
// by name to the clusters its traffic has asked for; and to the load
// assignment of each cluster it is sent (names.edsOf), as those arrive,
// rather than to every load assignment.
type lightClient struct {
	closeConn func() // ends the connection
	cancel    context.CancelFunc
	done      chan struct{}

	mu       sync.Mutex
	versions map[string]string    // type URL -> last version received
	arrived  map[string]time.Time // type URL -> when it arrived
	err      error
}

// names are the subscriptions of every light client.
type names struct {
	routes, endpoints []string
	// onDemand, when not nil, are the clusters a delta client asks for
	// by name besides the wildcard; it then subscribes to the load
	// assignments of the clusters it is sent, edsOf naming each
	// cluster's (a cluster not in it reads its own name), not to
	// endpoints.
	onDemand []string
	edsOf    map[string]string
	// sotwEndpoints, when not nil, keeps each SotW client's names of
	// the load assignments as it sends them (endpointsOf), by client:
	// made at its first dial and sent again after the storm's. Made
	// anew for 5,000 clients dialling again at once, they starved the
	// load command's transports until the control plane's keepalive
	// dropped their connections.
	sotwEndpoints [][]byte
}

// Envoy's HTTP/2 flow-control windows by default, of each stream and of
// the connection (Http2ProtocolOptions' initial_stream_window_size and
// initial_connection_window_size), and so those of every Envoy of our
// bootstrap, which sets neither.
const (
	envoyStreamWindowBytes     = 16 << 20
	envoyConnectionWindowBytes = 24 << 20
)

// LightDialOptions dial the control plane as the fan-out's clients do:
// plaintext, decoding with LightCodec, and with Envoy's flow-control
// windows rather than gRPC's (64 KiB, grown as it measures the link):
// with gRPC's, a client sent a large response (the route configuration)
// lets the control plane send each next part of it only once it has
// read the last, and 2,000 clients on two cores read late, where an Envoy
// would not hold the control plane back. Exported for the xds package's
// fan-out benchmark.
func LightDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(envoyStreamWindowBytes),
		grpc.WithInitialConnWindowSize(envoyConnectionWindowBytes),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.ForceCodecV2(NewLightCodec())),
	}
}

// The ADS streams as the light client uses them: gRPC's, or its own over
// HTTP/2 (h2stream.go).
type (
	sotwStream interface {
		Send(*discoveryv3.DiscoveryRequest) error
		Recv() (*discoveryv3.DiscoveryResponse, error)
	}
	deltaStream interface {
		Send(*discoveryv3.DeltaDiscoveryRequest) error
		Recv() (*discoveryv3.DeltaDiscoveryResponse, error)
	}
)

// dialLight connects fan-out client id, with gRPC's client or, with h2,
// with the load command's own (h2stream.go), and subscribes it. An h2
// client whose connection fails before its requests are sent (reset
// in a storm of thousands of dials on two cores) dials again after a
// jittered backoff, as Envoy reconnects: 500 ms, doubling.
func dialLight(ctx context.Context, address string, id int, subs names, delta, h2 bool) (*lightClient, error) {
	const attempts = 6
	for attempt := 0; ; attempt++ {
		c, err := dialLightOnce(ctx, address, id, subs, delta, h2)
		if err == nil || !h2 || attempt == attempts-1 {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(rand.N(500 * time.Millisecond << attempt)):
		}
	}
}

func dialLightOnce(ctx context.Context, address string, id int, subs names, delta, h2 bool) (*lightClient, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &lightClient{cancel: cancel, done: make(chan struct{}),
		versions: map[string]string{}, arrived: map[string]time.Time{}}
	var sotw sotwStream
	var incremental deltaStream
	var err error
	if h2 {
		sotw, incremental, err = c.streamsOverH2(ctx, address, delta)
	} else {
		sotw, incremental, err = c.streamsOverGRPC(ctx, address, delta)
	}
	if err == nil {
		node := &corev3.Node{Id: fmt.Sprintf("fanout-%d", id), Cluster: "ingress-load"}
		if delta {
			err = c.startDelta(incremental, node, subs)
		} else {
			err = c.startSotW(sotw, node, subs, subs.endpointsOf(id))
		}
	}
	if err != nil {
		cancel()
		if c.closeConn != nil {
			c.closeConn()
		}
		return nil, fmt.Errorf("fan-out client %d: %w", id, err)
	}
	return c, nil
}

// streamsOverGRPC opens the client's ADS stream with gRPC's client; the
// one the protocol uses is returned, the other nil.
func (c *lightClient) streamsOverGRPC(ctx context.Context, address string, delta bool) (sotwStream, deltaStream, error) {
	conn, err := grpc.NewClient(address, LightDialOptions()...)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", address, err)
	}
	c.closeConn = func() { conn.Close() }
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	if delta {
		stream, err := ads.DeltaAggregatedResources(ctx)
		return nil, stream, err
	}
	stream, err := ads.StreamAggregatedResources(ctx)
	return stream, nil, err
}

// streamsOverH2 opens the client's ADS stream with the load command's own
// HTTP/2 (h2stream.go).
func (c *lightClient) streamsOverH2(ctx context.Context, address string, delta bool) (sotwStream, deltaStream, error) {
	method := discoveryv3.AggregatedDiscoveryService_StreamAggregatedResources_FullMethodName
	if delta {
		method = discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResources_FullMethodName
	}
	s, err := dialH2(ctx, address, method)
	if err != nil {
		return nil, nil, err
	}
	c.closeConn = s.close
	return h2SotW{s}, h2Delta{s}, nil
}

// endpointsOf is the names of the load assignments as SotW client id
// sends them, encoded (encodeNames): in an order of its own, as a SotW
// Envoy names them, in its hash set's order, seeded per process, the same
// in each request of its stream. The control plane cannot count on the
// order it serves them in, nor on one Envoy's order being another's.
func (subs names) endpointsOf(id int) []byte {
	if subs.sotwEndpoints != nil && subs.sotwEndpoints[id] != nil {
		return subs.sotwEndpoints[id]
	}
	own := slices.Clone(subs.endpoints)
	rand.New(rand.NewPCG(uint64(id), 0)).Shuffle(len(own), func(i, j int) { own[i], own[j] = own[j], own[i] })
	b := encodeNames(own)
	if subs.sotwEndpoints != nil {
		subs.sotwEndpoints[id] = b
	}
	return b
}

// subscriptions lists, in Envoy's order, each type and the names it asks
// for (nil: all of them).
func subscriptions(subs names) []struct {
	typeURL string
	names   []string
} {
	return []struct {
		typeURL string
		names   []string
	}{
		{resource.ListenerType, nil},
		{resource.ClusterType, nil},
		{resource.RouteType, subs.routes},
		{resource.EndpointType, subs.endpoints},
	}
}

// startSotW subscribes as a SotW Envoy, naming the load assignments as
// endpoints encodes them.
func (c *lightClient) startSotW(stream sotwStream, node *corev3.Node, subs names, endpoints []byte) error {
	byType := map[string][]byte{}
	for _, s := range subscriptions(subs) {
		byType[s.typeURL] = encodeNames(s.names)
		if s.typeURL == resource.EndpointType {
			byType[s.typeURL] = endpoints
		}
		if err := stream.Send(sotwRequest(node, s.typeURL, byType[s.typeURL], "", "")); err != nil {
			return err
		}
	}
	go c.loop(func() error {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		c.record(resp.TypeUrl, resp.VersionInfo)
		return stream.Send(sotwRequest(nil, resp.TypeUrl, byType[resp.TypeUrl], resp.VersionInfo, resp.Nonce))
	})
	return nil
}

// encodeNames encodes names as a DiscoveryRequest's resource_names
// fields. A SotW client names every load assignment in each request of
// the type: kept encoded, its names are encoded once, not for each of
// its acknowledgements (at 5,000 clients and 10,000 load assignments,
// more of the two cores than the control plane spent reading them), and
// they are bytes for the load command's collector to skip, where 5,000
// lists of 10,000 strings were pointers to scan.
func encodeNames(names []string) []byte {
	var b []byte
	for _, name := range names {
		b = protowire.AppendString(protowire.AppendTag(b, requestNamesField, protowire.BytesType), name)
	}
	return b
}

var requestNamesField = fieldOf(&discoveryv3.DiscoveryRequest{}, "resource_names")

// sotwRequest is a SotW request naming the encoded names: proto.Marshal
// writes a message's unknown fields as they are, after the others, so
// the control plane is sent the request it would be sent with the
// names in ResourceNames (the order of fields does not change what
// they decode to).
func sotwRequest(node *corev3.Node, typeURL string, names []byte, version, nonce string) *discoveryv3.DiscoveryRequest {
	req := &discoveryv3.DiscoveryRequest{Node: node, TypeUrl: typeURL, VersionInfo: version, ResponseNonce: nonce}
	if len(names) > 0 {
		req.ProtoReflect().SetUnknown(names)
	}
	return req
}

func (c *lightClient) startDelta(stream deltaStream, node *corev3.Node, subs names) error {
	for _, s := range subscriptions(subs) {
		names := s.names
		switch {
		case subs.onDemand != nil && s.typeURL == resource.ClusterType:
			names = append([]string{"*"}, subs.onDemand...)
		case subs.onDemand != nil && s.typeURL == resource.EndpointType:
			continue // asked for as the clusters come
		case names == nil:
			names = []string{"*"}
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: s.typeURL, ResourceNamesSubscribe: names}); err != nil {
			return err
		}
	}
	// The virtual hosts, as Envoy 1.40's VHDS subscribes when a route
	// configuration says they come over VHDS (serve --delta-vhds, the
	// default below the route scopes' line): a request naming nothing, a
	// wildcard (xds/vhds.go), which the control plane keeps apart from a
	// subscription by name (xds/heldall.go). The client does not decode
	// the route configurations to see; when they hold their virtual hosts
	// the subscription is sent nothing.
	if len(subs.routes) > 0 {
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.VirtualHostType}); err != nil {
			return err
		}
	}
	eds := newEDSFollower(subs.edsOf)
	go c.loop(func() error {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		c.record(resp.TypeUrl, resp.SystemVersionInfo)
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}); err != nil {
			return err
		}
		if subs.onDemand == nil || resp.TypeUrl != resource.ClusterType {
			return nil
		}
		subscribe, unsubscribe := eds.clusters(resp)
		if len(subscribe) == 0 && len(unsubscribe) == 0 {
			return nil
		}
		return stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType,
			ResourceNamesSubscribe: subscribe, ResourceNamesUnsubscribe: unsubscribe})
	})
	return nil
}

// edsFollower subscribes a delta client to the load assignment of each
// cluster it holds, as Envoy's EDS subscriptions follow its clusters.
type edsFollower struct {
	edsOf  map[string]string // cluster -> the load assignment it reads
	held   map[string]string // clusters held -> the load assignment each reads
	counts map[string]int    // load assignment -> clusters held reading it
}

func newEDSFollower(edsOf map[string]string) *edsFollower {
	return &edsFollower{edsOf: edsOf, held: map[string]string{}, counts: map[string]int{}}
}

// clusters takes a delta cluster response and returns the load
// assignments to subscribe to (the first cluster reading one came) and to
// unsubscribe from (the last went). A cluster not in edsOf reads its own
// name; one sent again (updated) counts once.
func (f *edsFollower) clusters(resp *discoveryv3.DeltaDiscoveryResponse) (subscribe, unsubscribe []string) {
	for _, r := range resp.Resources {
		if _, ok := f.held[r.Name]; ok {
			continue
		}
		name, ok := f.edsOf[r.Name]
		if !ok {
			name = r.Name
		}
		f.held[r.Name] = name
		if f.counts[name]++; f.counts[name] == 1 {
			subscribe = append(subscribe, name)
		}
	}
	for _, cluster := range resp.RemovedResources {
		name, ok := f.held[cluster]
		if !ok {
			continue
		}
		delete(f.held, cluster)
		if f.counts[name]--; f.counts[name] == 0 {
			delete(f.counts, name)
			unsubscribe = append(unsubscribe, name)
		}
	}
	return subscribe, unsubscribe
}

func (c *lightClient) loop(receiveOne func() error) {
	defer close(c.done)
	for {
		if err := receiveOne(); err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
	}
}

func (c *lightClient) record(typeURL, version string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.versions[typeURL] = version
	c.arrived[typeURL] = now
}

// state returns the client's last version and arrival time of typeURL, and
// why its stream ended if it has.
func (c *lightClient) state(typeURL string) (string, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versions[typeURL], c.arrived[typeURL], c.err
}

// holds says whether the client has versions' version of each of types,
// and why its stream ended if it has.
func (c *lightClient) holds(versions map[string]string, types []string) (bool, error) {
	for _, t := range types {
		v, _, err := c.state(t)
		if err != nil {
			return false, err
		}
		if v != versions[t] {
			return false, nil
		}
	}
	return true, nil
}

func (c *lightClient) close() {
	c.cancel()
	c.closeConn()
	<-c.done
}
