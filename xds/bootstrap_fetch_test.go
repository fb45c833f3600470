package xds

import (
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"
)

// TestBootstrapWaitsForFirstConfiguration: the listeners and clusters come
// with no initial fetch timeout (zero, not unset: unset is Envoy's 15 s), so
// that an Envoy cut off from the control plane never turns ready without
// them. The kind suite's readiness test checks the behaviour on a cluster.
func TestBootstrapWaitsForFirstConfiguration(t *testing.T) {
	b, err := Bootstrap(BootstrapOptions{XDSAddress: "ingress-xds.ingress-xds.svc:18000", AdminAddress: "127.0.0.1:9901", NodeID: "envoy-0"})
	if err != nil {
		t.Fatal(err)
	}
	for name, timeout := range map[string]*durationpb.Duration{
		"lds_config": b.GetDynamicResources().GetLdsConfig().GetInitialFetchTimeout(),
		"cds_config": b.GetDynamicResources().GetCdsConfig().GetInitialFetchTimeout(),
	} {
		if timeout == nil || timeout.AsDuration() != 0 {
			t.Errorf("%s.initial_fetch_timeout is %v, want 0s (wait for the control plane)", name, timeout)
		}
	}
}
