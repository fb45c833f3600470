package main

import (
	"bytes"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	fixedheapv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/fixed_heap/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// bootstrap's heap flags reach the overload manager's fixed heap: --max-heap
// as given, else 85% of --memory-limit (the Downward API gives bytes), else
// no overload manager; a size that does not parse is refused.
func TestBootstrapHeapFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want uint64 // 0: no overload manager
	}{
		{nil, 0},
		{[]string{"--max-heap", "900Mi"}, 900 << 20},
		{[]string{"--max-heap=943718400"}, 943718400},
		{[]string{"--memory-limit", "1073741824"}, 912680550}, // 85% of 1 GiB, rounded down
		{[]string{"--memory-limit", "1Gi", "--max-heap", "512Mi"}, 512 << 20},
	} {
		var out bytes.Buffer
		args := append([]string{"--xds-address", "127.0.0.1:18000", "--node-id", "n"}, c.args...)
		if err := runBootstrap(args, &out); err != nil {
			t.Errorf("bootstrap %v: %v", c.args, err)
			continue
		}
		var b bootstrapv3.Bootstrap
		if err := protojson.Unmarshal(out.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		om := b.GetOverloadManager()
		if c.want == 0 {
			if om != nil {
				t.Errorf("bootstrap %v: an overload manager %v, want none", c.args, om)
			}
			continue
		}
		if len(om.GetResourceMonitors()) != 1 {
			t.Fatalf("bootstrap %v: resource monitors %v, want the fixed heap", c.args, om.GetResourceMonitors())
		}
		var heap fixedheapv3.FixedHeapConfig
		if err := om.GetResourceMonitors()[0].GetTypedConfig().UnmarshalTo(&heap); err != nil {
			t.Fatal(err)
		}
		if heap.GetMaxHeapSizeBytes() != c.want {
			t.Errorf("bootstrap %v: max heap %d, want %d", c.args, heap.GetMaxHeapSizeBytes(), c.want)
		}
	}
	for _, bad := range [][]string{{"--max-heap", "lots"}, {"--max-heap", "0"}, {"--memory-limit", "-1Gi"}, {"--envoy-stats", "some"}} {
		args := append([]string{"--xds-address", "127.0.0.1:18000", "--node-id", "n"}, bad...)
		if err := runBootstrap(args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "--")) && !strings.Contains(err.Error(), bad[1]) {
			t.Errorf("bootstrap %v: %v, want an error naming it", bad, err)
		}
	}
}
