package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// An aggregate cluster (Cluster.Aggregate) sends to other clusters by
// priority: a request goes to the first of them with a ready endpoint.
// It is how a rule's Service falls back to a default backend when it has
// no ready endpoint (ingress-nginx's default-backend annotation), decided
// by Envoy for each request as endpoints come and go, so that routes never
// depend on endpoints (the endpoint fast path relies on that).

// AggregateClusterName names the aggregate cluster of clusters, whose
// first sends to backend: the backend's name, "/or/" and a hash of the
// clusters, so that it sorts with the backend's other clusters (whose
// names are the backend's name, or it, "/" and a hash) and two routes
// asking for the same fallback share it.
func AggregateClusterName(backend string, clusters []string) string {
	sum := sha256.Sum256([]byte(strings.Join(clusters, "\n")))
	return backend + "/or/" + hex.EncodeToString(sum[:5])
}

// validateAggregate checks an aggregate cluster: two clusters or more,
// each listed, none an aggregate itself, the first sending to the
// aggregate's backend; and no policy of its own (its clusters have
// theirs).
func (c *Cluster) validateAggregate(byName map[string]*Cluster) error {
	var v violations
	if c.Policy != nil {
		v.add("Policy", ErrAggregate, "an aggregate cluster has no policy of its own")
	}
	if len(c.Aggregate) < 2 {
		v.add("Aggregate", ErrAggregate, "an aggregate of %d clusters", len(c.Aggregate))
	}
	seen := map[string]bool{}
	for i, name := range c.Aggregate {
		field := func(sub string) string { return joinField(fmt.Sprintf("Aggregate[%d]", i), sub) }
		child := byName[name]
		switch {
		case child == nil:
			v.add(field(""), ErrUnlistedCluster, "aggregated cluster %q is not listed", name)
		case len(child.Aggregate) > 0:
			v.add(field(""), ErrAggregate, "aggregated cluster %q is an aggregate", name)
		case i == 0 && child.Backend != c.Backend:
			v.add(field(""), ErrAggregate, "first aggregated cluster %q sends to %q, not to the aggregate's backend", name, child.Backend)
		}
		if seen[name] {
			v.add(field(""), ErrDuplicate, "aggregated cluster %q is listed twice", name)
		}
		seen[name] = true
	}
	return v.join()
}
