package xds

import "github.com/prometheus/client_golang/prometheus"

// Gatherer returns the server's metrics, for whoever serves the process's
// /metrics: they live in a registry of the server's own (no package-level
// state), which nobody else writes to.
func (s *Server) Gatherer() prometheus.Gatherer {
	return s.metrics.registry
}
