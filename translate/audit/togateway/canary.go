package togateway

import (
	"cmp"
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// canary is one path of a canary Ingress that chooses by weight alone:
// ingress-nginx sends canary-weight of canary-weight-total (100 at
// least) of the requests of the mainline path of the same host, path and
// path type to its backend, which a rule's weighted backendRefs say.
type canary struct {
	ing           *networkingv1.Ingress
	backend       networkingv1.IngressBackend
	weight, total int
}

// canaryKey names a path as a canary joins it.
func canaryKey(namespace, host string, p networkingv1.HTTPIngressPath) string {
	pathType := networkingv1.PathTypePrefix
	if p.PathType != nil {
		pathType = *p.PathType
	}
	return fmt.Sprintf("%s %s %s %s", namespace, host, pathType, cmp.Or(p.Path, "/"))
}

// byWeightOnly reports whether a canary's annotations choose by weight
// alone: those are the canaries converted.
func byWeightOnly(values *annotations.Values) bool {
	for _, set := range []bool{has(annotations.CanaryByHeader, values), has(annotations.CanaryByHeaderValue, values),
		has(annotations.CanaryByHeaderPattern, values), has(annotations.CanaryByCookie, values)} {
		if set {
			return false
		}
	}
	return true
}

func has[T any](k annotations.Key[T], v *annotations.Values) bool {
	_, ok := k.Get(v)
	return ok
}

// findCanaries lists the weight-only canaries' paths by the key of the
// path they join, oldest first (a mainline path takes the oldest
// canary's, as nginx uses the first alternative backend).
func (c *converter) findCanaries(ings []*networkingv1.Ingress) map[string][]*canary {
	out := map[string][]*canary{}
	for _, ing := range ings {
		values, _ := c.reg.Parse(ing.Annotations)
		if on, _ := annotations.Canary.Get(values); !on || !byWeightOnly(values) {
			continue
		}
		weight, _ := annotations.CanaryWeight.Get(values)
		total, _ := annotations.CanaryWeightTotal.Get(values)
		for _, hp := range hostsOf(ing) {
			for _, p := range hp.paths {
				key := canaryKey(ing.Namespace, hp.host, p)
				out[key] = append(out[key], &canary{ing: ing, backend: p.Backend, weight: weight, total: max(total, 100)})
			}
		}
	}
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b *canary) int { return a.ing.CreationTimestamp.Compare(b.ing.CreationTimestamp.Time) })
	}
	return out
}

// addCanaries splits a mainline rule's requests with the oldest canary of
// its path.
func (c *converter) addCanaries(rule *gwapiv1.HTTPRouteRule, ing *networkingv1.Ingress, host string, p networkingv1.HTTPIngressPath, where string, out *Ingress) {
	list := c.canaries[canaryKey(ing.Namespace, host, p)]
	if len(list) == 0 || list[0].weight <= 0 {
		return
	}
	can := list[0]
	ref, ok := c.backendRef(can.ing, can.backend, fmt.Sprintf("%s (canary %s)", where, can.ing.Name), out)
	if !ok {
		return
	}
	w := min(can.weight, can.total)
	rule.BackendRefs[0].Weight = ptr(int32(can.total - w))
	ref.Weight = ptr(int32(w))
	rule.BackendRefs = append(rule.BackendRefs, ref)
}

// canaryOutcomes records what became of a canary Ingress's keys: it has
// no Route of its own; a weight-only canary's backends are weighted
// backendRefs of the mainline's Routes.
func (c *converter) canaryOutcomes(ing *networkingv1.Ingress, values *annotations.Values, done outcomes) {
	if !byWeightOnly(values) {
		done.set(annotations.Canary.Name(), NotConverted, "a canary that chooses by header or cookie: Gateway API's header matches do not fall back to a weight as nginx's balancer does, and a cookie match has no standard form")
		return
	}
	mainlines := c.mainlinesOf(ing)
	if len(mainlines) == 0 {
		done.set(annotations.Canary.Name(), NotConverted, "no mainline Ingress has its host, path and path type (nginx does not serve it either)")
		return
	}
	done.set(annotations.Canary.Name(), Converted, "its backend is a weighted backendRef of the mainline's HTTPRoutes %v", mainlines)
	for _, k := range []string{annotations.CanaryWeight.Name(), annotations.CanaryWeightTotal.Name()} {
		done.set(k, Converted, "the backendRefs' weights")
	}
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
