package envoy

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	mutationrulesv3 "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	earlymutationv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/early_header_mutation/header_mutation/v3"
	customheaderv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/custom_header/v3"
	xffv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/xff/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// applyDownstream sets on a listener's connection manager what its
// Downstream says of client connections: keep-alive, where the client's
// address is read, the copy of the client's forwarded headers, and the
// access log.
func applyDownstream(hcm *hcmv3.HttpConnectionManager, l *ir.Listener, uses filterSet) error {
	d := l.Downstream
	if d == nil {
		return nil
	}
	if d.IdleTimeout > 0 || d.MaxRequests > 0 || d.DropUnderscoreHeaders {
		o := &corev3.HttpProtocolOptions{}
		if d.IdleTimeout > 0 {
			o.IdleTimeout = durationpb.New(time.Duration(d.IdleTimeout) * time.Second)
		}
		if d.MaxRequests > 0 {
			o.MaxRequestsPerConnection = wrapperspb.UInt32(d.MaxRequests)
		}
		if d.DropUnderscoreHeaders {
			// Before routing, RBAC or the backend see it, as nginx
			// never reads it (ngx_http_parse_header_line marks it
			// invalid, ngx_http_process_request_headers skips it).
			o.HeadersWithUnderscoresAction = corev3.HttpProtocolOptions_DROP_HEADER
		}
		hcm.CommonHttpProtocolOptions = o
	}
	if d.KeepBackendServer {
		hcm.ServerHeaderTransformation = hcmv3.HttpConnectionManager_APPEND_IF_ABSENT
	}
	if d.HeadersTimeout > 0 {
		hcm.RequestHeadersTimeout = durationpb.New(time.Duration(d.HeadersTimeout) * time.Second)
	}
	if d.MaxConcurrentStreams > 0 {
		hcm.Http2ProtocolOptions = &corev3.Http2ProtocolOptions{MaxConcurrentStreams: wrapperspb.UInt32(d.MaxConcurrentStreams)}
	}
	if d.NoHTTP2 {
		// Not even with prior knowledge, as nginx's listen without http2.
		hcm.CodecType = hcmv3.HttpConnectionManager_HTTP1
	}
	if err := clientAddressDetection(hcm, l); err != nil {
		return err
	}
	if d.Forwarded == ir.ForwardedClient && hcm.GetUseRemoteAddress().GetValue() {
		// The routes replace X-Forwarded-For with the client's address,
		// and read the header as the client sent it for
		// X-Original-Forwarded-For (forwardedHeaders).
		hcm.SkipXffAppend = true
	}
	original, err := originalForwarded(l)
	if err != nil {
		return err
	}
	if original != nil {
		hcm.EarlyHeaderMutationExtensions = append(hcm.EarlyHeaderMutationExtensions, original)
	}
	if d.AccessLog != nil {
		log, err := accessLog(d.AccessLog, uses&useNoAccessLog != 0) // accesslog.go
		if err != nil {
			return err
		}
		hcm.AccessLog = []*accesslogv3.AccessLog{log}
	}
	return nil
}

// clientAddressDetection reads the client's address from a header of its
// own (forwarded-for-header), or from X-Forwarded-For past trusted CIDRs
// (proxy-real-ip-cidr), through Envoy's original IP detection extensions,
// which replace use_remote_address and xff_num_trusted_hops. Otherwise
// the listener's trusted hops stay (filters.go).
func clientAddressDetection(hcm *hcmv3.HttpConnectionManager, l *ir.Listener) error {
	d := l.Downstream
	var ext *corev3.TypedExtensionConfig
	switch {
	case d.ClientHeader != "":
		cfg, err := anypb.New(&customheaderv3.CustomHeaderConfig{HeaderName: strings.ToLower(d.ClientHeader)})
		if err != nil {
			return fmt.Errorf("packing the client header detection: %w", err)
		}
		ext = &corev3.TypedExtensionConfig{Name: "envoy.http.original_ip_detection.custom_header", TypedConfig: cfg}
	case d.TrustedCIDRs != "":
		var cidrs []*corev3.CidrRange
		for _, c := range strings.Split(d.TrustedCIDRs, ",") {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				return fmt.Errorf("listener %s: trusted CIDR %q: %w", l.Name, c, err)
			}
			cidrs = append(cidrs, &corev3.CidrRange{AddressPrefix: p.Addr().String(), PrefixLen: wrapperspb.UInt32(uint32(p.Bits()))})
		}
		cfg, err := anypb.New(&xffv3.XffConfig{
			XffTrustedCidrs: &xffv3.XffTrustedCidrs{Cidrs: cidrs},
			// The peer is appended, as with use_remote_address, for
			// compute-full-forwarded-for only: otherwise the routes
			// replace the header, and read the client's own for
			// X-Original-Forwarded-For.
			SkipXffAppend: wrapperspb.Bool(d.Forwarded != ir.ForwardedFull),
		})
		if err != nil {
			return fmt.Errorf("packing the X-Forwarded-For detection: %w", err)
		}
		ext = &corev3.TypedExtensionConfig{Name: "envoy.http.original_ip_detection.xff", TypedConfig: cfg}
	default:
		return nil
	}
	hcm.UseRemoteAddress = wrapperspb.Bool(false)
	hcm.XffNumTrustedHops = 0
	hcm.OriginalIpDetectionExtensions = []*corev3.TypedExtensionConfig{ext}
	return nil
}

// forwardedHeaders are the request headers a listener's route
// configuration sets for the backend, and those it removes: what the
// client's address is (X-Real-IP, and X-Forwarded-For unless
// compute-full-forwarded-for keeps the header with the peer appended), the
// request's host, port and scheme as ProxyHeaders says, and, but for
// compute-full-forwarded-for (originalForwarded), the client's own
// X-Forwarded-For and X-Forwarded-Host as X-Original-Forwarded-For and
// -Host. The client's address is Envoy's downstream remote address, which
// is the detected one past trusted proxies. Envoy evaluates every value
// from the request as the route configuration received it, so a header
// read here is the client's (or, for X-Forwarded-Proto, the connection
// manager's; X-Forwarded-For has nothing appended, applyDownstream), never
// one set here. Said once per route configuration, not per route or per
// filter chain: there is one route configuration per HTTPS host already.
func forwardedHeaders(l *ir.Listener) (add []*corev3.HeaderValueOption, remove []string) {
	d := l.Downstream
	if d == nil {
		return nil, nil
	}
	header := func(name, value string, action corev3.HeaderValueOption_HeaderAppendAction) {
		add = append(add, &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: name, Value: value}, AppendAction: action})
	}
	const (
		overwrite   = corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD
		addIfAbsent = corev3.HeaderValueOption_ADD_IF_ABSENT
	)
	if d.Forwarded != ir.ForwardedAppend {
		header("x-real-ip", "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", overwrite)
		if d.Forwarded == ir.ForwardedClient {
			header("x-forwarded-for", "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", overwrite)
		}
	}
	scheme := "http"
	if l.Protocol == ir.HTTPS {
		scheme = "https"
	} else if d.ProxyProtocol {
		// Its filter chain's (proxyprotocol.go).
		scheme = "%REQ(x-forwarded-proto)%"
	}
	port := strconv.FormatUint(uint64(d.ForwardedPort), 10)
	if d.ProxyProtocol {
		// The port the client reached, as the PROXY header says
		// ($proxy_protocol_server_port).
		port = "%DOWNSTREAM_LOCAL_PORT%"
	}
	switch d.ProxyHeaders {
	case ir.ProxyHeadersSet:
		header("x-forwarded-host", "%REQ(:authority)%", overwrite)
		header("x-forwarded-port", port, overwrite)
		header("x-forwarded-proto", scheme, overwrite)
		header("x-forwarded-scheme", scheme, overwrite)
		header("x-scheme", scheme, overwrite)
	case ir.ProxyHeadersTrusted:
		header("x-forwarded-host", "%REQ(:authority)%", addIfAbsent)
		header("x-forwarded-port", port, addIfAbsent)
		// The connection manager has set X-Forwarded-Proto where the
		// client sent none, so the two others always have a value.
		header("x-forwarded-proto", scheme, addIfAbsent)
		header("x-forwarded-scheme", "%REQ(x-forwarded-proto)%", overwrite)
		header("x-scheme", "%REQ(x-forwarded-proto)%", overwrite)
	}
	if d.OriginalURI {
		// :path as the route configuration receives it: before the
		// route's rewrite, which the router makes after these headers.
		header("x-original-uri", "%REQ(:path)%", overwrite)
	}
	if d.ProxyHeaders != ir.ProxyHeadersAsSent && d.Forwarded != ir.ForwardedFull {
		// Removed first, then set where the client sent the header it
		// copies (an empty value is not added).
		for _, h := range originalHeaders(d) {
			remove = append(remove, h.name)
			header(h.name, "%REQ("+h.from+")%", overwrite)
		}
	}
	return add, remove
}

// responseHeaders are the response header changes a listener's route
// configurations make, before a route's own, which win for a name both
// change (MostSpecificHeaderMutationsWins): hide-headers' removals, HSTS
// and add-headers', as nginx's http level acts before its locations.
func responseHeaders(l *ir.Listener) (add []*corev3.HeaderValueOption, remove []string) {
	add, remove = hstsHeaders(l), hiddenHeaders(l) // hsts.go
	if h := l.ResponseHeaders; h != nil {
		remove = append(slices.Clip(remove), setRemoves(h)...) // route_policy.go
		add = append(add, headerOptions(h)...)
	}
	return add, remove
}

// hiddenHeaders are the response headers a listener's route
// configurations remove (hide-headers): before a route's own response
// headers, which may set them again, as more_set_headers does after
// proxy_hide_header.
func hiddenHeaders(l *ir.Listener) []string {
	if l.Downstream == nil || l.Downstream.HideHeaders == "" {
		return nil
	}
	return strings.Split(l.Downstream.HideHeaders, ",")
}

// originalHeader is a header the backend gets with the value of another
// as the client sent it.
type originalHeader struct{ name, from string }

// originalHeaders are X-Original-Forwarded-For, from the header naming the
// client (X-Forwarded-For unless forwarded-for-header says another), and
// X-Original-Forwarded-Host, from X-Forwarded-Host unless
// forwarded-host-header says another (nginx.tmpl's buildForwardedHost).
func originalHeaders(d *ir.Downstream) []originalHeader {
	return []originalHeader{
		{"x-original-forwarded-for", strings.ToLower(cmp.Or(d.ClientHeader, "x-forwarded-for"))},
		{"x-original-forwarded-host", cmp.Or(d.ForwardedHostFrom, "x-forwarded-host")},
	}
}

// originalForwarded is, under compute-full-forwarded-for, the listener's
// early header mutation that copies the client's X-Forwarded-For (or the
// header naming the client) and X-Forwarded-Host into
// X-Original-Forwarded-For and -Host, replacing any the client sent: it
// runs before the connection manager appends the peer to X-Forwarded-For,
// which the routes then keep. Otherwise the routes copy them
// (forwardedHeaders), and this is nil.
func originalForwarded(l *ir.Listener) (*corev3.TypedExtensionConfig, error) {
	d := l.Downstream
	if d == nil || d.ProxyHeaders == ir.ProxyHeadersAsSent || d.Forwarded != ir.ForwardedFull {
		return nil, nil
	}
	var mutations []*mutationrulesv3.HeaderMutation
	for _, h := range originalHeaders(d) {
		mutations = append(mutations,
			&mutationrulesv3.HeaderMutation{Action: &mutationrulesv3.HeaderMutation_Remove{Remove: h.name}},
			&mutationrulesv3.HeaderMutation{Action: &mutationrulesv3.HeaderMutation_Append{Append: &corev3.HeaderValueOption{
				Header:       &corev3.HeaderValue{Key: h.name, Value: "%REQ(" + h.from + ")%"},
				AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
			}}})
	}
	cfg, err := anypb.New(&earlymutationv3.HeaderMutation{Mutations: mutations})
	if err != nil {
		return nil, fmt.Errorf("packing the original forwarded headers' mutation: %w", err)
	}
	return &corev3.TypedExtensionConfig{Name: "ingress-xds.original-forwarded", TypedConfig: cfg}, nil
}

// applySessionResumption gives a host's TLS context the listener's TLS
// session resumption: by tickets and by session IDs, how long a session
// lasts, and the tickets' key (ssl-session-tickets, ssl-session-cache,
// ssl-session-timeout, ssl-session-ticket-key).
func applySessionResumption(tc *tlsv3.DownstreamTlsContext, listener string, d *ir.Downstream) {
	if d == nil {
		return
	}
	switch {
	case d.NoSessionTickets:
		tc.SessionTicketKeysType = &tlsv3.DownstreamTlsContext_DisableStatelessSessionResumption{DisableStatelessSessionResumption: true}
	case d.SessionTicketKey != nil:
		// Over SDS, as certificates go: a new key reaches Envoy as a new
		// secret, and the listener stays as it is.
		tc.SessionTicketKeysType = &tlsv3.DownstreamTlsContext_SessionTicketKeysSdsSecretConfig{
			SessionTicketKeysSdsSecretConfig: &tlsv3.SdsSecretConfig{Name: sessionTicketKeySecretName(listener), SdsConfig: adsSource()},
		}
	}
	tc.DisableStatefulSessionResumption = d.NoSessionCache
	if d.SessionTimeout > 0 {
		tc.SessionTimeout = durationpb.New(time.Duration(d.SessionTimeout) * time.Second)
	}
}

// sessionTicketKeySecretName names a listener's session ticket key
// secret; a colon, which no Kubernetes name has, keeps it apart from the
// certificates' "namespace/name".
func sessionTicketKeySecretName(listener string) string { return "ssl-session-ticket-key:" + listener }

// sessionTicketKey is listener l's session ticket key; nil when its TLS
// contexts name none (applySessionResumption).
func sessionTicketKey(l *ir.Listener) []byte {
	d := l.Downstream
	if l.Protocol != ir.HTTPS || d == nil || d.NoSessionTickets {
		return nil
	}
	return d.SessionTicketKey
}

// sessionTicketKeySecret is a session ticket key as the secret name.
func sessionTicketKeySecret(name string, key []byte) *tlsv3.Secret {
	return &tlsv3.Secret{
		Name: name,
		Type: &tlsv3.Secret_SessionTicketKeys{SessionTicketKeys: &tlsv3.TlsSessionTicketKeys{
			Keys: []*corev3.DataSource{{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: key}}},
		}},
	}
}

// downstreamTLSParams are a listener's TLS versions and ciphers; nil for
// Envoy's.
func downstreamTLSParams(d *ir.Downstream) *tlsv3.TlsParameters {
	if d == nil || d.TLSMin == "" && d.TLSMax == "" && d.TLSCiphers == "" && d.ECDHCurves == "" {
		return nil
	}
	p := &tlsv3.TlsParameters{
		TlsMinimumProtocolVersion: downstreamTLSVersion(d.TLSMin),
		TlsMaximumProtocolVersion: downstreamTLSVersion(d.TLSMax),
	}
	if d.TLSCiphers != "" {
		p.CipherSuites = strings.Split(d.TLSCiphers, ":")
	}
	if d.ECDHCurves != "" {
		p.EcdhCurves = strings.Split(d.ECDHCurves, ":")
	}
	return p
}

func downstreamTLSVersion(v ir.TLSVersion) tlsv3.TlsParameters_TlsProtocol {
	switch v {
	case ir.TLS10:
		return tlsv3.TlsParameters_TLSv1_0
	case ir.TLS11:
		return tlsv3.TlsParameters_TLSv1_1
	case ir.TLS12:
		return tlsv3.TlsParameters_TLSv1_2
	case ir.TLS13:
		return tlsv3.TlsParameters_TLSv1_3
	}
	return tlsv3.TlsParameters_TLS_AUTO
}

// alpn is what an HTTPS listener offers in ALPN: h2 unless use-http2 is
// false.
func alpn(d *ir.Downstream) []string {
	if d != nil && d.NoHTTP2 {
		return []string{"http/1.1"}
	}
	return []string{"h2", "http/1.1"}
}

// withHostCiphers is d with a host's own ciphers (the ssl-ciphers
// annotation) in place of the listener's; d itself when it has none.
func withHostCiphers(d *ir.Downstream, ciphers string) *ir.Downstream {
	if ciphers == "" {
		return d
	}
	out := ir.Downstream{}
	if d != nil {
		out = *d
	}
	out.TLSCiphers = ciphers
	return &out
}
