package envoy

import (
	"fmt"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// httpProtocolOptionsKey is the extension key of a cluster's HTTP protocol
// options.
const httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// upstreamCommonOptions is ir.Upstream as the options every connection
// pool of a cluster takes (nginx's keepalive_timeout, keepalive_requests
// and keepalive_time of its upstream block); nil for Envoy's own. Envoy
// has no bound on the idle connections kept (nginx's keepalive N per
// worker): a pool keeps every connection it opened until its idle timeout.
func upstreamCommonOptions(u *ir.Upstream) *corev3.HttpProtocolOptions {
	if u == nil || *u == (ir.Upstream{}) {
		return nil
	}
	o := &corev3.HttpProtocolOptions{}
	if u.IdleTimeout > 0 {
		o.IdleTimeout = durationpb.New(time.Duration(u.IdleTimeout) * time.Second)
	}
	if u.MaxRequests > 0 {
		o.MaxRequestsPerConnection = wrapperspb.UInt32(u.MaxRequests)
	}
	if u.MaxLifetime > 0 {
		o.MaxConnectionDuration = durationpb.New(time.Duration(u.MaxLifetime) * time.Second)
	}
	return o
}

// defaultPoolOptions are the protocol options of a default cluster (HTTP/1.1,
// as Envoy's default) with the pool's common options; nil without them.
func defaultPoolOptions(common *corev3.HttpProtocolOptions) (map[string]*anypb.Any, error) {
	if common == nil {
		return nil, nil
	}
	opts, err := anypb.New(&httpv3.HttpProtocolOptions{
		CommonHttpProtocolOptions: common,
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: &corev3.Http1ProtocolOptions{}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("packing the upstream pool's options: %w", err)
	}
	return map[string]*anypb.Any{httpProtocolOptionsKey: opts}, nil
}

// applyUpstreamPool gives a rendered backend cluster the pool's common
// options: into the protocol options its policy set (HTTP/2, the mirror's
// filters), or the default ones.
func applyUpstreamPool(c *clusterv3.Cluster, common *corev3.HttpProtocolOptions, defaults map[string]*anypb.Any) error {
	if common == nil {
		return nil
	}
	packed, ok := c.TypedExtensionProtocolOptions[httpProtocolOptionsKey]
	if !ok {
		c.TypedExtensionProtocolOptions = defaults
		return nil
	}
	opts := &httpv3.HttpProtocolOptions{}
	if err := packed.UnmarshalTo(opts); err != nil {
		return fmt.Errorf("reading cluster %s's protocol options: %w", c.Name, err)
	}
	opts.CommonHttpProtocolOptions = common
	repacked, err := anypb.New(opts)
	if err != nil {
		return fmt.Errorf("packing cluster %s's protocol options: %w", c.Name, err)
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpProtocolOptionsKey: repacked}
	return nil
}

// useUpstream makes the renderer render clusters with the IR's Upstream:
// when it changed since the last render, the shared parts are made again
// and no cluster rendered before is reused.
func (c *Renderer) useUpstream(u *ir.Upstream) error {
	var want ir.Upstream
	if u != nil {
		want = *u
	}
	if want == c.upstream {
		return nil
	}
	parts := newClusterParts()
	parts.pool = upstreamCommonOptions(&want)
	opts, err := defaultPoolOptions(parts.pool)
	if err != nil {
		return err
	}
	parts.poolOptions = opts
	c.parts, c.upstream = parts, want
	clear(c.clusters)
	c.lastBackends, c.lastClusterValues, c.lastClusters, c.lastEndpoints = nil, nil, nil, nil
	c.lastClusterBackend, c.lastLoadOf = nil, nil
	return nil
}
