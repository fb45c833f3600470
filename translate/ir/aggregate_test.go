package ir

import "testing"

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
	agg := withAggregate().Clusters[1].Name
	cluster := func(name, field string, err error, msg string) violation {
		return violation{KindCluster, name, 0, field, err, msg}
	}
	for _, tc := range []struct {
		name    string
		breakIt func(*IR)
		want    []violation
	}{
		{"unlisted child", func(m *IR) { m.Clusters = m.Clusters[:2] },
			[]violation{cluster(agg, "Aggregate[1]", ErrUnlistedCluster, `aggregated cluster "default/b/80" is not listed`)}},
		{"one child", func(m *IR) {
			m.Clusters[1].Aggregate = m.Clusters[1].Aggregate[:1]
			m.Clusters[1].Name = AggregateClusterName("default/a/80", m.Clusters[1].Aggregate)
			m.VirtualHosts[0].Routes[0].Action.Forward.Clusters[0].Cluster = m.Clusters[1].Name
		}, []violation{cluster(AggregateClusterName("default/a/80", []string{"default/a/80"}), "Aggregate", ErrAggregate, "an aggregate of 1 clusters")}},
		{"named against its clusters", func(m *IR) { m.Clusters[1].Aggregate = []string{"default/a/80", "default/a/80"} },
			[]violation{
				cluster(agg, "Name", ErrClusterName, "name should be "+AggregateClusterName("default/a/80", []string{"default/a/80", "default/a/80"})),
				cluster(agg, "Aggregate[1]", ErrDuplicate, `aggregated cluster "default/a/80" is listed twice`),
			}},
		{"first child of another backend", func(m *IR) { m.Clusters[1].Backend = "default/b/80" },
			[]violation{
				cluster(agg, "Name", ErrClusterName, "name should be "+AggregateClusterName("default/b/80", []string{"default/a/80", "default/b/80"})),
				cluster(agg, "Aggregate[0]", ErrAggregate, "not to the aggregate's backend"),
			}},
		{"with a policy", func(m *IR) { m.Clusters[1].Policy = &ClusterPolicy{LoadBalancer: Random} },
			[]violation{cluster(agg, "Policy", ErrAggregate, "no policy of its own")}},
		{"nested", func(m *IR) {
			m.Clusters[1].Aggregate = []string{"default/a/80", m.Clusters[1].Name}
			m.Clusters[1].Name = AggregateClusterName("default/a/80", m.Clusters[1].Aggregate)
		}, []violation{
			route("Action.Forward.Clusters[0].Cluster", ErrUnlistedCluster, "is not listed"),
			cluster(AggregateClusterName("default/a/80", []string{"default/a/80", agg}), "Aggregate[1]", ErrUnlistedCluster, "is not listed"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := withAggregate()
			tc.breakIt(m)
			wantViolations(t, m.Validate(), tc.want...)
		})
	}
}

// route is a violation of valid()'s route.
func route(field string, err error, msg string) violation {
	return violation{KindRoute, "a.example.com", 0, field, err, msg}
}
