package translate

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/internal/listdiff"
)

// Names of the fixed resources.
const (
	HTTPListenerName  = "ingress_http"
	HTTPRouteName     = "ingress_http"
	HTTPSListenerName = "ingress_https"
	// HTTPSRoutePrefix + host names the route configuration of one TLS host:
	// each SNI filter chain only routes its own host, so a certificate for
	// one host never fronts another host's routes.
	HTTPSRoutePrefix = "https/"
)

// Options are the settings of the Envoy side that do not come from the
// cluster.
type Options struct {
	// HTTPPort is the port of the plain HTTP listener.
	HTTPPort uint32
	// HTTPSPort is the port of the TLS listener, present when some host has
	// a valid certificate.
	HTTPSPort uint32
	// EnableExternalName allows ExternalName Services as backends.
	EnableExternalName bool
	// ListenAddress is the address the listeners bind; 0.0.0.0 when empty.
	ListenAddress string
}

// Resources are the Envoy resources for one state, each kind sorted by name.
// Neither the lists nor the messages are modified once handed out, and a
// Translator hands out the same list, or the same message, again for what
// did not change: consumers may tell what changed by identity.
type Resources struct {
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
	Clusters  []Cluster
	Endpoints []LoadAssignment
	Secrets   []*tlsv3.Secret
}

// adsSource says "get it over the same ADS stream".
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

func socketAddress(address string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       address,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

func listenAddress(opts Options) string {
	if opts.ListenAddress == "" {
		return "0.0.0.0"
	}
	return opts.ListenAddress
}

func httpListener(opts Options) (*listenerv3.Listener, error) {
	hcm, err := httpConnectionManager(HTTPListenerName, HTTPRouteName)
	if err != nil {
		return nil, err
	}
	return &listenerv3.Listener{
		Name:    HTTPListenerName,
		Address: socketAddress(listenAddress(opts), opts.HTTPPort),
		FilterChains: []*listenerv3.FilterChain{{
			Filters: []*listenerv3.Filter{hcm},
		}},
	}, nil
}

// httpConnectionManager is the network filter that routes HTTP by the named
// route configuration, fetched over ADS.
func httpConnectionManager(statPrefix, routeName string) (*listenerv3.Filter, error) {
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, fmt.Errorf("packing router filter: %w", err)
	}
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: routeName,
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
		// Hosts match without their port, whatever port the client used.
		StripPortMode: &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true},
		// example.com. is example.com.
		StripTrailingHostDot: true,
		// /a/../b must not slip past a route for /b's neighbours.
		NormalizePath:    wrapperspb.Bool(true),
		UseRemoteAddress: wrapperspb.Bool(true),
	}
	hcmAny, err := anypb.New(hcm)
	if err != nil {
		return nil, fmt.Errorf("packing http connection manager: %w", err)
	}
	return &listenerv3.Filter{
		Name:       "envoy.filters.network.http_connection_manager",
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcmAny},
	}, nil
}

// routeConfiguration renders virtual hosts; on the TLS listener (tls true)
// redirects to HTTPS are plain routes.
func (c *envoyCache) routeConfiguration(name string, vhosts []*VirtualHost, tls bool) *routev3.RouteConfiguration {
	rc := &routev3.RouteConfiguration{Name: name, VirtualHosts: make([]*routev3.VirtualHost, len(vhosts))}
	// The plain-HTTP configuration holds every host (20,000 at 10,000
	// Ingresses) and a change alters one or two: the previous one gives
	// the messages of the model's unchanged virtual hosts, found in place
	// by identity, without a lookup each.
	var prev httpRoutes
	if !tls {
		prev = c.lastHTTP
	}
	listdiff.Walk(prev.model, vhosts,
		func(i, k int) { rc.VirtualHosts[i] = prev.msgs[k] },
		func(i int) { rc.VirtualHosts[i] = c.virtualHost(vhosts[i], tls) },
		func(int) {})
	if !tls {
		c.lastHTTP = httpRoutes{model: vhosts, msgs: rc.VirtualHosts}
	}
	return rc
}

func virtualHost(vh *VirtualHost, tls bool) *routev3.VirtualHost {
	evh := &routev3.VirtualHost{Name: vh.Host, Domains: []string{vh.Host}, Routes: make([]*routev3.Route, 0, len(vh.Routes))}
	for _, r := range vh.Routes {
		evh.Routes = append(evh.Routes, envoyRoute(vh.Host, r, tls))
	}
	return compactVirtualHost(evh)
}

// compactVirtualHost keeps a virtual host's routes as their encoding, as
// unknown fields, which protobuf encodes as they are: on the wire the
// message is the same. At 10,000 Ingresses, 100,000 routes took 170 MB as
// Go messages, a sixth of the heap, and several times their encoded size.
// The name and domains stay fields. Routes are the last field written, so
// the encoding is the whole message's. A virtual host that fails
// validation is left whole, for the xDS layer to refuse with the detail.
func compactVirtualHost(vh *routev3.VirtualHost) *routev3.VirtualHost {
	if len(vh.Routes) == 0 || vh.ValidateAll() != nil {
		return vh
	}
	return keepEncoded(vh, &routev3.VirtualHost{Routes: vh.Routes}, &routev3.VirtualHost{Name: vh.Name, Domains: vh.Domains})
}

func envoyRoute(host string, r *Route, tls bool) *routev3.Route {
	match := &routev3.RouteMatch{}
	switch {
	case r.PathType == PathExact:
		match.PathSpecifier = &routev3.RouteMatch_Path{Path: r.Path}
	case r.Path == "/":
		match.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
	default:
		// Matches /foo, /foo/ and /foo/...: whole segments only.
		match.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: r.Path}
	}
	if strings.HasPrefix(host, "*.") {
		// Envoy's *.example.com also matches a.b.example.com; the Ingress
		// wildcard covers exactly one label, so pin the label count.
		match.Headers = []*routev3.HeaderMatcher{{
			Name: ":authority",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{
					Regex: "(?i)^[^.]+" + regexp.QuoteMeta(strings.TrimPrefix(host, "*")) + "$",
				}},
			}},
		}}
	}
	route := &routev3.Route{Match: match}
	switch {
	case r.RedirectToHTTPS && !tls:
		route.Action = &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{
			SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true},
			ResponseCode:           routev3.RedirectAction_MOVED_PERMANENTLY,
		}}
	case r.Direct != nil:
		route.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{
			Status: r.Direct.Status,
			Body:   &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: r.Direct.Body}},
		}}
	default:
		route.Action = &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: r.Backend},
		}}
	}
	return route
}

// clusterParts are the messages every EDS cluster holds alike, made once
// per envoyCache and shared (messages handed out are never modified): at
// 10,000 Ingresses, 100,000 clusters.
type clusterParts struct {
	edsType *clusterv3.Cluster_Type
	// eds leaves service_name unset: Envoy then asks EDS for the load
	// assignment named as the cluster is, and the config is the same for
	// every cluster.
	eds            *clusterv3.Cluster_EdsClusterConfig
	connectTimeout *durationpb.Duration
}

func newClusterParts() *clusterParts {
	return &clusterParts{
		edsType:        &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		eds:            &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		connectTimeout: durationpb.New(2 * time.Second),
	}
}

// Cluster is a cluster resource: a *clusterv3.Cluster, or an *EDSCluster.
type Cluster interface {
	proto.Message
	GetName() string
}

// EDSCluster is an EDS cluster kept as its name: every EDS cluster is the
// same but for its name, and a clusterv3.Cluster is a 552-byte struct (some
// 640 bytes a cluster with its parts, 64 MB at 10,000 Ingresses, where this
// is 32 bytes). It is a proto.Message whose reflection view is the Cluster
// it stands for, made on demand, so it encodes, compares and prints as that
// Cluster; Cluster makes the message itself, for consumers that validate it
// and keep only the encoding (the xDS layer).
type EDSCluster struct {
	name  string
	parts *clusterParts
}

// ProtoReflect implements proto.Message with a Cluster made for the call:
// it must only be read.
func (c *EDSCluster) ProtoReflect() protoreflect.Message { return c.Cluster().ProtoReflect() }

// Cluster makes the clusterv3.Cluster c stands for.
func (c *EDSCluster) Cluster() *clusterv3.Cluster { return edsCluster(c.name, c.parts) }

// GetName is the cluster's name.
func (c *EDSCluster) GetName() string { return c.name }

func edsCluster(name string, parts *clusterParts) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: parts.edsType,
		EdsClusterConfig:     parts.eds,
		ConnectTimeout:       parts.connectTimeout,
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
	}
}

// dnsCluster serves an ExternalName Service: Envoy resolves the name and
// sends the upstream's own name as Host, as a client of that name would.
func dnsCluster(be *Backend) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 be.Name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS},
		ConnectTimeout:       durationpb.New(2 * time.Second),
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
		DnsLookupFamily:      clusterv3.Cluster_V4_PREFERRED,
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: be.Name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
						Address:  socketAddress(be.ExternalName, uint32(be.Port)),
						Hostname: be.ExternalName,
					}},
				}},
			}},
		},
	}
}

func loadAssignment(be *Backend) LoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: be.Name}
	if len(be.Endpoints) == 0 {
		return cla
	}
	locality := &endpointv3.LocalityLbEndpoints{}
	for _, ep := range be.Endpoints {
		locality.LbEndpoints = append(locality.LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(ep.Address, uint32(ep.Port)),
			}},
		})
	}
	cla.Endpoints = []*endpointv3.LocalityLbEndpoints{locality}
	return encodeLoadAssignment(cla)
}

// LoadAssignment is a load assignment resource: an *EncodedLoadAssignment,
// or an *endpointv3.ClusterLoadAssignment (one without endpoints, or one
// that fails validation, left whole for the xDS layer to refuse with the
// detail).
type LoadAssignment interface {
	proto.Message
	GetClusterName() string
}

// EncodedLoadAssignment is a valid load assignment kept as its encoding.
// Load assignments are most of what a control plane holds: at 10,000
// Ingresses a million endpoints, 40% of the heap as Go messages, ten times
// their encoded size. Nothing reads them but the encoder, and this encoding
// (deterministic) is the one sent: the xDS layer takes it as it is, so the
// endpoints are held once. It is a proto.Message whose reflection view is
// the message decoded, for displays and tools that read fields.
type EncodedLoadAssignment struct {
	name string
	raw  []byte
}

// encodeLoadAssignment keeps a valid load assignment encoded, and any
// other whole.
func encodeLoadAssignment(cla *endpointv3.ClusterLoadAssignment) LoadAssignment {
	if cla.ValidateAll() != nil {
		return cla
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(cla)
	if err != nil {
		return cla
	}
	return &EncodedLoadAssignment{name: cla.ClusterName, raw: raw}
}

// ProtoReflect implements proto.Message with the load assignment decoded
// for the call: it must only be read.
func (l *EncodedLoadAssignment) ProtoReflect() protoreflect.Message {
	cla := &endpointv3.ClusterLoadAssignment{}
	if err := proto.Unmarshal(l.raw, cla); err != nil {
		// It was encoded from a valid message: this is a bug, not input.
		panic(fmt.Sprintf("translate: decoding the load assignment %q it encoded: %v", l.name, err))
	}
	return cla.ProtoReflect()
}

// GetClusterName is the name of the cluster the load assignment is for.
func (l *EncodedLoadAssignment) GetClusterName() string { return l.name }

// GetName is GetClusterName, for consumers that look resources up by name.
func (l *EncodedLoadAssignment) GetName() string { return l.name }

// Encoding is the load assignment's deterministic encoding; it must not be
// modified.
func (l *EncodedLoadAssignment) Encoding() []byte { return l.raw }

// keepEncoded returns kept (whole's fields that stay fields) carrying the
// encoding of encoded (the rest of whole) as unknown fields, or whole when
// that cannot be encoded.
func keepEncoded[T proto.Message](whole, encoded, kept T) T {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(encoded)
	if err != nil {
		return whole
	}
	kept.ProtoReflect().SetUnknown(raw)
	return kept
}

// Expand returns m with what is kept encoded as unknown fields (see
// compactVirtualHost), at any depth, decoded into fields, or m itself when
// nothing is. protojson, for one, drops unknown fields.
func Expand[T proto.Message](m T) (T, error) {
	if !holdsUnknown(m.ProtoReflect()) {
		return m, nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return m, fmt.Errorf("encoding %T: %w", m, err)
	}
	out := m.ProtoReflect().New().Interface().(T)
	if err := proto.Unmarshal(raw, out); err != nil {
		return m, fmt.Errorf("decoding %T: %w", m, err)
	}
	return out, nil
}

// holdsUnknown reports whether m or a message within it has unknown fields.
func holdsUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i, l := 0, v.List(); i < l.Len() && !found; i++ {
				found = holdsUnknown(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				found = holdsUnknown(mv.Message())
				return !found
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			found = holdsUnknown(v.Message())
		}
		return !found
	})
	return found
}
