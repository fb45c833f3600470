package xds

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
)

// policyClusters is cluster a, and the named clusters all reading load
// assignment s (a backend's policy clusters: eds_cluster_config's
// service_name), routes going to the first.
func policyClusters(t *testing.T, names ...string) *translate.Resources {
	t.Helper()
	r := switched(t, names[0], "a")
	for _, name := range names {
		c := edsCluster(name)
		c.EdsClusterConfig.ServiceName = "s"
		r.Clusters = append(r.Clusters, c)
	}
	r.Endpoints = append(r.Endpoints, loadAssignment(t, "s", []string{"127.0.0.1:2"}))
	return r
}

// TestSharedEDSSendsHeldLoadAssignmentAgain: a stream holding load
// assignment s for cluster s-p1 is sent cluster s-p2, which reads s too.
// Envoy asks for nothing new (s is subscribed already), so the part sends
// s again on the stream's endpoint watch as the clusters go: from the
// update (delta) or when the server takes the cluster response to send it
// (SotW: its channels are not ordered). With no endpoint watch open then, the stream's next endpoint
// request is answered with it. Over both protocols; endpoints unchanged.
func TestSharedEDSSendsHeldLoadAssignmentAgain(t *testing.T) {
	for _, delta := range []bool{false, true} {
		for _, open := range []bool{true, false} {
			name := map[bool]string{false: protocolSotW, true: protocolDelta}[delta] + map[bool]string{true: "/watch open", false: "/next request"}[open]
			t.Run(name, func(t *testing.T) {
				s := quietServer()
				publishOK(t, s, policyClusters(t, "s-p1"))
				st := newADSStream(delta, 1, "a", "s")
				st.open(t, s.cache)
				if _, held := st.endpoints.held["s"]; !held {
					t.Fatal("the stream does not hold s")
				}
				if !open {
					st.endpoints.cancel() // as the server does before the next request
				}
				publishOK(t, s, policyClusters(t, "s-p1", "s-p2"))
				before := st.endpoints.answers
				if !delta {
					st.endpoints.drain(t, s.cache)
					if st.endpoints.answers != before {
						t.Fatal("the endpoints were answered before the server took the clusters")
					}
				}
				st.clusters.drain(t, s.cache)
				if !open {
					st.endpoints.watch(t, s.cache, nil, nil)
				}
				st.endpoints.drain(t, s.cache)
				if st.endpoints.answers != before+1 {
					t.Fatalf("after s-p2 was sent, endpoints answered %d times, want %d (s again)", st.endpoints.answers, before+1)
				}
				st.endpoints.check(t, s.Snapshot())
			})
		}
	}
}

// TestSharedEDSNothingForAStreamWithoutEndpoints: a stream that never
// asked for load assignments (an Envoy being sent its first clusters) is
// owed none, and nothing is kept for it.
func TestSharedEDSNothingForAStreamWithoutEndpoints(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s := quietServer()
			publishOK(t, s, policyClusters(t, "s-p1"))
			st := newADSStream(delta, 1, "a", "s")
			st.clusters.watch(t, s.cache, nil, nil)
			st.clusters.drain(t, s.cache)
			publishOK(t, s, policyClusters(t, "s-p1", "s-p2"))
			st.clusters.drain(t, s.cache)
			s.cache.mu.Lock()
			due := s.cache.streams[st.key].due
			s.cache.mu.Unlock()
			if len(due) != 0 {
				t.Fatalf("kept %v for a stream that holds no load assignment", due)
			}
		})
	}
}
