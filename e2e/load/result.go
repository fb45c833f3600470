package load

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is everything one run measured. JSON field names carry their unit.
type Result struct {
	N         int    `json:"n"`
	Ingresses int    `json:"ingresses"`
	Services  int    `json:"services"`
	Protocol  string `json:"protocol"` // "sotw" or "delta"
	Command   string `json:"command"`
	// Flags are the load command's flags that shaped the run (-changes,
	// -fanout...); empty in results written before they were kept.
	Flags   string `json:"flags,omitempty"`
	Started string `json:"started"`

	Machine Machine     `json:"machine"`
	Create  CreateStats `json:"create"`

	Convergence struct {
		ConnectedSeconds     float64 `json:"connected_seconds"`
		FirstResponseSeconds float64 `json:"first_response_seconds"`
		AllHostsSeconds      float64 `json:"all_hosts_seconds"`
		AllEndpointsSeconds  float64 `json:"all_endpoints_seconds"`
	} `json:"convergence"`

	// Status is when every workload Ingress had a status address; nil
	// when not measured.
	Status *Status `json:"status,omitempty"`
	// Startup takes convergence apart (startup.go); nil when the control
	// plane's log does not say.
	Startup *Startup `json:"startup,omitempty"`

	// GatewayAPI says the workload was Gateway API's (Workload.GatewayAPI):
	// its Ingresses are HTTPRoutes, one per host, and IngressChange times
	// new HTTPRoutes.
	GatewayAPI       bool    `json:"gateway_api,omitempty"`
	IngressChange    Summary `json:"ingress_change"`
	IngressChangeAPI Summary `json:"ingress_change_api"`
	EndpointChange   Summary `json:"endpoint_change"`
	EndpointAPI      Summary `json:"endpoint_change_api"`

	Fanout *Fanout `json:"fanout,omitempty"`
	// Envoy is the Envoy phase (-envoy-changes); nil when not run.
	Envoy *EnvoyChanges `json:"envoy,omitempty"`

	Memory struct {
		PeakRSSBytes             int64 `json:"peak_rss_bytes"`
		PeakRSSConvergenceBytes  int64 `json:"peak_rss_at_convergence_bytes"`
		RSSAfterConvergenceBytes int64 `json:"rss_after_convergence_bytes"`
		RSSAfterChangesBytes     int64 `json:"rss_after_changes_bytes"`
	} `json:"memory"`
	CPU struct {
		ConvergenceSeconds float64 `json:"convergence_seconds"`
		TotalSeconds       float64 `json:"total_seconds"`
	} `json:"cpu"`
	// Neighbours are kube-apiserver and etcd when the run started them:
	// they share the machine with the control plane.
	Neighbours map[string]NeighbourStat `json:"neighbours,omitempty"`

	// Rejected counts responses the ADS client NACKed: anything but 0
	// means the control plane served configuration Envoy would refuse.
	Rejected int      `json:"rejected"`
	Files    []string `json:"files,omitempty"` // control-plane log, perf data
}

// Status is when the last workload Ingress got its status address.
type Status struct {
	FromStartSeconds float64 `json:"from_start_seconds"`
	// AfterConvergenceSeconds is negative when status was complete before
	// the client had every host: status does not wait for xDS.
	AfterConvergenceSeconds float64 `json:"after_convergence_seconds"`
}

// NeighbourStat is the CPU and peak memory of a process beside the
// control plane.
type NeighbourStat struct {
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	CPUSeconds   float64 `json:"cpu_seconds"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpu_model"`
	MemoryBytes int64  `json:"memory_bytes"`
	LoadAverage string `json:"load_average_at_start"`
	GoVersion   string `json:"go_version"`
	Kernel      string `json:"kernel"`
}

// DescribeMachine reads /proc for the machine's CPUs, memory and load.
func DescribeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				m.CPUModel = strings.TrimSpace(value)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemoryBytes, _ = statusKiB(data, "MemTotal")
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		fields := strings.Fields(string(data))
		if len(fields) >= 3 {
			m.LoadAverage = strings.Join(fields[:3], " ")
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

// WriteTable prints the result for people.
func (r *Result) WriteTable(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{name}, args...)...)
	}
	if r.GatewayAPI {
		row("workload", "%d HTTPRoutes (the hosts of %d Ingresses) on one Gateway, %d Services, %d EndpointSlices (%d endpoints each), %s xDS",
			r.Ingresses*HostsPerIngress, r.Ingresses, r.Services, r.Services, EndpointsPerSlice, r.Protocol)
	} else {
		row("workload", "%d Ingresses, %d Services, %d EndpointSlices (%d endpoints each), %s xDS",
			r.Ingresses, r.Services, r.Services, EndpointsPerSlice, r.Protocol)
	}
	row("machine", "%d CPUs (%s), %s memory, load average %s at start", r.Machine.CPUs, r.Machine.CPUModel, bytesHuman(r.Machine.MemoryBytes), r.Machine.LoadAverage)
	row("objects created", "%d in %.1f s (%d existed)", r.Create.Objects, r.Create.Seconds, r.Create.Existing)
	c := r.Convergence
	row("initial convergence", "%s (every host routed; ADS stream open at %s, first response at %s)",
		secs(c.AllHostsSeconds), secs(c.ConnectedSeconds), secs(c.FirstResponseSeconds))
	row("  every Service", "%s (clusters and load assignments for all)", secs(c.AllEndpointsSeconds))
	if st := r.Status; st != nil {
		row("status on every Ingress", "%s after the start, %s after convergence", secs(st.FromStartSeconds), secs(st.AfterConvergenceSeconds))
	}
	r.Startup.writeRows(row)
	change := "Ingress change"
	if r.GatewayAPI {
		change = "HTTPRoute change"
	}
	row(change, "%s (API write %s)", percentiles(r.IngressChange), percentiles(r.IngressChangeAPI))
	row("endpoint change", "%s (API write %s)", percentiles(r.EndpointChange), percentiles(r.EndpointAPI))
	if f := r.Fanout; f != nil {
		row("fan-out", "%d clients%s: all had the change after %.0f ms (p50 %.0f, p90 %.0f); %d within 1 s",
			f.Clients, f.onDemandNote(), f.Arrival.Max, f.Arrival.P50, f.Arrival.P90, f.WithinOneSecond)
		if a := f.IngressArrival; a != nil {
			row("", "a new Ingress: all had it after %.0f ms (p50 %.0f, p90 %.0f, p99 %.0f); %d within 1 s (CPU: control plane %.1f s, clients %.1f s)",
				a.Max, a.P50, a.P90, a.P99, f.IngressWithinOneSecond, f.IngressChangeCPU.ControlPlaneSeconds, f.IngressChangeCPU.ClientsSeconds)
		}
		row("", "connecting took %s (CPU: control plane %.1f s, clients %.1f s); the change: CPU control plane %.1f s, clients %.1f s",
			secs(f.ConnectSeconds), f.ConnectCPU.ControlPlaneSeconds, f.ConnectCPU.ClientsSeconds, f.ChangeCPU.ControlPlaneSeconds, f.ChangeCPU.ClientsSeconds)
		row("", "peak RSS %s with the fan-out clients; RSS %s with them connected, idle", bytesHuman(f.PeakRSSBytes), bytesHuman(f.ConnectedRSSBytes))
		if st := f.Reconnect; st != nil {
			row("reconnect storm", "%d clients dropped and dialled again at once: all up to date after %s (CPU: control plane %.1f s, clients %.1f s); RSS %s after, peak %s",
				f.Clients, secs(st.Seconds), st.CPU.ControlPlaneSeconds, st.CPU.ClientsSeconds, bytesHuman(st.RSSBytes), bytesHuman(st.PeakRSSBytes))
			row("", "each client back after p50 %.0f / p90 %.0f / p99 %.0f ms", st.Back.P50, st.Back.P90, st.Back.P99)
		}
	}
	if e := r.Envoy; e != nil {
		row("Ingress served by Envoy", "%s (%s Envoy; create request to the backend's first 200 through Envoy, polled every %.0f ms)",
			percentilesMax(e.Served), e.Protocol, e.PollIntervalMs)
		row("  same, at the ADS client", "%s (API write %s)", percentilesMax(e.ADSClient), percentiles(e.API))
		row("  Envoy", "ready %s after its start, first 200 at %s; peak RSS %s, CPU %.1f s; %d updates rejected",
			secs(e.ReadySeconds), secs(e.FirstServedSeconds), bytesHuman(e.PeakRSSBytes), e.CPUSeconds, e.Rejected)
		row("  answers before the 200", "%s (backends answered %d requests)", answersLine(e.AnswersBeforeServed), e.BackendRequests)
		e.writeRows(row)
	}
	m := r.Memory
	row("peak RSS", "%s before any fan-out (%s at convergence; RSS %s after convergence, %s after changes)",
		bytesHuman(m.PeakRSSBytes), bytesHuman(m.PeakRSSConvergenceBytes), bytesHuman(m.RSSAfterConvergenceBytes), bytesHuman(m.RSSAfterChangesBytes))
	row("control-plane CPU", "%.1f s to converge, %.1f s in all", r.CPU.ConvergenceSeconds, r.CPU.TotalSeconds)
	for name, n := range r.Neighbours {
		row("  "+name, "peak RSS %s, CPU %.1f s", bytesHuman(n.PeakRSSBytes), n.CPUSeconds)
	}
	row("responses rejected", "%d", r.Rejected)
	for _, f := range r.Files {
		row("file", "%s", f)
	}
	return tw.Flush()
}

func percentiles(s Summary) string {
	if s.Count == 0 {
		return "not measured"
	}
	return fmt.Sprintf("p50 %.1f / p90 %.1f / p99 %.1f ms over %d", s.P50, s.P90, s.P99, s.Count)
}

func percentilesMax(s Summary) string {
	if s.Count == 0 {
		return "not measured"
	}
	return fmt.Sprintf("p50 %.1f / p90 %.1f / p99 %.1f / max %.1f ms over %d", s.P50, s.P90, s.P99, s.Max, s.Count)
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

func bytesHuman(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
}
