// Package adsclient is a small ADS client that behaves as Envoy does on the
// wire: it subscribes to every listener and cluster, then to the route
// configurations and load assignments those name, ACKs every response it
// accepts and NACKs the ones that fail validation. It speaks
// state-of-the-world xDS, or incremental (delta) xDS with Options.Delta.
// Tests use it to check what a control plane serves without running Envoy;
// the benchmark command uses it to measure how fast changes reach a client.
package adsclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Options configure a Client.
type Options struct {
	// NodeID is sent as node.id; "adsclient" when empty.
	NodeID string
	// NodeCluster is sent as node.cluster; "ingress-xds" when empty.
	NodeCluster string
	// Logger receives one debug line per response; nothing when nil.
	Logger *slog.Logger
	// Delta speaks incremental xDS (DeltaAggregatedResources), as Envoy
	// does with DELTA_GRPC: responses carry only what changed. Snapshots
	// look the same either way.
	Delta bool
	// MaxRecvMessageBytes bounds one response; 1 GiB when zero. gRPC's
	// default of 4 MiB is far below the CDS or EDS response of a large
	// cluster, which Envoy accepts.
	MaxRecvMessageBytes int
	// OnDemandClusters, with Delta, asks for each cluster a route sends
	// to by name, besides the wildcard (ondemand.go): a control plane
	// serving on-demand clusters leaves those out of the wildcard, and
	// Envoy asks for them as requests come; this client asks for every
	// one the routes name as soon as it sees them.
	OnDemandClusters bool
}

// Snapshot is what the client holds at one moment. A Snapshot is never
// modified once returned: every response produces a new one.
type Snapshot struct {
	Listeners map[string]*listenerv3.Listener
	Routes    map[string]*routev3.RouteConfiguration
	Clusters  map[string]*clusterv3.Cluster
	Endpoints map[string]*endpointv3.ClusterLoadAssignment
	// Scopes are the route scopes taken over SRDS (scopes.go), by name.
	Scopes map[string]*routev3.ScopedRouteConfiguration

	// Versions holds, by type URL, the version_info of the last response
	// accepted.
	Versions map[string]string
	// Received holds, by type URL, when the last accepted response arrived.
	Received map[string]time.Time
	// Responses counts every response received, accepted or not.
	Responses int
	// Rejected lists why responses were NACKed, oldest first.
	Rejected []string

	// discovery is what the client holds of VHDS (vhds.go).
	discovery discovery
}

// Client is one ADS stream to a control plane.
type Client struct {
	conn   *grpc.ClientConn
	cancel context.CancelFunc
	done   chan struct{} // closed when the receive loop ends
	node   *corev3.Node
	log    *slog.Logger

	// Only the receive loop touches the streams and subs after Dial
	// returns: a gRPC stream must not be sent on from two goroutines.
	// Exactly one of stream and deltaStream is set.
	stream      discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	deltaStream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	subs        map[string]*subscription
	// askedClusters are the clusters asked for by name (ondemand.go).
	onDemand      bool
	askedClusters map[string]bool

	mu      sync.Mutex
	snap    *Snapshot
	changed chan struct{} // closed and replaced on every new snapshot
	err     error         // why the stream ended
}

// subscription is the client's side of one resource type on the stream.
type subscription struct {
	wildcard bool     // listeners and clusters: everything
	names    []string // routes and endpoints: these, sorted
	sent     bool     // a request for this type has gone out
	version  string   // last accepted version
	nonce    string   // nonce of the last response
}

// Dial connects to the ADS server at address (host:port, plaintext) and
// subscribes to listeners and clusters. The stream lives until Close or
// until ctx is done.
func Dial(ctx context.Context, address string, opts Options) (*Client, error) {
	maxRecv := opts.MaxRecvMessageBytes
	if maxRecv <= 0 {
		maxRecv = 1 << 30
	}
	conn, err := grpc.NewClient(address,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecv)))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", address, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	c := &Client{
		conn:   conn,
		cancel: cancel,
		done:   make(chan struct{}),
		node:   &corev3.Node{Id: or(opts.NodeID, "adsclient"), Cluster: or(opts.NodeCluster, "ingress-xds")},
		log:    opts.Logger,
		subs: map[string]*subscription{
			resource.ListenerType: {wildcard: true},
			resource.ClusterType:  {wildcard: true},
			resource.RouteType:    {},
			resource.EndpointType: {},
			// Over delta only, as Envoy: named for the route
			// configurations that say so (vhds.go).
			resource.VirtualHostType: {},
			// Everything, once a listener's routes say they come in
			// scopes (scopes.go).
			resource.ScopedRouteType: {wildcard: true},
		},
		snap: &Snapshot{
			Listeners: map[string]*listenerv3.Listener{},
			Routes:    map[string]*routev3.RouteConfiguration{},
			Clusters:  map[string]*clusterv3.Cluster{},
			Endpoints: map[string]*endpointv3.ClusterLoadAssignment{},
			Scopes:    map[string]*routev3.ScopedRouteConfiguration{},
			Versions:  map[string]string{},
			Received:  map[string]time.Time{},
		},
		changed:  make(chan struct{}),
		onDemand: opts.Delta && opts.OnDemandClusters,
	}
	subscribe := c.request
	if opts.Delta {
		c.deltaStream, err = ads.DeltaAggregatedResources(ctx)
		subscribe = c.subscribeDelta
	} else {
		c.stream, err = ads.StreamAggregatedResources(ctx)
	}
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("opening the ADS stream to %s: %w", address, err)
	}
	// Listeners first, then clusters, as Envoy does.
	for _, typeURL := range []string{resource.ListenerType, resource.ClusterType} {
		if err := subscribe(typeURL, nil); err != nil {
			cancel()
			conn.Close()
			return nil, err
		}
	}
	if opts.Delta {
		go c.receive(pump(c.deltaStream.Recv, c.handleDelta, c.done))
	} else {
		go c.receive(pump(c.stream.Recv, c.handle, c.done))
	}
	return c, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Close ends the stream and the connection.
func (c *Client) Close() error {
	c.cancel()
	err := c.conn.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
	return err
}

// Snapshot returns the latest resources.
func (c *Client) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// Err returns why the stream ended, or nil while it is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// WaitFor returns the first snapshot, the current one included, for which
// ready returns true. It fails when ctx is done or the stream ends first.
func (c *Client) WaitFor(ctx context.Context, ready func(*Snapshot) bool) (*Snapshot, error) {
	for {
		c.mu.Lock()
		snap, changed, streamErr := c.snap, c.changed, c.err
		c.mu.Unlock()
		if ready(snap) {
			return snap, nil
		}
		if streamErr != nil {
			return snap, fmt.Errorf("ADS stream ended: %w", streamErr)
		}
		select {
		case <-ctx.Done():
			return snap, ctx.Err()
		case <-changed:
		}
	}
}

// receive handles responses, each with receiveOne, until the stream ends.
// It is the only goroutine that sends on the stream.
func (c *Client) receive(receiveOne func() error) {
	defer close(c.done)
	for {
		if err := receiveOne(); err != nil {
			c.mu.Lock()
			c.err = err
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
			return
		}
	}
}

// arrival is a response and when it arrived, or why the stream ended.
type arrival[T any] struct {
	resp T
	at   time.Time
	err  error
}

// pump receives responses on a goroutine of its own, stamping each with its
// arrival, and returns the function that handles the next one. Handling a
// response (decoding and validating 100,000 load assignments) can take
// seconds; were it done between receives, the arrival time of the next
// response would include it, and a benchmark would time this client. The
// queue never fills: the server sends at most one response per type before
// its ACK.
func pump[T any](recv func() (T, error), handle func(T, time.Time) error, done <-chan struct{}) func() error {
	queue := make(chan arrival[T], 16)
	go func() {
		for {
			resp, err := recv()
			select {
			case queue <- arrival[T]{resp: resp, at: time.Now(), err: err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func() error {
		a := <-queue
		if a.err != nil {
			return a.err
		}
		return handle(a.resp, a.at)
	}
}

// handle accepts or rejects one response, then follows the names it
// references: new listeners may name new route configurations, new clusters
// new load assignments.
func (c *Client) handle(resp *discoveryv3.DiscoveryResponse, received time.Time) error {
	sub, ok := c.subs[resp.TypeUrl]
	if !ok {
		return fmt.Errorf("response of a type never requested: %s", resp.TypeUrl)
	}
	sub.nonce = resp.Nonce
	decoded, err := decode(resp.TypeUrl, resp.Resources)
	if err != nil {
		c.update(func(s *Snapshot) {
			s.Responses++
			s.Rejected = append(s.Rejected, fmt.Sprintf("%s version %s: %v", resp.TypeUrl, resp.VersionInfo, err))
		})
		if c.log != nil {
			c.log.Warn("rejecting ADS response", "type", resp.TypeUrl, "version", resp.VersionInfo, "err", err)
		}
		return c.nack(resp.TypeUrl, err)
	}
	sub.version = resp.VersionInfo
	var next *Snapshot
	c.update(func(s *Snapshot) {
		s.Responses++
		s.Versions[resp.TypeUrl] = resp.VersionInfo
		s.Received[resp.TypeUrl] = received
		s.replace(resp.TypeUrl, decoded, sub)
		next = s
	})
	if c.log != nil {
		c.log.Debug("ADS response", "type", resp.TypeUrl, "version", resp.VersionInfo, "resources", len(decoded))
	}
	if err := c.request(resp.TypeUrl, nil); err != nil { // the ACK
		return err
	}
	switch resp.TypeUrl {
	case resource.ListenerType:
		if err := c.followScopes(next, c.request); err != nil { // scopes.go
			return err
		}
		return c.follow(resource.RouteType, routeNames(next))
	case resource.ScopedRouteType:
		return c.follow(resource.RouteType, routeNames(next))
	case resource.ClusterType:
		return c.follow(resource.EndpointType, endpointNames(next.Clusters))
	}
	return nil
}

// follow subscribes to exactly names for typeURL, dropping resources no
// longer named, as Envoy does when a listener or cluster goes away.
func (c *Client) follow(typeURL string, names []string) error {
	sub := c.subs[typeURL]
	if slices.Equal(sub.names, names) && (sub.sent || len(names) == 0) {
		return nil
	}
	sub.names = names
	c.update(func(s *Snapshot) { s.prune(typeURL, names) })
	// An empty first request would mean "everything" (legacy wildcard):
	// subscribe only once there is something to ask for.
	if !sub.sent && len(names) == 0 {
		return nil
	}
	return c.request(typeURL, nil)
}

// request sends the current subscription for typeURL with the last accepted
// version and last nonce: an ACK, a change of names, or with errDetail a NACK.
func (c *Client) request(typeURL string, errDetail error) error {
	sub := c.subs[typeURL]
	req := &discoveryv3.DiscoveryRequest{
		Node:          c.node,
		TypeUrl:       typeURL,
		VersionInfo:   sub.version,
		ResponseNonce: sub.nonce,
	}
	if !sub.wildcard {
		req.ResourceNames = sub.names
	}
	if errDetail != nil {
		req.ErrorDetail = &statuspb.Status{Code: int32(codes.InvalidArgument), Message: errDetail.Error()}
	}
	sub.sent = true
	if err := c.stream.Send(req); err != nil {
		return fmt.Errorf("sending %s request: %w", typeURL, err)
	}
	return nil
}

func (c *Client) nack(typeURL string, reason error) error {
	return c.request(typeURL, reason)
}

// update applies fn to a copy of the snapshot, publishes the copy and wakes
// WaitFor.
func (c *Client) update(fn func(*Snapshot)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := c.snap.clone()
	fn(next)
	c.snap = next
	close(c.changed)
	c.changed = make(chan struct{})
}

// clone copies what an update modifies in place. The resource maps are
// shared: replace, apply and prune never write into a map, they build a new
// one, so that an update costs one copy of the map it changes rather than of
// all four (which matters with a hundred thousand clusters).
func (s *Snapshot) clone() *Snapshot {
	return &Snapshot{
		Listeners: s.Listeners,
		Routes:    s.Routes,
		Clusters:  s.Clusters,
		Endpoints: s.Endpoints,
		Scopes:    s.Scopes,
		Versions:  clone(s.Versions),
		Received:  clone(s.Received),
		Responses: s.Responses,
		Rejected:  slices.Clone(s.Rejected),
		discovery: s.discovery.clone(),
	}
}

func clone[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// replace installs a response's resources. A state-of-the-world response
// carries every listener or cluster there is; for routes and endpoints it
// carries those subscribed to, and names not subscribed are ignored.
func (s *Snapshot) replace(typeURL string, decoded map[string]proto.Message, sub *subscription) {
	keep := func(name string) bool {
		_, found := slices.BinarySearch(sub.names, name)
		return sub.wildcard || found
	}
	switch typeURL {
	case resource.ListenerType:
		s.Listeners = typed[*listenerv3.Listener](decoded, keep)
	case resource.ClusterType:
		s.Clusters = typed[*clusterv3.Cluster](decoded, keep)
	case resource.RouteType:
		s.Routes = merge(s.Routes, typed[*routev3.RouteConfiguration](decoded, keep))
	case resource.EndpointType:
		s.Endpoints = merge(s.Endpoints, typed[*endpointv3.ClusterLoadAssignment](decoded, keep))
	case resource.ScopedRouteType: // scopes.go: every scope, each time
		s.Scopes = typed[*routev3.ScopedRouteConfiguration](decoded, keep)
	}
}

func (s *Snapshot) prune(typeURL string, names []string) {
	keep := func(name string) bool {
		_, found := slices.BinarySearch(names, name)
		return found
	}
	switch typeURL {
	case resource.RouteType:
		s.Routes = filter(s.Routes, keep)
	case resource.EndpointType:
		s.Endpoints = filter(s.Endpoints, keep)
	case resource.VirtualHostType: // vhds.go
		s.pruneDiscovered(names)
	}
}

func typed[T proto.Message](decoded map[string]proto.Message, keep func(string) bool) map[string]T {
	out := make(map[string]T, len(decoded))
	for name, m := range decoded {
		if keep(name) {
			out[name] = m.(T)
		}
	}
	return out
}

func merge[V any](old, updates map[string]V) map[string]V {
	out := clone(old)
	for k, v := range updates {
		out[k] = v
	}
	return out
}

func filter[V any](m map[string]V, keep func(string) bool) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// validatable is implemented by every generated Envoy message
// (protoc-gen-validate): the checks Envoy itself applies first.
type validatable interface{ ValidateAll() error }

// decode unpacks and validates a response's resources, by name. Any failure
// rejects the whole response, as Envoy does.
func decode(typeURL string, resources []*anypb.Any) (map[string]proto.Message, error) {
	out := make(map[string]proto.Message, len(resources))
	var errs []error
	for _, a := range resources {
		if a.TypeUrl != typeURL {
			errs = append(errs, fmt.Errorf("resource of type %s in a %s response", a.TypeUrl, typeURL))
			continue
		}
		m, err := a.UnmarshalNew()
		if err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", typeURL, err))
			continue
		}
		name := nameOf(m)
		if v, ok := m.(validatable); ok {
			if err := v.ValidateAll(); err != nil {
				errs = append(errs, fmt.Errorf("%q: %w", name, err))
				continue
			}
		}
		if _, dup := out[name]; dup {
			errs = append(errs, fmt.Errorf("%q appears twice", name))
		}
		out[name] = m
	}
	return out, errors.Join(errs...)
}

func nameOf(m proto.Message) string {
	switch r := m.(type) {
	case *listenerv3.Listener:
		return r.GetName()
	case *routev3.RouteConfiguration:
		return r.GetName()
	case *clusterv3.Cluster:
		return r.GetName()
	case *endpointv3.ClusterLoadAssignment:
		return r.GetClusterName()
	case *routev3.VirtualHost: // vhds.go
		return r.GetName()
	case *routev3.ScopedRouteConfiguration: // scopes.go
		return r.GetName()
	}
	return ""
}

// routeNames returns the route configurations the listeners' HTTP connection
// managers take over RDS, and those the route scopes name, sorted.
func routeNames(s *Snapshot) []string {
	set := map[string]bool{}
	for _, sc := range s.Scopes { // scopes.go
		set[sc.GetRouteConfigurationName()] = true
	}
	for _, l := range s.Listeners {
		chains := l.GetFilterChains()
		if l.GetDefaultFilterChain() != nil {
			chains = append(slices.Clone(chains), l.GetDefaultFilterChain())
		}
		for _, chain := range chains {
			for _, f := range chain.GetFilters() {
				hcm := &hcmv3.HttpConnectionManager{}
				if f.GetTypedConfig() == nil || f.GetTypedConfig().UnmarshalTo(hcm) != nil {
					continue // not an HTTP connection manager
				}
				if name := hcm.GetRds().GetRouteConfigName(); name != "" {
					set[name] = true
				}
			}
		}
	}
	return sortedKeys(set)
}

// endpointNames returns the load assignments the EDS clusters ask for,
// sorted.
func endpointNames(clusters map[string]*clusterv3.Cluster) []string {
	set := map[string]bool{}
	for _, cl := range clusters {
		if cl.GetType() != clusterv3.Cluster_EDS {
			continue
		}
		set[or(cl.GetEdsClusterConfig().GetServiceName(), cl.GetName())] = true
	}
	return sortedKeys(set)
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
