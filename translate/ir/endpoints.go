package ir

// UsesEndpoints reports whether the cluster sends to its backend's
// endpoints (and so reads its load assignment), rather than to the one
// ServiceAddress of its policy.
func (c *Cluster) UsesEndpoints() bool { return c.Policy == nil || c.Policy.ServiceAddress == "" }

// EndpointBackends names the backends some cluster sends to the endpoints
// of: those, but ExternalName ones, have a load assignment.
func (r *IR) EndpointBackends() map[string]bool {
	out := make(map[string]bool, len(r.Backends))
	for _, c := range r.Clusters {
		if c.UsesEndpoints() {
			out[c.Backend] = true
		}
	}
	return out
}
