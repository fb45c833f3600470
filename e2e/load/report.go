package load

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Reference is what a report sets beside the measured figures: for each
// scale (number of Ingresses), the target and the peers' figures of each
// row, by the row's key. It is kept as JSON in docs/, beside the tables
// it fills (docs/benchmarks-reference.json).
type Reference struct {
	// Peers names the peers, in the order of their columns.
	Peers  []string         `json:"peers"`
	Scales []ReferenceScale `json:"scales"`
}

// ReferenceScale is one scale's targets and peers' figures.
type ReferenceScale struct {
	N       int                          `json:"n"`
	Targets map[string]string            `json:"targets"`
	Peers   map[string]map[string]string `json:"peers"` // peer -> row key -> figure
}

// reportRow is one row of a report's table: its key in the Reference, its
// label, and the figure a run gives for it ("" for none).
type reportRow struct {
	key, label string
	figure     func(r Result) string
}

// reportRows are the rows of every table, in order.
func reportRows() []reportRow {
	return []reportRow{
		{"convergence", "initial convergence", func(r Result) string { return seconds(r.Convergence.AllHostsSeconds) }},
		{"ingress_change", "Ingress change p50 / p90 (p99)", func(r Result) string { return summaryCell(r.IngressChange) }},
		{"endpoint_change", "endpoint change p50 / p90 (p99)", func(r Result) string { return summaryCell(r.EndpointChange) }},
		{"peak_rss", "peak RSS before any fan-out", func(r Result) string { return bytesHuman(r.Memory.PeakRSSBytes) }},
		{"status", "status on every Ingress after convergence", func(r Result) string {
			if r.Status == nil {
				return ""
			}
			return seconds(r.Status.AfterConvergenceSeconds)
		}},
		{"fanout", "fan-out: an endpoint change to every client, p50 / p90 / p99 / max", func(r Result) string {
			f := r.Fanout
			if f == nil {
				return ""
			}
			return fmt.Sprintf("%s clients%s: %.0f / %.0f / %.0f / %.0f ms (%s within 1 s)",
				thousands(f.Clients), f.onDemandNote(), f.Arrival.P50, f.Arrival.P90, f.Arrival.P99, f.Arrival.Max, thousands(f.WithinOneSecond))
		}},
		{"fanout_ingress", "fan-out: an Ingress change to every client, p50 / p90 / p99 / max", func(r Result) string {
			f := r.Fanout
			if f == nil || f.IngressArrival == nil {
				return ""
			}
			a := f.IngressArrival
			return fmt.Sprintf("%s clients: %.0f / %.0f / %.0f / %.0f ms (%s within 1 s)",
				thousands(f.Clients), a.P50, a.P90, a.P99, a.Max, thousands(f.IngressWithinOneSecond))
		}},
		{"fanout_memory", "fan-out: control-plane RSS per client, connected and idle", func(r Result) string {
			f := r.Fanout
			if f == nil || f.ConnectedRSSBytes == 0 || f.Clients == 0 {
				return ""
			}
			return fmt.Sprintf("%s (%s for %s)", perClient(float64(f.ConnectedRSSBytes-r.Memory.RSSAfterChangesBytes)/float64(f.Clients)),
				bytesHuman(f.ConnectedRSSBytes), thousands(f.Clients))
		}},
		{"reconnect", "reconnect storm: every client back, peak RSS", func(r Result) string {
			if r.Fanout == nil || r.Fanout.Reconnect == nil {
				return ""
			}
			st := r.Fanout.Reconnect
			return fmt.Sprintf("%s, %s", seconds(st.Seconds), bytesHuman(st.PeakRSSBytes))
		}},
		{"cpu", "control-plane CPU to converge / in all", func(r Result) string {
			return fmt.Sprintf("%.1f / %.1f s", r.CPU.ConvergenceSeconds, r.CPU.TotalSeconds)
		}},
	}
}

// perClient writes a client's share of memory: in MiB, or in KiB below
// 1 MiB, where a delta client subscribing as an Envoy with on-demand
// clusters is (0.04 MiB said too little).
func perClient(bytes float64) string {
	if bytes < 1<<20 {
		return fmt.Sprintf("%.0f KiB", bytes/(1<<10))
	}
	return fmt.Sprintf("%.2f MiB", bytes/(1<<20))
}

// seconds writes s as the tables of docs/benchmarks.md do.
func seconds(s float64) string {
	if s < 10 && s > -10 {
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

func summaryCell(s Summary) string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f / %.1f ms (%.1f)", s.P50, s.P90, s.P99)
}

// Report renders one Markdown table per scale of the runs given: a column
// per peer, the target, then a column per run (SotW before delta, then in
// the order given), each row a figure; and under each table the runs'
// dates, load averages and commands.
func Report(runs []Result, ref Reference) string {
	byN := map[int][]Result{}
	for _, r := range runs {
		byN[r.N] = append(byN[r.N], r)
	}
	scales := slices.Sorted(func(yield func(int) bool) {
		for n := range byN {
			if !yield(n) {
				return
			}
		}
	})
	var b strings.Builder
	for i, n := range scales {
		if i > 0 {
			b.WriteString("\n")
		}
		rs := byN[n]
		slices.SortStableFunc(rs, func(a, b Result) int { return cmp.Compare(protocolRank(a.Protocol), protocolRank(b.Protocol)) })
		var scale ReferenceScale
		for _, s := range ref.Scales {
			if s.N == n {
				scale = s
			}
		}
		writeTable(&b, n, rs, ref.Peers, scale)
	}
	return b.String()
}

func protocolRank(p string) int {
	if p == "delta" {
		return 1
	}
	return 0
}

func writeTable(b *strings.Builder, n int, rs []Result, peers []string, scale ReferenceScale) {
	r0 := rs[0]
	fmt.Fprintf(b, "**%s Ingresses** (%s Services, %s endpoints):\n\n", thousands(n), thousands(r0.Services), thousands(r0.Services*EndpointsPerSlice))
	header := []string{""}
	header = append(header, peers...)
	header = append(header, "target")
	for _, r := range rs {
		header = append(header, "ours, "+protocolName(r.Protocol))
	}
	writeRow(b, header)
	align := []string{"---"}
	for range header[1:] {
		align = append(align, "---:")
	}
	writeRow(b, align)
	for _, row := range reportRows() {
		cells := []string{row.label}
		for _, p := range peers {
			cells = append(cells, scale.Peers[p][row.key])
		}
		cells = append(cells, scale.Targets[row.key])
		measured := false
		for _, r := range rs {
			f := row.figure(r)
			measured = measured || f != ""
			cells = append(cells, f)
		}
		if measured {
			writeRow(b, cells)
		}
	}
	b.WriteString("\n")
	for _, r := range rs {
		fmt.Fprintf(b, "- %s: %s, load average %s at the start; `%s`\n", protocolName(r.Protocol), r.Started, r.Machine.LoadAverage, r.Command)
	}
}

func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

func protocolName(p string) string {
	if p == "delta" {
		return "delta"
	}
	return "SotW"
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
