package ingress

import (
	"reflect"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's canaries (its controller's mergeAlternativeBackends and
// balancer.lua's route_to_alternative_balancer), as the merge of a host
// sees them:
//   - a canary Ingress creates no host, path, certificate or redirect: each
//     of its paths adds its Service as the alternative backend of the
//     mainline (not canary) path of the same host, path and path type; its
//     spec.defaultBackend, of every path of the default server (here the
//     wildcard host);
//   - a canary path with no such mainline is not served;
//   - a mainline path takes one alternative: the oldest canary's (nginx
//     uses only the first of its alternative backends);
//   - per request: the header decides (always, never, or the value or
//     pattern), then the cookie (always, never), then the weight.
//
// In Envoy's terms: routes with header matches ahead of the mainline
// route, each forwarding to the canary or the mainline as it decides, and
// the mainline route itself split by weight. Every route keeps the mainline
// route's policy, as nginx serves a canary's requests from the mainline's
// location.

// canaryIntent is what a canary Ingress's annotations ask.
type canaryIntent struct {
	header        string // request header name; "": none
	headerValue   string
	headerPattern string
	cookie        string
	weight, total int
	// legacyAffinity (affinity-canary-behavior "legacy"): the requests
	// sent to the canary get no session cookie.
	legacyAffinity bool
}

// defaultCanaryTotal is the least total balancer.lua divides by.
const defaultCanaryTotal = 100

// parseCanary reads the canary keys: nil when the Ingress is not a canary.
// Canary keys on an Ingress that is not a canary make it invalid to
// ingress-nginx, which then ignores them: the Ingress is served as a
// mainline.
func parseCanary(values *annotations.Values) (*canaryIntent, []problem) {
	enabled, _ := annotations.Canary.Get(values)
	c := canaryIntent{}
	c.weight, _ = annotations.CanaryWeight.Get(values)
	c.total, _ = annotations.CanaryWeightTotal.Get(values)
	c.header, _ = annotations.CanaryByHeader.Get(values)
	c.headerValue, _ = annotations.CanaryByHeaderValue.Get(values)
	c.headerPattern, _ = annotations.CanaryByHeaderPattern.Get(values)
	c.cookie, _ = annotations.CanaryByCookie.Get(values)
	behavior, _ := annotations.AffinityCanaryBehavior.Get(values)
	c.legacyAffinity = behavior == "legacy"
	if !enabled {
		if c.weight > 0 || c.header != "" || c.headerValue != "" || c.headerPattern != "" || c.cookie != "" {
			return nil, []problem{problemf("CanaryNotEnabled", "canary annotations are set but %s is not \"true\": they are ignored and the Ingress is served as a mainline, as ingress-nginx does",
				annotations.Canary.Name())}
		}
		return nil, nil
	}
	c.total = max(c.total, defaultCanaryTotal)
	// nginx's "_" in a header variable stands for "-" (and it ignores
	// request headers with underscores).
	c.header = strings.ReplaceAll(c.header, "_", "-")
	return &c, nil
}

// canaryMerge adds a host's canary fragments (oldest first) to its merged
// mainline routes, kept in order, and returns the new order with the
// clusters they need and the problems found.
func canaryMerge(host string, kept []hostRoute, canaries []*fragment) ([]hostRoute, []*clusterRef, []ir.Problem) {
	var problems []ir.Problem
	var clusters []*clusterRef
	type pathKey struct {
		raw   string
		exact bool
	}
	// taken records, per mainline route, the canary that won it.
	taken := make([]types.NamespacedName, len(kept))
	before := make([][]hostRoute, len(kept))
	for _, f := range canaries {
		ing := f.ingress
		name := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
		for _, hr := range f.routes {
			if hr.host != host {
				continue
			}
			catchAll := hr.where.label == defaultBackendField
			matched := false
			for i := range kept {
				main := kept[i]
				if catchAll {
					if main.host != ir.WildcardHost {
						continue
					}
				} else if (pathKey{main.nginx.raw, main.nginx.exact}) != (pathKey{hr.nginx.raw, hr.nginx.exact}) {
					continue
				}
				matched = true
				if hr.cluster == nil {
					break // its backend is unavailable, already reported
				}
				if main.cluster == nil || main.route.Action.Forward == nil {
					problems = append(problems, newProblem(ing, "CanaryNotApplied", "%s: host %q, path %q: the mainline route does not forward to a backend (it is unavailable, or the route redirects): canary not applied", hr.where, host, hr.nginx.raw))
					continue
				}
				if main.cluster.backend.name == hr.cluster.backend.name {
					problems = append(problems, newProblem(ing, "CanaryNotApplied", "%s: host %q, path %q: the canary's backend %s is the mainline's: canary not applied", hr.where, host, hr.nginx.raw, hr.cluster.backend.name))
					continue
				}
				if taken[i] != (types.NamespacedName{}) {
					problems = append(problems, newProblem(ing, "CanaryConflict", "%s: host %q, path %q already has the canary of the older Ingress %s, and only one is used: ignored", hr.where, host, hr.nginx.raw, taken[i]))
					continue
				}
				taken[i] = name
				ref := canaryCluster(main.cluster, hr.cluster)
				clusters = append(clusters, ref.withAggregated()...)
				var routes []*ir.Route
				routes, kept[i].route = f.canary.routes(main.route, ref.share(1))
				// The access log's $proxy_alternative_upstream_name: the
				// canary's upstream when its cluster takes a request.
				if log := withCanary(main.route.Log, hr.route.Log, ref.name); log != main.route.Log {
					for _, r := range append(routes, kept[i].route) {
						r.Log = log
					}
				}
				for _, r := range routes {
					c := main
					c.route = r
					if r.Action.Forward.Clusters[0].Cluster == ref.name {
						c.cluster = ref
					}
					before[i] = append(before[i], c)
				}
				if !catchAll {
					break
				}
			}
			if !matched {
				problems = append(problems, newProblem(ing, "CanaryWithoutMainline", "%s: host %q, path %q: no mainline (not canary) Ingress serves this host and path, and a canary adds to one: not served", hr.where, host, hr.nginx.raw))
			}
		}
	}
	if len(clusters) == 0 {
		return kept, nil, problems
	}
	out := make([]hostRoute, 0, len(kept)+len(clusters)*4)
	for i, hr := range kept {
		out = append(out, before[i]...)
		out = append(out, hr)
	}
	return out, clusters, problems
}

// canaryCluster is the cluster of a canary's backend beside a mainline
// route's cluster: reached as the mainline's (canaryClusterPolicy), and
// with AUTO_HTTP over TLS as the mainline's is over TLS.
func canaryCluster(mainline, own *clusterRef) *clusterRef {
	policy := canaryClusterPolicy(mainline.policy, own.policy)
	ref := &clusterRef{name: ir.ClusterName(own.backend.name, policy), backend: own.backend, policy: policy}
	if mainline.overTLS != nil {
		policy := canaryClusterPolicy(mainline.overTLS.policy, own.policy)
		ref.overTLS = &clusterRef{name: ir.ClusterName(own.backend.name, policy), backend: own.backend, policy: policy}
	}
	return ref
}

// canaryClusterPolicy is how the canary's backend is reached: as the
// mainline's location reaches its own (protocol, TLS, connect timeout, load
// balancer, which goes with the mainline route's hash), but at the canary's
// own address when service-upstream gave it its Service's cluster IP.
func canaryClusterPolicy(mainline, own *ir.ClusterPolicy) *ir.ClusterPolicy {
	var p ir.ClusterPolicy
	if mainline != nil {
		p = *mainline
	}
	p.ServiceAddress = ""
	if own != nil {
		p.ServiceAddress = own.ServiceAddress
	}
	if p.IsDefault() {
		return nil
	}
	return &p
}

// routes are the routes a canary puts ahead of a mainline route (header
// and cookie matches, in the order balancer.lua tries them) and the
// mainline route split by weight. Each is a new value: the mainline's is
// its fragment's, shared with other merges.
func (c *canaryIntent) routes(main *ir.Route, canary ir.WeightedCluster) ([]*ir.Route, *ir.Route) {
	mainline := main.Action.Forward
	toCanary := &ir.Forward{Clusters: []ir.WeightedCluster{canary}}
	// The canary's sessions are the mainline's (ingress-nginx copies its
	// affinity to the canary), unless told "legacy".
	canaryPolicy := main.Policy
	if c.legacyAffinity && main.Policy != nil && main.Policy.Affinity != nil {
		p := *main.Policy
		p.Affinity = nil
		canaryPolicy = &p
		if reflect.ValueOf(p).IsZero() {
			canaryPolicy = nil
		}
	}
	var out []*ir.Route
	with := func(name string, value ir.StringMatch, fwd *ir.Forward) {
		r := *main
		r.Match.Headers = append(slices.Clone(main.Match.Headers), ir.HeaderMatch{Name: name, Value: value})
		r.Action = ir.Action{Forward: fwd}
		if fwd == toCanary {
			r.Policy = canaryPolicy
		}
		out = append(out, &r)
	}
	if c.header != "" {
		switch {
		case c.headerValue != "":
			with(c.header, ir.StringMatch{Exact: c.headerValue}, toCanary)
		case c.headerPattern != "":
			// ngx.re.match finds the pattern anywhere in the value;
			// Envoy's regex matches the whole value.
			with(c.header, ir.StringMatch{Regex: ".*(?:" + c.headerPattern + ").*"}, toCanary)
		default:
			with(c.header, ir.StringMatch{Exact: "always"}, toCanary)
			with(c.header, ir.StringMatch{Exact: "never"}, mainline)
		}
	}
	if c.cookie != "" {
		with("cookie", ir.StringMatch{Regex: cookieIs(c.cookie, "always")}, toCanary)
		with("cookie", ir.StringMatch{Regex: cookieIs(c.cookie, "never")}, mainline)
	}
	split := *main
	switch {
	case c.weight >= c.total:
		split.Action = ir.Action{Forward: toCanary}
		split.Policy = canaryPolicy
	case c.weight > 0:
		mainShare, canaryShare := mainline.Clusters[0], canary // each with its cluster over TLS, if any
		mainShare.Weight, canaryShare.Weight = uint32(c.total-c.weight), uint32(c.weight)
		clusters := []ir.WeightedCluster{mainShare, canaryShare}
		split.Action = ir.Action{Forward: &ir.Forward{Clusters: clusters}}
	}
	return out, &split
}

// cookieIs is a regular expression over the Cookie header (cookies joined
// by ";") for a cookie of that name and value. The name is compared in any
// case, as nginx's $cookie_ variables compare it; the value exactly, as
// balancer.lua does.
func cookieIs(name, value string) string {
	return `(?:.*;)?\s*(?i:` + regexp.QuoteMeta(name) + `)=` + regexp.QuoteMeta(value) + `\s*(?:;.*)?`
}
