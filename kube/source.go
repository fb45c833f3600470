package kube

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// Source is where cluster state comes from: a live API server or a directory
// of manifests. Both hand the translator the same State.
type Source interface {
	// Run watches for changes until ctx is done. It calls changed after the
	// initial sync and after every later change; calls may be coalesced.
	Run(ctx context.Context, changed func()) error
	// State returns the current view. It is safe to call from any goroutine
	// once Run has called changed for the first time.
	State() *State
	// TakeChanges returns what changed since the previous call (everything,
	// on the first call).
	TakeChanges() Changes
	// EndpointSlices returns the current EndpointSlices of one Service, in
	// the order State uses.
	EndpointSlices(svc types.NamespacedName) []*EndpointSlice
}
