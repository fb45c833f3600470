package envoy

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// addHTTPS renders an HTTPS listener: one filter chain per host with a
// certificate, chosen by SNI, each routing only its own host, with the
// certificate delivered over SDS so that a rotated Secret reaches Envoy
// without touching the listener.
func (c *Renderer) addHTTPS(res *Resources, l *ir.Listener, m *ir.IR) error {
	var chains []*listenerv3.FilterChain
	var fallback *listenerv3.FilterChain
	covered := coveredHosts(m.VirtualHosts)
	shared, err := c.defaultChainHosts(l, m.VirtualHosts)
	if err != nil {
		return err
	}
	for _, vh := range m.VirtualHosts {
		if shared.has(vh) {
			continue // rendered into the default chain's routes below
		}
		if vh.Passthrough != nil {
			// passthrough.go: TCP to the backend, whose TLS it is.
			chain, err := passthroughChain(l, vh)
			if err != nil {
				return err
			}
			chains = append(chains, chain)
			continue
		}
		if vh.Certificate == "" {
			continue
		}
		rendered, err := c.virtualHost(vh, listenerSide{tls: true, port: l.Port, publicPort: l.PublicPort})
		if err != nil {
			return err
		}
		uses, gz := rendered.uses, rendered.gzip
		if vh.Host == ir.WildcardHost {
			uses, gz = uses|shared.uses, c.internGzip(gz.union(shared.gzip))
		}
		chain, err := c.filterChain(l, vh, uses|c.onDemandUse(), gz) // ondemand.go
		if err != nil {
			return err
		}
		if vh.Host == ir.WildcardHost {
			// The certificate of connections whose SNI names no other
			// chain's host, or none: the listener's default chain.
			fallback = proto.Clone(chain).(*listenerv3.FilterChain)
			fallback.FilterChainMatch = nil
		} else {
			chains = append(chains, chain)
		}
		rc := &routev3.RouteConfiguration{Name: c.httpsRoutePrefix + vh.Host, VirtualHosts: []*routev3.VirtualHost{rendered.msg},
			TypedPerFilterConfig:     c.onDemandRouteConfig(), // ondemand.go
			IgnorePortInHostMatching: l.KeepHostPort,
			// A route's header changes after these: nginx's snippets
			// and annotations act after the template's forwarded headers
			// and HSTS (translate/ingress/snippet).
			MostSpecificHeaderMutationsWins: true}
		rc.RequestHeadersToAdd, rc.RequestHeadersToRemove = forwardedHeaders(l) // downstream.go
		rc.ResponseHeadersToAdd, rc.ResponseHeadersToRemove = responseHeaders(l)
		addRetriedAfterSent(rc, uses) // nonidempotent.go
		// A wildcard chain also receives requests for the exact hosts it
		// covers (an SNI of another name, a Host of theirs): those are not
		// this certificate's to serve, and must not fall into the wildcard's
		// routes, which may belong to another team.
		for _, host := range covered[vh.Host] {
			rc.VirtualHosts = append(rc.VirtualHosts, misdirected(host))
		}
		if vh.Host == ir.WildcardHost {
			// The hosts served among its connections, then, as on a
			// wildcard chain, 421 for every host with a chain of its own.
			rc.VirtualHosts = append(rc.VirtualHosts, shared.msgs...)
			for _, other := range m.VirtualHosts {
				if other.Host != ir.WildcardHost && (other.Certificate != "" || other.Passthrough != nil) && !shared.has(other) {
					rc.VirtualHosts = append(rc.VirtualHosts, misdirected(other.Host))
				}
			}
		} else if vh.MisdirectOthers {
			rc.VirtualHosts = append(rc.VirtualHosts, misdirected("*"))
		}
		res.Routes = append(res.Routes, rc)
	}
	if len(chains) == 0 && fallback == nil {
		return nil
	}
	inspector, err := anypb.New(&tlsinspectorv3.TlsInspector{})
	if err != nil {
		return fmt.Errorf("packing tls inspector: %w", err)
	}
	lis := &listenerv3.Listener{
		Name:    l.Name,
		Address: listenerAddress(l),
		ListenerFilters: []*listenerv3.ListenerFilter{{
			Name:       "envoy.filters.listener.tls_inspector",
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: inspector},
		}},
		FilterChains:       chains,
		DefaultFilterChain: fallback,
	}
	if err := applyProxyProtocol(lis, l); err != nil { // proxyprotocol.go
		return err
	}
	res.Listeners = append(res.Listeners, lis)
	return nil
}

// coveredHosts maps each wildcard host to the other hosts it covers, in
// order: the exact hosts one label deeper, or, for an AnyDepth wildcard,
// every host (exact or wildcard) under its suffix.
func coveredHosts(vhosts []*ir.VirtualHost) map[string][]string {
	wildcards := map[string]bool{}
	var deep []string
	for _, vh := range vhosts {
		if strings.HasPrefix(vh.Host, "*.") {
			wildcards[vh.Host] = true
			if vh.AnyDepth {
				deep = append(deep, vh.Host)
			}
		}
	}
	out := map[string][]string{}
	if len(wildcards) == 0 {
		return out
	}
	for _, vh := range vhosts {
		if vh.Host == ir.WildcardHost {
			continue
		}
		if _, parent, ok := strings.Cut(vh.Host, "."); ok && !strings.HasPrefix(vh.Host, "*.") {
			if w := "*." + parent; wildcards[w] && !slices.Contains(deep, w) {
				out[w] = append(out[w], vh.Host)
			}
		}
		for _, w := range deep {
			if name := strings.TrimPrefix(vh.Host, "*"); vh.Host != w && len(name) > len(w)-1 && strings.HasSuffix(name, w[1:]) {
				out[w] = append(out[w], vh.Host)
			}
		}
	}
	return out
}

// sharedChain is the hosts served on the default chain
// (ir.VirtualHost.DefaultChain): their virtual hosts, which go into the
// default chain's route configuration, and the filters and compression
// those need in its connection manager.
type sharedChain struct {
	hosts map[*ir.VirtualHost]bool
	msgs  []*routev3.VirtualHost
	uses  filterSet
	gzip  gzipSet
}

func (s *sharedChain) has(vh *ir.VirtualHost) bool { return s.hosts[vh] }

// defaultChainHosts renders the hosts served on the default chain, when
// there is one: WildcardHost served over HTTPS. Without it each has a
// chain of its own, as any host with a certificate.
func (c *Renderer) defaultChainHosts(l *ir.Listener, vhosts []*ir.VirtualHost) (*sharedChain, error) {
	s := &sharedChain{}
	if !slices.ContainsFunc(vhosts, func(vh *ir.VirtualHost) bool {
		return vh.Host == ir.WildcardHost && vh.Certificate != "" && vh.Passthrough == nil
	}) {
		return s, nil
	}
	for _, vh := range vhosts {
		if !vh.DefaultChain || vh.Host == ir.WildcardHost || vh.Certificate == "" || vh.Passthrough != nil {
			continue
		}
		rendered, err := c.virtualHost(vh, listenerSide{tls: true, port: l.Port, publicPort: l.PublicPort})
		if err != nil {
			return nil, err
		}
		if s.hosts == nil {
			s.hosts = map[*ir.VirtualHost]bool{}
		}
		s.hosts[vh] = true
		s.msgs = append(s.msgs, rendered.msg)
		s.uses |= rendered.uses
		s.gzip = s.gzip.union(rendered.gzip)
	}
	return s, nil
}

// misdirected answers 421 for a host reached over a certificate not its
// own ("*": any host the route configuration has no other name for).
func misdirected(host string) *routev3.VirtualHost {
	return &routev3.VirtualHost{
		Name:    host,
		Domains: []string{host},
		Routes: []*routev3.Route{{
			Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{
				Status: http.StatusMisdirectedRequest,
				Body:   &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "misdirected request: this host is not served with this certificate\n"}},
			}},
		}},
	}
}

// sniFilterChain serves one host: its certificate, and its own routes only
// (the route configuration routeName).
func sniFilterChain(l *ir.Listener, vh *ir.VirtualHost, routeName string, uses filterSet, gz gzipSet) (*listenerv3.FilterChain, error) {
	hcm, err := httpConnectionManager(l, routeName, uses, gz)
	if err != nil {
		return nil, err
	}
	transport, err := hostTLS(vh, l) // clientcert.go: with the CA clients are checked against
	if err != nil {
		return nil, err
	}
	return &listenerv3.FilterChain{
		Name:             vh.Host,
		FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: append([]string{vh.Host}, vh.Aliases...)},
		Filters:          []*listenerv3.Filter{hcm},
		TransportSocket:  transport,
	}, nil
}

func tlsSecret(cert *ir.Certificate) *tlsv3.Secret {
	return &tlsv3.Secret{
		Name: cert.Name,
		Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: cert.Chain}},
			PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: cert.Key}},
		}},
	}
}

// downstreamTLS is a host's TLS context, with the listener's TLS versions,
// ciphers and ALPN (downstream.go).
func downstreamTLS(secretName string, l *ir.Listener, d *ir.Downstream) (*corev3.TransportSocket, error) {
	return tlsContext(secretName, l, d, alpn(d))
}

// terminatedTLS is the TLS context of a host whose connections go on as
// TCP once their TLS ends: no ALPN protocol is offered.
func terminatedTLS(secretName string, l *ir.Listener) (*corev3.TransportSocket, error) {
	return tlsContext(secretName, l, l.Downstream, nil)
}

// tlsContext is a host's TLS context on listener l, whose Downstream d
// is, with the host's own ciphers.
func tlsContext(secretName string, l *ir.Listener, d *ir.Downstream, alpn []string) (*corev3.TransportSocket, error) {
	tc := &tlsv3.DownstreamTlsContext{
		CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{
				Name:      secretName,
				SdsConfig: adsSource(),
			}},
			AlpnProtocols: alpn,
			TlsParams:     downstreamTLSParams(d),
		},
	}
	applySessionResumption(tc, l.Name, d) // downstream.go
	ctx, err := anypb.New(tc)
	if err != nil {
		return nil, fmt.Errorf("packing tls context: %w", err)
	}
	return &corev3.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: ctx},
	}, nil
}
