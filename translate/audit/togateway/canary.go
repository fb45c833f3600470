package togateway

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// canary is one path of a canary Ingress: ingress-nginx sends the
// requests of the mainline path of the same host, path and path type to
// its backend by a header (always, never, a value or a pattern), then a
// cookie (always, never), then canary-weight of canary-weight-total (100
// at least), which rules with header matches ahead of a rule of weighted
// backendRefs say.
type canary struct {
	ing                                *networkingv1.Ingress
	backend                            networkingv1.IngressBackend
	header, headerValue, headerPattern string
	cookie                             string
	weight, total                      int
}

// canaryKey names a path as a canary joins it.
func canaryKey(namespace, host string, p networkingv1.HTTPIngressPath) string {
	pathType := networkingv1.PathTypePrefix
	if p.PathType != nil {
		pathType = *p.PathType
	}
	return fmt.Sprintf("%s %s %s %s", namespace, host, pathType, cmp.Or(p.Path, "/"))
}

// findCanaries lists the canaries' paths by the key of the path they
// join, oldest first (a mainline path takes the oldest canary's, as
// nginx uses the first alternative backend).
func (c *converter) findCanaries(ings []*networkingv1.Ingress) map[string][]*canary {
	out := map[string][]*canary{}
	for _, ing := range ings {
		values, _ := c.reg.Parse(ing.Annotations)
		if on, _ := annotations.Canary.Get(values); !on {
			continue
		}
		can := canary{ing: ing}
		can.weight, _ = annotations.CanaryWeight.Get(values)
		can.total, _ = annotations.CanaryWeightTotal.Get(values)
		can.total = max(can.total, 100)
		can.header, _ = annotations.CanaryByHeader.Get(values)
		// nginx's "_" in a header variable stands for "-".
		can.header = strings.ReplaceAll(can.header, "_", "-")
		can.headerValue, _ = annotations.CanaryByHeaderValue.Get(values)
		can.headerPattern, _ = annotations.CanaryByHeaderPattern.Get(values)
		can.cookie, _ = annotations.CanaryByCookie.Get(values)
		for _, hp := range hostsOf(ing) {
			for _, p := range hp.paths {
				key := canaryKey(ing.Namespace, hp.host, p)
				path := can
				path.backend = p.Backend
				out[key] = append(out[key], &path)
			}
		}
	}
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b *canary) int { return a.ing.CreationTimestamp.Compare(b.ing.CreationTimestamp.Time) })
	}
	return out
}

// addCanaries splits a mainline rule's requests with the oldest canary of
// its path: the rules it returns go ahead of the rule (a header or cookie
// match each, in the order nginx's balancer tries them), and the rule's
// own requests are split by weight.
func (c *converter) addCanaries(rule *gwapiv1.HTTPRouteRule, ing *networkingv1.Ingress, host string, p networkingv1.HTTPIngressPath, where string, out *Ingress) []gwapiv1.HTTPRouteRule {
	list := c.canaries[canaryKey(ing.Namespace, host, p)]
	if len(list) == 0 {
		return nil
	}
	can := list[0]
	ref, ok := c.backendRef(can.ing, can.backend, fmt.Sprintf("%s (canary %s)", where, can.ing.Name), out)
	if !ok {
		return nil
	}
	mainline := rule.BackendRefs[0]
	var ahead []gwapiv1.HTTPRouteRule
	with := func(name string, typ gwapiv1.HeaderMatchType, value string, to gwapiv1.HTTPBackendRef) {
		r := *rule
		m := rule.Matches[0]
		m.Headers = append(slices.Clone(m.Headers), gwapiv1.HTTPHeaderMatch{Type: ptr(typ), Name: gwapiv1.HTTPHeaderName(name), Value: value})
		r.Matches = []gwapiv1.HTTPRouteMatch{m}
		r.BackendRefs = []gwapiv1.HTTPBackendRef{to}
		ahead = append(ahead, r)
	}
	if can.header != "" {
		switch {
		case can.headerValue != "":
			with(can.header, gwapiv1.HeaderMatchExact, can.headerValue, ref)
		case can.headerPattern != "":
			// ngx.re.match finds the pattern anywhere in the value; a
			// RegularExpression matches the whole value.
			with(can.header, gwapiv1.HeaderMatchRegularExpression, ".*(?:"+can.headerPattern+").*", ref)
		default:
			with(can.header, gwapiv1.HeaderMatchExact, "always", ref)
			with(can.header, gwapiv1.HeaderMatchExact, "never", mainline)
		}
	}
	if can.cookie != "" {
		with("Cookie", gwapiv1.HeaderMatchRegularExpression, cookieIs(can.cookie, "always"), ref)
		with("Cookie", gwapiv1.HeaderMatchRegularExpression, cookieIs(can.cookie, "never"), mainline)
	}
	if can.weight > 0 {
		w := min(can.weight, can.total)
		rule.BackendRefs[0].Weight = ptr(int32(can.total - w))
		ref.Weight = ptr(int32(w))
		rule.BackendRefs = append(rule.BackendRefs, ref)
	}
	return ahead
}

// cookieIs is a regular expression over the Cookie header (cookies
// joined by ";") for a cookie of that name and value: the name in any
// case, as nginx's $cookie_ variables compare it, the value exactly, as
// balancer.lua does. It is the Ingress front-end's (translate/ingress/
// canary.go), whose routing the check compares with this one's.
func cookieIs(name, value string) string {
	return `(?:.*;)?\s*(?i:` + regexp.QuoteMeta(name) + `)=` + regexp.QuoteMeta(value) + `\s*(?:;.*)?`
}

// canaryOutcomes records what became of a canary Ingress's keys: it has
// no Route of its own; a weight-only canary's backends are weighted
// backendRefs of the mainline's Routes.
func (c *converter) canaryOutcomes(ing *networkingv1.Ingress, values *annotations.Values, done outcomes) {
	mainlines := c.mainlinesOf(ing)
	if len(mainlines) == 0 {
		done.set(annotations.Canary.Name(), NotConverted, "no mainline Ingress has its host, path and path type (nginx does not serve it either)")
		return
	}
	done.set(annotations.Canary.Name(), Converted, "its backend is a backendRef of the mainline's HTTPRoutes %v", mainlines)
	for _, k := range []string{annotations.CanaryWeight.Name(), annotations.CanaryWeightTotal.Name()} {
		done.set(k, Converted, "the backendRefs' weights")
	}
	for _, k := range []string{annotations.CanaryByHeader.Name(), annotations.CanaryByHeaderValue.Name()} {
		done.set(k, Converted, "rules with an Exact header match ahead of the mainline's, as nginx's balancer tries the header first")
	}
	done.set(annotations.CanaryByHeaderPattern.Name(), Converted, "a rule with a RegularExpression header match (the pattern anywhere in the value)")
	done.set(annotations.CanaryByCookie.Name(), Converted,
		"rules with a RegularExpression match of the Cookie header (always, never); header regular expressions are implementation-specific in Gateway API")
}

// mainlinesOf names the HTTPRoutes of the mainline Ingresses a canary's
// paths join.
func (c *converter) mainlinesOf(can *networkingv1.Ingress) []string {
	want := map[string]bool{}
	for _, hp := range hostsOf(can) {
		for _, p := range hp.paths {
			want[canaryKey(can.Namespace, hp.host, p)] = true
		}
	}
	var out []string
	for _, ing := range c.st.Ingresses {
		values, _ := c.reg.Parse(ing.Annotations)
		if on, _ := annotations.Canary.Get(values); on || ing.Namespace != can.Namespace {
			continue
		}
		for _, hp := range hostsOf(ing) {
			for _, p := range hp.paths {
				if want[canaryKey(ing.Namespace, hp.host, p)] {
					out = append(out, routeName(ing, hp.host))
					break
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
