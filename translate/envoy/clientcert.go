package envoy

import (
	"fmt"
	"net/http"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	xdsmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	sslinputsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/common_inputs/ssl/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Client certificates, as nginx's ssl_verify_client shows them to a
// client: the TLS handshake asks for a certificate and never fails for
// one (none, or one that does not verify: ACCEPT_UNTRUSTED), and the
// request is answered 400 at the HTTP level. Routes of the host's own
// ahead of its others do that, matching on whether the connection's
// certificate was presented and validated; nothing else runs for them
// (no filter has their configuration), as nginx refuses before its
// rewrite and access phases. The subject check (auth-tls-match-cn) is an
// RBAC filter of its own, ahead of every other access filter, as nginx's
// server-level "if" runs before any location's phases.

// clientCertFilter is the RBAC filter that checks the subject.
const clientCertFilter = "ingress-xds.client_certificate_subject"

// The request headers nginx sets upstream for a host with auth-tls-secret.
const (
	headerClientVerify  = "ssl-client-verify"
	headerClientSubject = "ssl-client-subject-dn"
	headerClientIssuer  = "ssl-client-issuer-dn"
	headerClientCert    = "ssl-client-cert"
)

// nginx's texts for its 496 and 495, which it sends as 400.
const (
	noCertBody  = "400 Bad Request\nNo required SSL certificate was sent\n"
	badCertBody = "400 Bad Request\nThe SSL certificate error\n"
)

// hostTLS is the transport socket of a host's filter chain: its
// certificate, and the CA its clients' certificates are checked against.
func hostTLS(vh *ir.VirtualHost, l *ir.Listener) (*corev3.TransportSocket, error) {
	d := withHostCiphers(l.Downstream, vh.TLSCiphers) // downstream.go
	c := vh.ClientCert
	if !c.Requested() {
		return downstreamTLS(vh.Certificate, l, d)
	}
	// The handshake succeeds whatever the client sends, and the routes
	// decide (clientCertChecks); but for a policy of the handshake alone
	// (Gateway API's) that requires a certificate that verifies.
	trust, require := tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED, false
	if c.Handshake && c.Verify == ir.VerifyOn {
		trust, require = tlsv3.CertificateValidationContext_VERIFY_TRUST_CHAIN, true
	}
	ctx, err := anypb.New(&tlsv3.DownstreamTlsContext{
		CommonTlsContext: &tlsv3.CommonTlsContext{
			// As downstreamTLS's.
			TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: vh.Certificate, SdsConfig: adsSource()}},
			AlpnProtocols:                  alpn(d),
			TlsParams:                      downstreamTLSParams(d),
			ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				TrustedCa:              &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: c.CA}},
				MaxVerifyDepth:         wrapperspb.UInt32(c.Depth),
				TrustChainVerification: trust,
			}},
		},
		RequireClientCertificate: wrapperspb.Bool(require),
		// A resumed session is not validated again, and Envoy then reports
		// its certificate as not validated: every connection makes a full
		// handshake, so that its certificate is checked.
		SessionTicketKeysType:            &tlsv3.DownstreamTlsContext_DisableStatelessSessionResumption{DisableStatelessSessionResumption: true},
		DisableStatefulSessionResumption: true,
	})
	if err != nil {
		return nil, fmt.Errorf("packing tls context: %w", err)
	}
	return &corev3.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: ctx},
	}, nil
}

// applyClientCert makes a host's rendered routes apply its client
// certificate policy on one side (plain HTTP or HTTPS), and says which
// optional filters they then use.
func applyClientCert(evh *routev3.VirtualHost, c *ir.ClientCert, l listenerSide) (filterSet, error) {
	if c == nil || c.Handshake {
		return 0, nil // the handshake alone applies it (hostTLS)
	}
	if !l.tls && c.MatchSubject != "" {
		// ingress-nginx's server answers 403 to everything: a plain
		// connection has no certificate, so no subject to match.
		evh.Routes = []*routev3.Route{directRoute(http.StatusForbidden, "403 Forbidden\n")}
		return 0, nil
	}
	if !l.tls {
		for _, r := range evh.Routes {
			if _, fwd := r.Action.(*routev3.Route_Route); !fwd {
				continue
			}
			if c.Verify == ir.VerifyOn {
				// Stricter than nginx, which serves plain HTTP without the
				// check: what is not redirected to HTTPS is refused.
				refuse(r, c, noCertBody)
				continue
			}
			setClientHeaders(r, c, "NONE")
		}
		return 0, nil
	}
	var subject *anypb.Any
	if c.MatchSubject != "" {
		var err error
		if subject, err = anypb.New(subjectCheck(c.MatchSubject)); err != nil {
			return 0, fmt.Errorf("packing the subject check: %w", err)
		}
	}
	out := clientCertChecks(c)
	for _, r := range evh.Routes {
		variants := []*routev3.Route{r}
		if _, fwd := r.Action.(*routev3.Route_Route); fwd {
			variants = verifyVariants(r, c)
		}
		for _, v := range variants {
			if subject != nil {
				if v.TypedPerFilterConfig == nil {
					v.TypedPerFilterConfig = map[string]*anypb.Any{}
				}
				v.TypedPerFilterConfig[clientCertFilter] = subject
			}
		}
		out = append(out, variants...)
	}
	evh.Routes = out
	if subject != nil {
		return useClientCertSubject, nil
	}
	return 0, nil
}

// clientCertChecks are the routes ahead of the host's that refuse a
// request for its certificate.
func clientCertChecks(c *ir.ClientCert) []*routev3.Route {
	check := func(tc *routev3.RouteMatch_TlsContextMatchOptions, body string) *routev3.Route {
		r := &routev3.Route{Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}, TlsContext: tc}}
		refuse(r, c, body)
		return r
	}
	switch c.Verify {
	case ir.VerifyOn:
		return []*routev3.Route{
			check(&routev3.RouteMatch_TlsContextMatchOptions{Presented: wrapperspb.Bool(false)}, noCertBody),
			check(&routev3.RouteMatch_TlsContextMatchOptions{Validated: wrapperspb.Bool(false)}, badCertBody),
		}
	case ir.VerifyOptional:
		return []*routev3.Route{
			check(&routev3.RouteMatch_TlsContextMatchOptions{Presented: wrapperspb.Bool(true), Validated: wrapperspb.Bool(false)}, badCertBody),
		}
	}
	return nil
}

// verifyVariants are a forwarding route for each state of the client's
// certificate that can reach it, each telling the upstream which it is
// (ssl-client-verify), in match order.
func verifyVariants(r *routev3.Route, c *ir.ClientCert) []*routev3.Route {
	variant := func(tc *routev3.RouteMatch_TlsContextMatchOptions, verify string) *routev3.Route {
		v := proto.Clone(r).(*routev3.Route)
		v.Match.TlsContext = tc
		setClientHeaders(v, c, verify)
		return v
	}
	switch c.Verify {
	case ir.VerifyOn:
		setClientHeaders(r, c, "SUCCESS") // the checks let nothing else by
		return []*routev3.Route{r}
	case ir.VerifyOptional:
		none := variant(&routev3.RouteMatch_TlsContextMatchOptions{Presented: wrapperspb.Bool(false)}, "NONE")
		setClientHeaders(r, c, "SUCCESS")
		return []*routev3.Route{none, r}
	case ir.VerifyOptionalNoCA:
		none := variant(&routev3.RouteMatch_TlsContextMatchOptions{Presented: wrapperspb.Bool(false)}, "NONE")
		failed := variant(&routev3.RouteMatch_TlsContextMatchOptions{Validated: wrapperspb.Bool(false)}, "FAILED")
		setClientHeaders(r, c, "SUCCESS")
		return []*routev3.Route{none, failed, r}
	}
	setClientHeaders(r, c, "NONE") // off: no certificate is asked for
	return []*routev3.Route{r}
}

// setClientHeaders sets what nginx tells the upstream of the client's
// certificate, in place of any header of those names the client sent.
func setClientHeaders(r *routev3.Route, c *ir.ClientCert, verify string) {
	set := func(name, value string) *corev3.HeaderValueOption {
		return &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: name, Value: value},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}
	}
	// Removed first (Envoy removes before it adds): an empty value (no
	// certificate) is not added, and the client's must not remain.
	r.RequestHeadersToRemove = append(r.RequestHeadersToRemove, headerClientVerify, headerClientSubject, headerClientIssuer, headerClientCert)
	r.RequestHeadersToAdd = append(r.RequestHeadersToAdd,
		set(headerClientVerify, verify),
		set(headerClientSubject, "%DOWNSTREAM_PEER_SUBJECT%"),
		set(headerClientIssuer, "%DOWNSTREAM_PEER_ISSUER%"))
	if c.PassCertificate {
		r.RequestHeadersToAdd = append(r.RequestHeadersToAdd, set(headerClientCert, "%DOWNSTREAM_PEER_CERT%"))
	}
}

// refuse makes a route answer a request refused for its certificate: 400,
// or a 302 to the error page (nginx's error_page 495 496 with a URL).
func refuse(r *routev3.Route, c *ir.ClientCert, body string) {
	r.TypedPerFilterConfig = nil
	r.RequestHeadersToAdd, r.RequestHeadersToRemove = nil, nil
	r.ResponseHeadersToAdd, r.ResponseHeadersToRemove = nil, nil
	if c.ErrorPage == "" {
		r.Action = directAction(http.StatusBadRequest, body)
		return
	}
	r.Action = directAction(http.StatusFound, "")
	r.ResponseHeadersToAdd = []*corev3.HeaderValueOption{location(literal(c.ErrorPage))}
}

func directAction(status uint32, body string) *routev3.Route_DirectResponse {
	d := &routev3.DirectResponseAction{Status: status}
	if body != "" {
		d.Body = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: body}}
	}
	return &routev3.Route_DirectResponse{DirectResponse: d}
}

func directRoute(status uint32, body string) *routev3.Route {
	return &routev3.Route{
		Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: directAction(status, body),
	}
}

// subjectCheck lets a request by only when its certificate's subject has
// a match of expr (nginx's $ssl_client_s_dn !~ expr, a search). Without a
// certificate there is no subject, and no match.
func subjectCheck(expr string) *rbacv3.RBACPerRoute {
	action := func(name string, a rbacconfigv3.RBAC_Action) *xdsmatcherv3.Matcher_OnMatch {
		cfg, _ := anypb.New(&rbacconfigv3.Action{Name: name, Action: a})
		return &xdsmatcherv3.Matcher_OnMatch{OnMatch: &xdsmatcherv3.Matcher_OnMatch_Action{
			Action: &xdscorev3.TypedExtensionConfig{Name: name, TypedConfig: cfg},
		}}
	}
	input, _ := anypb.New(&sslinputsv3.SubjectInput{})
	return &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Matcher: &xdsmatcherv3.Matcher{
		MatcherType: &xdsmatcherv3.Matcher_MatcherList_{MatcherList: &xdsmatcherv3.Matcher_MatcherList{
			Matchers: []*xdsmatcherv3.Matcher_MatcherList_FieldMatcher{{
				Predicate: &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
					SinglePredicate: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
						Input: &xdscorev3.TypedExtensionConfig{Name: "envoy.matching.inputs.subject", TypedConfig: input},
						Matcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: &xdsmatcherv3.StringMatcher{
							// Envoy matches the whole value: the expression is
							// searched for anywhere in it.
							MatchPattern: &xdsmatcherv3.StringMatcher_SafeRegex{SafeRegex: &xdsmatcherv3.RegexMatcher{
								EngineType: &xdsmatcherv3.RegexMatcher_GoogleRe2{GoogleRe2: &xdsmatcherv3.RegexMatcher_GoogleRE2{}},
								Regex:      "(?s).*(?:" + expr + ").*",
							}},
						}},
					},
				}},
				OnMatch: action("subject-matches", rbacconfigv3.RBAC_ALLOW),
			}},
		}},
		OnNoMatch: action("subject-does-not-match", rbacconfigv3.RBAC_DENY),
	}}}
}

// clientCertFilterConfig is the filter's listener-wide configuration:
// none, it runs only on routes that have one (disabled).
func clientCertFilterConfig() proto.Message { return &rbacv3.RBAC{} }
