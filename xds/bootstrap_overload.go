package xds

import (
	"time"

	overloadv3 "github.com/envoyproxy/go-control-plane/envoy/config/overload/v3"
	fixedheapv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/fixed_heap/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The overload manager: with a heap limit, an Envoy near it sheds load
// instead of growing until the kernel kills it (every connection of the
// node lost at once, and a restart that must fetch everything again).
// Pressure is the heap in use (tcmalloc's, free pages excluded) over the
// limit; as it rises Envoy, in turn:
const (
	// returns free pages to the system,
	shrinkHeapAt = 0.90
	// closes HTTP connections after their current request (no keep-alive),
	disableKeepaliveAt = 0.95
	// answers new requests with 503 at once (the body says "envoy
	// overloaded"): a client retries another node,
	stopRequestsAt = 0.98
	// and stops accepting connections.
	rejectConnectionsAt = 0.99

	fixedHeapMonitor = "envoy.resource_monitors.fixed_heap"
)

// MemoryLimitHeapShare is the part of a container's memory limit given to
// Envoy's heap when only the limit is known: the rest is what is not heap
// (the binary's pages, thread stacks, socket buffers, the kernel's share).
const MemoryLimitHeapShare = 0.85

// overloadManager returns the overload manager for a heap of maxHeap
// bytes.
func overloadManager(maxHeap uint64) (*overloadv3.OverloadManager, error) {
	monitor, err := anypb.New(&fixedheapv3.FixedHeapConfig{MaxHeapSizeBytes: maxHeap})
	if err != nil {
		return nil, err
	}
	at := func(pressure float64) []*overloadv3.Trigger {
		return []*overloadv3.Trigger{{
			Name:         fixedHeapMonitor,
			TriggerOneof: &overloadv3.Trigger_Threshold{Threshold: &overloadv3.ThresholdTrigger{Value: pressure}},
		}}
	}
	return &overloadv3.OverloadManager{
		// How often the heap is read: cheap (tcmalloc's counters).
		RefreshInterval: durationpb.New(250 * time.Millisecond),
		ResourceMonitors: []*overloadv3.ResourceMonitor{{
			Name:       fixedHeapMonitor,
			ConfigType: &overloadv3.ResourceMonitor_TypedConfig{TypedConfig: monitor},
		}},
		Actions: []*overloadv3.OverloadAction{
			{Name: "envoy.overload_actions.shrink_heap", Triggers: at(shrinkHeapAt)},
			{Name: "envoy.overload_actions.disable_http_keepalive", Triggers: at(disableKeepaliveAt)},
			{Name: "envoy.overload_actions.stop_accepting_requests", Triggers: at(stopRequestsAt)},
		},
		LoadshedPoints: []*overloadv3.LoadShedPoint{
			{Name: "envoy.load_shed_points.tcp_listener_accept", Triggers: at(rejectConnectionsAt)},
		},
	}, nil
}
