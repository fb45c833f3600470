package envoy

import (
	"slices"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// applyForwardPolicy sets the parts of a route policy that shape how a
// request is forwarded: timeouts, retries, rewrites, mirrors.
func applyForwardPolicy(ra *routev3.RouteAction, p *ir.RoutePolicy) {
	if p == nil {
		return
	}
	if t := p.Timeouts; t != nil {
		// Zero is no bound, which Envoy spells as a zero duration.
		ra.Timeout = durationpb.New(time.Duration(t.Request))
		if t.Idle > 0 {
			ra.IdleTimeout = durationpb.New(time.Duration(t.Idle))
		}
	}
	if r := p.Retries; r != nil {
		ra.RetryPolicy = retryPolicy(r)
		if r.PerTry > 0 {
			ra.RetryPolicy.PerTryTimeout = durationpb.New(time.Duration(r.PerTry))
		}
	}
	if rw := p.Rewrite; rw != nil {
		ra.PrefixRewrite = rw.Prefix
		if rw.Regex != nil {
			ra.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{
				Pattern:      &matcherv3.RegexMatcher{Regex: rw.Regex.Pattern},
				Substitution: rw.Regex.Substitution,
			}
		}
		if rw.Host != "" {
			ra.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: rw.Host}
		}
	}
	ra.HashPolicy = hashPolicies(p.Hash)
	for _, m := range p.Mirrors {
		ra.RequestMirrorPolicies = append(ra.RequestMirrorPolicies, mirrorPolicy(m)) // mirror.go
	}
}

// applyHeaderPolicy sets the header changes of a route policy.
func applyHeaderPolicy(route *routev3.Route, p *ir.RoutePolicy) {
	if h := p.RequestHeaders; h != nil {
		route.RequestHeadersToRemove = setRemoves(h)
		route.RequestHeadersToAdd = headerOptions(h)
	}
	if h := p.ResponseHeaders; h != nil {
		route.ResponseHeadersToRemove = setRemoves(h)
		route.ResponseHeadersToAdd = headerOptions(h)
	}
}

// setRemoves are the headers h removes: its Remove, and each Set header
// whose value is made of parts, unless a part reads the header itself.
// Envoy adds no header whose value comes out empty, and would then leave
// the one it meant to replace; Set replaces it with nothing, as nginx's
// proxy_set_header and more_set_headers do with an empty value. Envoy
// removes before it adds, so the value is still read from the message as
// it came.
func setRemoves(h *ir.HeaderChanges) []string {
	out := h.Remove
	for _, s := range h.Set {
		if len(s.Parts) == 0 || slices.ContainsFunc(s.Parts, func(p ir.ValuePart) bool {
			return (p.Var == ir.VarRequestHeader || p.Var == ir.VarResponseHeader) && strings.EqualFold(p.Name, s.Name)
		}) {
			continue
		}
		if !slices.ContainsFunc(out, func(r string) bool { return strings.EqualFold(r, s.Name) }) {
			out = append(slices.Clip(out), strings.ToLower(s.Name))
		}
	}
	return out
}

func headerOptions(h *ir.HeaderChanges) []*corev3.HeaderValueOption {
	var out []*corev3.HeaderValueOption
	for _, s := range h.Set {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: s.Name, Value: headerValue(s)},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	for _, a := range h.Add {
		out = append(out, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: a.Name, Value: headerValue(a)},
			AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
		})
	}
	return out
}
