package envoy

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Authentication Envoy cannot do faithfully by itself (basic authentication
// against every kind of htpasswd hash, external authentication with nginx's
// auth_request semantics) is done by the authorisation service that runs
// beside each Envoy, in its pod (`ingress-xds authz`, internal/authz), which
// Envoy asks over ext_authz gRPC on loopback. Everything the service needs
// for a route travels in the route's ext_authz configuration, as context
// extensions (authzapi names them): the control plane is never on the
// request path.

// extAuthzFilter is the ext_authz HTTP filter.
const extAuthzFilter = "envoy.filters.http.ext_authz"

// AuthzCluster is the cluster of the authorisation service. Backend
// clusters' names have slashes: it cannot be one of them.
const AuthzCluster = "ingress-xds-authz"

// DefaultAuthzAddress is where the authorisation service listens when
// nobody says otherwise (serve --authz-address, authz --listen).
const DefaultAuthzAddress = "127.0.0.1:18081"

// authzTimeout bounds one check. An uncached bcrypt verification takes
// from milliseconds to a second and more (cost 14, which ingress-nginx's
// own tests use); an external service's answer may take as long as nginx
// would wait for it (its proxy_read_timeout, 60 s by default).
const authzTimeout = 60 * time.Second

// extAuthzListenerConfig is the filter's listener-wide entry, disabled
// (httpFilter.disabled): only routes with a configuration of their own ask
// the service. It fails closed: when the service cannot be asked, the
// client gets 500, never the backend.
func extAuthzListenerConfig() *extauthzv3.ExtAuthz {
	return &extauthzv3.ExtAuthz{
		Services: &extauthzv3.ExtAuthz_GrpcService{GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: AuthzCluster}},
			Timeout:         durationpb.New(authzTimeout),
		}},
		TransportApiVersion: corev3.ApiVersion_V3,
		FailureModeAllow:    false,
		StatusOnError:       &typev3.HttpStatus{Code: typev3.StatusCode_InternalServerError},
	}
}

// authzPerRoute is a route's configuration of the filter: what the service
// checks, as context extensions.
func authzPerRoute(a *ir.Auth) *extauthzv3.ExtAuthzPerRoute {
	ext := map[string]string{}
	var kinds []string
	if b := a.Basic; b != nil {
		kinds = append(kinds, authzapi.KindBasic)
		ext[authzapi.BasicRealm] = b.Realm
		ext[authzapi.BasicUsers] = b.Users
	}
	if e := a.External; e != nil {
		kinds = append(kinds, authzapi.KindExternal)
		externalAuthz(ext, e) // authz_external.go
	}
	ext[authzapi.KeyKind] = strings.Join(kinds, ",")
	if a.Any {
		ext[authzapi.KeySatisfy] = authzapi.SatisfyAny
		if r := a.Address; r != nil {
			ext[authzapi.AddressAllow] = strings.Join(r.Allow, ",")
			ext[authzapi.AddressDeny] = strings.Join(r.Deny, ",")
		}
	}
	return &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{
		CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: ext},
	}}
}

// authzCluster is the static cluster of the service, over HTTP/2 (gRPC).
func authzCluster(address string) (*clusterv3.Cluster, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("authorisation service address: %w", err)
	}
	c := staticCluster(AuthzCluster, ap.Addr().String(), uint32(ap.Port()))
	opts, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("packing the authorisation service's protocol options: %w", err)
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts}
	return c, nil
}

// withAuthzCluster is the clusters with the service's, in name order, when
// some listener's routes ask it, or some listener sends it the request
// metrics (metrics). The list is a new one (the renderer hands
// the one without it out again), made again only when that one changes, and
// the service's cluster is made once: what did not change keeps its
// identity.
func (c *Renderer) withAuthzCluster(clusters []Cluster, uses filterSet, metrics bool) ([]Cluster, error) {
	if uses&(useExtAuthz|useConnLimit|useResponsePace) == 0 && !metrics { // connlimit.go's and responsepace.go's service is the same
		return clusters, nil
	}
	a := &c.authz
	if a.cluster == nil {
		ac, err := authzCluster(cmp.Or(c.opts.AuthzAddress, DefaultAuthzAddress))
		if err != nil {
			return nil, err
		}
		a.cluster = ac
	}
	if a.with != nil && len(a.base) == len(clusters) && (len(clusters) == 0 || &a.base[0] == &clusters[0]) {
		return a.with, nil
	}
	i, _ := slices.BinarySearchFunc(clusters, AuthzCluster, func(cl Cluster, name string) int { return strings.Compare(cl.GetName(), name) })
	a.base, a.with = clusters, slices.Insert(slices.Clip(clusters), i, Cluster(a.cluster))
	return a.with, nil
}

// authzClusters is what withAuthzCluster remembers.
type authzClusters struct {
	cluster *clusterv3.Cluster
	base    []Cluster // the list it was added to
	with    []Cluster // and the list with it
}
