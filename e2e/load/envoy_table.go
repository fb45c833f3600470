package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// writeRows adds the Envoy phase's figures by kind of change, its update
// counters and its memory to the result's table.
func (e *EnvoyChanges) writeRows(row func(name, format string, args ...any)) {
	row("  Envoy converging", "%.1f CPU s, %s from the control plane, RSS %s when ready",
		e.ReadyCPUSeconds, bytesCount(e.ReadyBytes), bytesHuman(e.Memory.ReadyRSSBytes))
	for _, k := range e.Kinds {
		per := 0.0
		if k.Served.Count > 0 {
			per = k.CPUSeconds / float64(k.Served.Count)
		}
		row("  change: "+k.Kind, "%s; to Envoy p50 %s / p90 %s / max %s per change; Envoy CPU %.3f s per change",
			percentilesMax(k.Served), bytesCount(k.BytesToEnvoy.P50), bytesCount(k.BytesToEnvoy.P90), bytesCount(k.BytesToEnvoy.Max), per)
		row("", "the request served: p50 %.1f / max %.1f ms; before it: %s", k.FirstRequest.P50, k.FirstRequest.Max, answersLine(k.AnswersBeforeServed))
	}
	row("  Envoy updates", "%s (success/rejected by xDS type, during the changes; %d xDS connections)", updatesLine(e.UpdatesAtReady, e.Updates), e.XDSConnections)
	m := e.Memory
	row("  Envoy memory", "peak RSS %s, settled %s; tcmalloc allocated %s of heap %s (free %s, unmapped %s)",
		bytesHuman(m.PeakRSSBytes), bytesHuman(m.SettledRSSBytes), bytesHuman(m.AllocatedBytes), bytesHuman(m.HeapSizeBytes),
		bytesHuman(m.PageheapFreeBytes), bytesHuman(m.PageheapUnmappedBytes))
	if m.Stats > 0 || m.Clusters > 0 {
		row("  Envoy holds", "%d stats (/stats %s), %d clusters (/clusters %s), /config_dump %s; read in %s",
			m.Stats, bytesCount(m.StatsBytes), m.Clusters, bytesCount(m.ClustersBytes), bytesCount(m.ConfigDumpBytes), secs(m.ProfileSeconds))
	}
}

// updatesLine shows the update counters gained between two readings.
func updatesLine(before, after map[string]UpdateCounts) string {
	var parts []string
	for _, typ := range slices.Sorted(maps.Keys(after)) {
		a, b := after[typ], before[typ]
		parts = append(parts, fmt.Sprintf("%s %d/%d", typ, a.Success-b.Success, a.Rejected-b.Rejected))
	}
	if len(parts) == 0 {
		return "none read"
	}
	return strings.Join(parts, ", ")
}

// bytesCount prints a byte count in the unit that suits it.
func bytesCount(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
