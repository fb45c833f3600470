package gatewayapi

import (
	"fmt"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// timeouts is a rule's: request bounds the whole exchange ("0s": no
// bound). Without retries (which are not read yet) a request to the
// backend is the whole exchange, so backendRequest bounds it too: the
// shorter of the two is the bound. Neither: nil, Envoy's default.
func timeouts(t *gwapiv1.HTTPRouteTimeouts) (*ir.Timeouts, error) {
	if t == nil || t.Request == nil && t.BackendRequest == nil {
		return nil, nil
	}
	var bound time.Duration
	set := false
	for _, d := range []struct {
		field string
		value *gwapiv1.Duration
	}{{"request", t.Request}, {"backendRequest", t.BackendRequest}} {
		if d.value == nil {
			continue
		}
		v, err := time.ParseDuration(string(*d.value))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("timeouts.%s %q is not a duration", d.field, *d.value)
		}
		if v == 0 {
			continue // no bound
		}
		if !set || v < bound {
			bound, set = v, true
		}
	}
	return &ir.Timeouts{Request: ir.Duration(bound)}, nil
}
