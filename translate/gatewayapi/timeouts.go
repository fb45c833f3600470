package gatewayapi

import (
	"fmt"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// timeouts is a rule's without retries: request bounds the whole
// exchange ("0s": no bound), and a request to the backend is the whole
// exchange, so backendRequest bounds it too: the shorter of the two is
// the bound. Neither: nil, Envoy's default. With retries, see retries.
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

// defaultRetryAttempts is how often a rule with a retry stanza but no
// attempts retries: Gateway API leaves it to the implementation, and
// Envoy's own default is one.
const defaultRetryAttempts = 1

// retries are a rule's retry stanza with its timeouts: the codes named,
// and, as the specification says an implementation SHOULD once a stanza
// is there, connection failures, resets and refused streams; attempts
// (Envoy's default when unset) and backoff (Envoy's fully jittered
// back-off from that base). backendRequest then bounds each try, and
// request the whole exchange, retries included. No stanza: nil, with t
// as timeouts says.
func retries(r *gwapiv1.HTTPRouteRetry, t *gwapiv1.HTTPRouteTimeouts) (*ir.Retries, *ir.Timeouts, error) {
	if r == nil {
		to, err := timeouts(t)
		return nil, to, err
	}
	out := &ir.Retries{Attempts: defaultRetryAttempts, On: []string{"connect-failure", "refused-stream", "reset"}}
	if r.Attempts != nil {
		if *r.Attempts < 1 {
			return nil, nil, fmt.Errorf("retry.attempts %d is under 1", *r.Attempts)
		}
		out.Attempts = uint32(*r.Attempts)
	}
	for _, c := range r.Codes {
		if c < 400 || c > 599 {
			return nil, nil, fmt.Errorf("retry.codes: %d is not an error status", c)
		}
		out.StatusCodes = append(out.StatusCodes, uint32(c))
	}
	if len(out.StatusCodes) > 0 {
		out.On = append(out.On, "retriable-status-codes")
	}
	if r.Backoff != nil {
		d, err := time.ParseDuration(string(*r.Backoff))
		if err != nil || d < time.Millisecond {
			return nil, nil, fmt.Errorf("retry.backoff %q is not a duration of a millisecond or more", *r.Backoff)
		}
		out.Backoff = ir.Duration(d)
	}
	if t == nil {
		return out, nil, nil
	}
	to := &ir.Timeouts{}
	for _, d := range []struct {
		field string
		value *gwapiv1.Duration
		into  *ir.Duration
	}{{"request", t.Request, &to.Request}, {"backendRequest", t.BackendRequest, &out.PerTry}} {
		if d.value == nil {
			continue
		}
		v, err := time.ParseDuration(string(*d.value))
		if err != nil || v < 0 {
			return nil, nil, fmt.Errorf("timeouts.%s %q is not a duration", d.field, *d.value)
		}
		*d.into = ir.Duration(v)
	}
	if t.Request == nil {
		to = nil // Envoy's default
	}
	return out, to, nil
}
