package gatewayapi

import (
	"slices"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// sharedFeatures are the Gateway API features served in either mode:
// what docs/gateway-api.md says is supported, and what the conformance
// suite's options claim (e2e/gatewayconformance checks that our
// GatewayClass's status lists what its options file claims).
var sharedFeatures = []features.FeatureName{
	features.SupportGateway,
	features.SupportReferenceGrant,
	features.SupportHTTPRoute,
	features.SupportGRPCRoute,
	features.SupportTLSRoute,
	features.SupportGatewayHTTPListenerIsolation,
	features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
	features.SupportGatewayAddressEmpty,
	features.SupportGatewayStaticAddresses,
	features.SupportGatewayBackendClientCertificate,
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRouteResponseHeaderModification,
	features.SupportHTTPRouteBackendRequestHeaderModification,
	features.SupportHTTPRouteCORS,
	features.SupportHTTPRouteDestinationPortMatching,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteRetry,
	features.SupportHTTPRouteRetryBackendTimeout,
	features.SupportHTTPRouteRetryConnectionError,
	features.SupportHTTPRouteBackendProtocolH2C,
	features.SupportHTTPRouteBackendProtocolWebSocket,
	features.SupportHTTPRouteNamedRouteRule,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportGRPCRouteNamedRouteRule,
	features.SupportBackendTLSPolicy,
	features.SupportBackendTLSPolicySANValidation,
	// TLS listeners in Terminate mode, and beside Passthrough ones on one
	// port (by SNI, on Envoy's one listener of the port).
	features.SupportTLSRouteModeTerminate,
	features.SupportTLSRouteModeMixed,
}

// ownFeatures are those served only with an address per Gateway
// (Options.OwnAddresses): any port, a Route bound to one port of its
// Gateway, and a Gateway's own client validation on a name another
// Gateway validates otherwise.
var ownFeatures = []features.FeatureName{
	features.SupportGatewayPort8080,
	features.SupportHTTPRouteParentRefPort,
	features.SupportGatewayFrontendClientCertificateValidation,
	features.SupportGatewayFrontendClientCertificateValidationInsecureFallback,
}

// SupportedFeatures are the features our GatewayClasses' status lists,
// sorted by name as the specification asks.
func SupportedFeatures(ownAddresses bool) []gwapiv1.SupportedFeature {
	names := slices.Clone(sharedFeatures)
	if ownAddresses {
		names = append(names, ownFeatures...)
	}
	slices.Sort(names)
	out := make([]gwapiv1.SupportedFeature, len(names))
	for i, n := range names {
		out[i] = gwapiv1.SupportedFeature{Name: gwapiv1.FeatureName(n)}
	}
	return out
}
