package ir

// UsesEndpoints reports whether the cluster sends to its backend's
// endpoints (and so reads its load assignment), rather than to the one
// ServiceAddress of its policy.
func (c *Cluster) UsesEndpoints() bool { return c.Policy == nil || c.Policy.ServiceAddress == "" }
