package load

import (
	"fmt"
	"strings"
	"testing"
)

// TestReport renders two runs at one scale and one at another: a table
// per scale in order, the peers and the target before our columns, SotW
// before delta, rows a run does not measure left out.
func TestReport(t *testing.T) {
	run := func(n int, protocol string, p90 float64, fanout *Fanout) Result {
		r := Result{N: n, Services: 10 * n, Protocol: protocol, Command: "serve", Started: "then", Fanout: fanout}
		r.Convergence.AllHostsSeconds = 1.5
		r.EndpointChange = Summary{Count: 20, P50: 12, P90: p90, P99: 20}
		r.Memory.PeakRSSBytes = 150 << 20
		r.Memory.RSSAfterChangesBytes = 100 << 20
		return r
	}
	fanout := &Fanout{Clients: 2000, Arrival: Summary{Count: 2000, P50: 100, P90: 200, P99: 300, Max: 400}, WithinOneSecond: 1999, ConnectedRSSBytes: 4100 << 20,
		Reconnect: &Reconnect{Seconds: 12.25, PeakRSSBytes: 2 << 30}}
	ref := Reference{Peers: []string{"Contour"}, Scales: []ReferenceScale{{N: 1000,
		Targets: map[string]string{"endpoint_change": "p90 < 30 ms"},
		Peers:   map[string]map[string]string{"Contour": {"endpoint_change": "220 / 276 ms"}},
	}}}
	light := &Fanout{Clients: 2000, OnDemandClusters: 10, Arrival: Summary{Count: 2000, P50: 100, P90: 150, P99: 190, Max: 200}, WithinOneSecond: 2000,
		IngressArrival: &Summary{Count: 2000, P50: 110, P90: 160, P99: 1200, Max: 1300}, IngressWithinOneSecond: 1990,
		ConnectedRSSBytes: (100 << 20) + 2000*(41<<10)}
	got := Report([]Result{run(1000, "delta", 14, light), run(100, "sotw", 13, nil), run(1000, "sotw", 15, fanout)}, ref)
	reportHas(t, got,
		"**100 Ingresses** (1,000 Services, 10,000 endpoints):",
		"**1,000 Ingresses** (10,000 Services, 100,000 endpoints):\n\n|  | Contour | target | ours, SotW | ours, delta |",
		"| endpoint change p50 / p90 (p99) | 220 / 276 ms | p90 < 30 ms | 12.0 / 15.0 ms (20.0) | 12.0 / 14.0 ms (20.0) |",
		"| initial convergence |  |  | 1.50 s | 1.50 s |",
		"| fan-out: an endpoint change to every client, p50 / p90 / p99 / max |  |  | 2,000 clients: 100 / 200 / 300 / 400 ms (1,999 within 1 s) | 2,000 clients (10 clusters on demand each): 100 / 150 / 190 / 200 ms (2,000 within 1 s) |",
		"| fan-out: an Ingress change to every client, p50 / p90 / p99 / max |  |  |  | 2,000 clients: 110 / 160 / 1200 / 1300 ms (1,990 within 1 s) |",
		"| fan-out: control-plane RSS per client, connected and idle |  |  | 2.00 MiB (4.00 GiB for 2,000) | 41 KiB (180 MiB for 2,000) |",
		"| reconnect storm: every client back, peak RSS |  |  | 12.2 s, 2.00 GiB |  |",
	)
	if i, j := strings.Index(got, "**100 "), strings.Index(got, "**1,000 "); i > j {
		t.Errorf("1,000 came before 100:\n%s", got)
	}
	if strings.Count(got, "reconnect storm") != 1 {
		t.Errorf("the 100 table, with no fan-out, has a reconnect row:\n%s", got)
	}
}

// TestReportMedians groups runs of one protocol and fan-out size into one
// column whose figures are each the median of the runs', names the
// clients where the columns differ in them, and says under the table
// how the runs were made, each flag set and command once.
func TestReportMedians(t *testing.T) {
	run := func(clients int, convergence, p99 float64, storm float64, flags string) Result {
		r := Result{N: 10000, Services: 100000, Protocol: "delta", Command: "serve", Flags: flags, Started: fmt.Sprint(convergence)}
		r.Machine.LoadAverage = fmt.Sprint(convergence / 10)
		r.Machine.CPUs, r.Machine.CPUModel = 2, "Xeon"
		r.Convergence.AllHostsSeconds = convergence
		r.EndpointChange = Summary{Count: 5, P50: 10, P90: 20, P99: p99}
		r.Fanout = &Fanout{Clients: clients, Arrival: Summary{Count: clients, P50: p99, P90: p99, P99: p99, Max: p99}, WithinOneSecond: clients,
			Reconnect: &Reconnect{Seconds: storm, PeakRSSBytes: 1 << 30}}
		return r
	}
	got := Report([]Result{
		run(2000, 12, 300, 15, "-fanout=2000"),
		run(5000, 20, 600, 50, "-fanout=5000"),
		run(2000, 10, 100, 14, "-fanout=2000"),
		run(2000, 11, 250, 40, "-fanout=2000"),
		run(5000, 22, 500, 30, "-fanout=5000"),
	}, Reference{})
	reportHas(t, got,
		"| target | ours, delta, 2,000 clients (median of 3 runs) | ours, delta, 5,000 clients (median of 2 runs) |",
		"| initial convergence |  | 11.0 s | 21.0 s |",
		"| endpoint change p50 / p90 (p99) |  | 10.0 / 20.0 ms (250.0) | 10.0 / 20.0 ms (550.0) |",
		"| reconnect storm: every client back, peak RSS |  | 15.0 s, 1.00 GiB | 40.0 s, 1.00 GiB |",
		"- delta, 2,000 clients: 12, 10, 11, load average 1.2; 1; 1.1 at the start, on 2 CPUs (Xeon); 5 samples of each change; `ingress-load -fanout=2000`; `serve`\n",
	)
}

func reportHas(t *testing.T, report string, lines ...string) {
	t.Helper()
	for _, want := range lines {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// TestMedianRunLeavesOutWhatARunLacks: a storm only some runs had is not
// reported as the others' median.
func TestMedianRunLeavesOutWhatARunLacks(t *testing.T) {
	with := Result{Fanout: &Fanout{Clients: 10, Reconnect: &Reconnect{Seconds: 3}}}
	without := Result{Fanout: &Fanout{Clients: 10}}
	if m := medianRun([]Result{with, without, with}); m.Fanout == nil || m.Fanout.Reconnect != nil {
		t.Errorf("median of runs with and without a storm: fan-out %+v", m.Fanout)
	}
	if m := medianRun([]Result{with, {}}); m.Fanout != nil {
		t.Errorf("median of runs with and without a fan-out: %+v", m.Fanout)
	}
}
