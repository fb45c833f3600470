package ingress

import (
	"sort"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// byAge orders Ingresses for conflict resolution: the oldest wins, as with
// peers; ties by name. An Ingress with no creation time (from a file) counts
// as the newest.
func byAge(ingresses []*networkingv1.Ingress) []*networkingv1.Ingress {
	out := append([]*networkingv1.Ingress(nil), ingresses...)
	sort.SliceStable(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if az, cz := a.CreationTimestamp.IsZero(), c.CreationTimestamp.IsZero(); az != cz {
			return cz
		}
		if !a.CreationTimestamp.Equal(&c.CreationTimestamp) {
			return a.CreationTimestamp.Before(&c.CreationTimestamp)
		}
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		return a.Name < c.Name
	})
	return out
}

type routeKey struct {
	host     string
	pathType ir.PathType
	path     string
}

// sortProblems gives problems a total order, whatever order they were
// found in.
func sortProblems(problems []ir.Problem) {
	sort.Slice(problems, func(i, j int) bool {
		a, c := problems[i], problems[j]
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		if a.Name != c.Name {
			return a.Name < c.Name
		}
		if a.Message != c.Message {
			return a.Message < c.Message
		}
		return a.Reason < c.Reason
	})
}

// sortRoutes puts routes in Envoy match order (first match wins): every
// Exact route before any Prefix (Exact beats Prefix), and longer prefixes
// before shorter ones (the longest prefix wins). Routes of one path keep
// their order: a canary's header matches come before its mainline route.
func sortRoutes(routes []*ir.Route) {
	sort.SliceStable(routes, func(i, j int) bool {
		a, b := routes[i].Match, routes[j].Match
		if a.PathType != b.PathType {
			return a.PathType == ir.PathExact
		}
		if len(a.Path) != len(b.Path) {
			return len(a.Path) > len(b.Path)
		}
		return a.Path < b.Path
	})
}
