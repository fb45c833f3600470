package ir

import (
	"strings"
	"testing"
)

// withAggregate is valid() with a fallback: the route sends to an
// aggregate of default/a/80 then default/b/80.
func withAggregate() *IR {
	m := valid()
	children := []string{"default/a/80", "default/b/80"}
	agg := &Cluster{Name: AggregateClusterName("default/a/80", children), Backend: "default/a/80", Aggregate: children}
	m.Clusters = []*Cluster{m.Clusters[0], agg, {Name: "default/b/80", Backend: "default/b/80"}}
	m.Backends = append(m.Backends, &Backend{Name: "default/b/80", Port: 80})
	m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].Cluster = agg.Name
	return m
}

func TestValidateAggregate(t *testing.T) {
	if err := withAggregate().Validate(); err != nil {
		t.Fatalf("the valid IR fails: %v", err)
	}
	for _, tc := range []struct {
		name    string
		breakIt func(*IR)
		want    string
	}{
		{"unlisted child", func(m *IR) { m.Clusters = m.Clusters[:2] }, `aggregated cluster "default/b/80" is not listed`},
		{"one child", func(m *IR) {
			m.Clusters[1].Aggregate = m.Clusters[1].Aggregate[:1]
			m.Clusters[1].Name = AggregateClusterName("default/a/80", m.Clusters[1].Aggregate)
			m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].Cluster = m.Clusters[1].Name
		}, "an aggregate of 1 clusters"},
		{"named against its clusters", func(m *IR) { m.Clusters[1].Aggregate = []string{"default/a/80", "default/a/80"} }, "name should be"},
		{"first child of another backend", func(m *IR) { m.Clusters[1].Backend = "default/b/80" }, "not to the aggregate's backend"},
		{"with a policy", func(m *IR) { m.Clusters[1].Policy = &ClusterPolicy{LoadBalancer: Random} }, "no policy of its own"},
		{"nested", func(m *IR) {
			m.Clusters[1].Aggregate = []string{"default/a/80", m.Clusters[1].Name}
			m.Clusters[1].Name = AggregateClusterName("default/a/80", m.Clusters[1].Aggregate)
		}, "is not listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := withAggregate()
			tc.breakIt(m)
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
