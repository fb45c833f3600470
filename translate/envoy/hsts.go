package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// hstsHeaders is the Strict-Transport-Security header of every response of
// an HTTPS listener's route configurations, replacing the backend's, as
// ingress-nginx's more_set_headers does on its TLS servers; none when the
// listener has no HSTS.
func hstsHeaders(l *ir.Listener) []*corev3.HeaderValueOption {
	if l.HSTS == "" {
		return nil
	}
	return []*corev3.HeaderValueOption{{
		Header:       &corev3.HeaderValue{Key: "strict-transport-security", Value: l.HSTS},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}}
}
