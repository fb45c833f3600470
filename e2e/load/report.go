package load

import (
	"cmp"
	"fmt"
	"maps"
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
// per peer, the target, then a column per kind of run (its protocol and
// number of fan-out clients; SotW before delta, fewer clients first), each
// row a figure, the median over the runs of that kind; and under each
// table, for each column, its runs' dates, load averages, flags and
// commands.
func Report(runs []Result, ref Reference) string {
	byN := map[int][]Result{}
	for _, r := range runs {
		byN[r.N] = append(byN[r.N], r)
	}
	var b strings.Builder
	for i, n := range slices.Sorted(maps.Keys(byN)) {
		if i > 0 {
			b.WriteString("\n")
		}
		var scale ReferenceScale
		for _, s := range ref.Scales {
			if s.N == n {
				scale = s
			}
		}
		writeTable(&b, n, columnsOf(byN[n]), ref.Peers, scale)
	}
	return b.String()
}

// column is the runs of one kind at one scale, and the run whose figures
// are the medians of theirs.
type column struct {
	protocol string
	clients  int
	runs     []Result
	median   Result
}

// columnsOf groups one scale's runs by protocol and fan-out clients, in
// the order of the table's columns.
func columnsOf(rs []Result) []column {
	var cols []column
	for _, r := range rs {
		i := slices.IndexFunc(cols, func(c column) bool { return c.protocol == r.Protocol && c.clients == fanoutClients(r) })
		if i < 0 {
			cols = append(cols, column{protocol: r.Protocol, clients: fanoutClients(r)})
			i = len(cols) - 1
		}
		cols[i].runs = append(cols[i].runs, r)
	}
	slices.SortStableFunc(cols, func(a, b column) int {
		return cmp.Or(cmp.Compare(protocolRank(a.protocol), protocolRank(b.protocol)), cmp.Compare(a.clients, b.clients))
	})
	for i := range cols {
		cols[i].median = medianRun(cols[i].runs)
	}
	return cols
}

// SameKind says whether two runs are of one column of a report: the same
// scale, protocol and fan-out clients.
func SameKind(a, b Result) bool {
	return a.N == b.N && a.Protocol == b.Protocol && fanoutClients(a) == fanoutClients(b)
}

func fanoutClients(r Result) int {
	if r.Fanout == nil {
		return 0
	}
	return r.Fanout.Clients
}

// name names a column's kind of run: its protocol, and its clients where
// the scale's columns differ in them.
func (c column) name(clientsDiffer bool) string {
	if clientsDiffer && c.clients > 0 {
		return protocolName(c.protocol) + ", " + thousands(c.clients) + " clients"
	}
	return protocolName(c.protocol)
}

// header is a column's name in the table, with how many runs its medians
// are of.
func (c column) header(clientsDiffer bool) string {
	h := "ours, " + c.name(clientsDiffer)
	if len(c.runs) > 1 {
		h += fmt.Sprintf(" (median of %d runs)", len(c.runs))
	}
	return h
}

func protocolRank(p string) int {
	if p == "delta" {
		return 1
	}
	return 0
}

func writeTable(b *strings.Builder, n int, cols []column, peers []string, scale ReferenceScale) {
	r0 := cols[0].runs[0]
	fmt.Fprintf(b, "**%s Ingresses** (%s Services, %s endpoints):\n\n", thousands(n), thousands(r0.Services), thousands(r0.Services*EndpointsPerSlice))
	clientsDiffer := slices.ContainsFunc(cols, func(c column) bool { return c.clients != cols[0].clients })
	header := []string{""}
	header = append(header, peers...)
	header = append(header, "target")
	for _, c := range cols {
		header = append(header, c.header(clientsDiffer))
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
		for _, c := range cols {
			f := row.figure(c.median)
			measured = measured || f != ""
			cells = append(cells, f)
		}
		if measured {
			writeRow(b, cells)
		}
	}
	b.WriteString("\n")
	for _, c := range cols {
		fmt.Fprintf(b, "- %s: %s\n", c.name(clientsDiffer), describeRuns(c.runs))
	}
}

// describeRuns says when a column's runs were made, how busy the machine
// was, and with which flags and commands (each once).
func describeRuns(rs []Result) string {
	var when, loads []string
	var machines, flags, commands []string
	addOnce := func(list *[]string, s string) {
		if s != "" && !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, r := range rs {
		when = append(when, r.Started)
		loads = append(loads, r.Machine.LoadAverage)
		if r.Machine.CPUs > 0 {
			addOnce(&machines, fmt.Sprintf("%d CPUs (%s)", r.Machine.CPUs, r.Machine.CPUModel))
		}
		addOnce(&flags, r.Flags)
		addOnce(&commands, r.Command)
	}
	s := fmt.Sprintf("%s, load average %s at the start", strings.Join(when, ", "), strings.Join(loads, "; "))
	if len(machines) > 0 {
		s += ", on " + strings.Join(machines, " and ")
	}
	if c := rs[0].EndpointChange.Count; c > 0 {
		s += fmt.Sprintf("; %d samples of each change", c)
	}
	for _, f := range flags {
		s += "; `ingress-load " + f + "`"
	}
	for _, c := range commands {
		s += "; `" + c + "`"
	}
	return s
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
