package envoy

import (
	"fmt"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	celv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/filters/cel/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A listener's LocalReplyCodes are the connection manager's local reply
// mappers: they change the status of an answer Envoy makes itself (its
// "local reply": the router's, when it could not get a response), never a
// backend's response, and the first mapper whose filter matches wins.
// Envoy 1.40 marks each cause (checked by experiment: RESPONSE_FLAGS and
// RESPONSE_CODE_DETAILS in an access log):
//   - connection refused: UF, details
//     upstream_reset_before_response_started{remote_connection_failure|
//     delayed_connect_error:_Connection_refused};
//   - backend certificate failing verification: UF, details
//     upstream_reset_before_response_started{remote_connection_failure|
//     TLS_error:...CERTIFICATE_VERIFY_FAILED...};
//   - connect timeout: UF, details
//     upstream_reset_before_response_started{connection_timeout};
//   - connection closed or reset before the response: UC or UR;
//   - no endpoint: UH, details no_healthy_upstream (not mapped: it keeps
//     its 503, as do a refused Ingress's direct responses, which carry no
//     flag).
//
// A retried request that fails in the end has URX beside the last try's
// flag, which the filters below still match. No response flag tells a
// connect timeout from another failure to connect, hence the CEL filter
// on the details.

// connectTimeoutDetails is what Envoy's details of a connect timeout
// hold.
const connectTimeoutDetails = "{connection_timeout}"

// upstreamFailureFlags are the response flags of an upstream failure:
// connection failure, connection termination, remote reset.
var upstreamFailureFlags = []string{"UF", "UC", "UR"}

// localReplyConfig renders a listener's LocalReplyCodes; nil when it has
// none.
func localReplyConfig(c *ir.LocalReplyCodes) (*hcmv3.LocalReplyConfig, error) {
	if c == nil {
		return nil, nil
	}
	var mappers []*hcmv3.ResponseMapper
	if timeout := c.ConnectTimeout; timeout != 0 && timeout != c.UpstreamFailure {
		cel, err := anypb.New(&celv3.ExpressionFilter{
			Expression: fmt.Sprintf("response.code_details.contains(%q)", connectTimeoutDetails),
		})
		if err != nil {
			return nil, fmt.Errorf("packing the connect timeout's filter: %w", err)
		}
		mappers = append(mappers, &hcmv3.ResponseMapper{
			Filter: &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_AndFilter{AndFilter: &accesslogv3.AndFilter{
				Filters: []*accesslogv3.AccessLogFilter{
					responseFlags("UF"),
					{FilterSpecifier: &accesslogv3.AccessLogFilter_ExtensionFilter{ExtensionFilter: &accesslogv3.ExtensionFilter{
						Name:       "envoy.access_loggers.extension_filters.cel",
						ConfigType: &accesslogv3.ExtensionFilter_TypedConfig{TypedConfig: cel},
					}}},
				},
			}}},
			StatusCode: wrapperspb.UInt32(timeout),
		})
	}
	if c.UpstreamFailure != 0 {
		mappers = append(mappers, &hcmv3.ResponseMapper{
			Filter:     responseFlags(upstreamFailureFlags...),
			StatusCode: wrapperspb.UInt32(c.UpstreamFailure),
		})
	}
	if len(mappers) == 0 {
		return nil, nil
	}
	return &hcmv3.LocalReplyConfig{Mappers: mappers}, nil
}

// responseFlags is a filter matching a reply with any of flags.
func responseFlags(flags ...string) *accesslogv3.AccessLogFilter {
	return &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_ResponseFlagFilter{
		ResponseFlagFilter: &accesslogv3.ResponseFlagFilter{Flags: flags},
	}}
}
