package load

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// What the Envoy phase reads from Envoy's admin interface: its xDS update
// counters by type, and where its memory goes.

// UpdateCounts are Envoy's update_success and update_rejected counters of
// one xDS type, summed over its subscriptions (one per cluster for EDS).
type UpdateCounts struct {
	Success  int64 `json:"success"`
	Rejected int64 `json:"rejected"`
}

// xdsTypeOfStat names the xDS type of a subscription stat, from where
// Envoy puts it: listener_manager.lds.*, cluster_manager.cds.*,
// http.<prefix>.rds.<route config>.*, its .vhds.* below that,
// cluster.<name>.* (EDS), sds.<name>.*.
func xdsTypeOfStat(name string) string {
	switch {
	case strings.HasPrefix(name, "listener_manager.lds."):
		return "lds"
	case strings.HasPrefix(name, "cluster_manager.cds."):
		return "cds"
	case strings.HasPrefix(name, "http.") && strings.Contains(name, ".vhds."):
		return "vhds"
	case strings.HasPrefix(name, "http.") && strings.Contains(name, ".rds."):
		return "rds"
	case strings.HasPrefix(name, "cluster."):
		return "eds"
	case strings.HasPrefix(name, "sds."):
		return "sds"
	}
	return "other"
}

// updates reads Envoy's update counters by xDS type.
func (e *envoyProc) updates() (map[string]UpdateCounts, error) {
	body, err := e.adminGet("/stats?filter=" + url.QueryEscape(`\.update_(success|rejected)$`))
	if err != nil {
		return nil, err
	}
	out := map[string]UpdateCounts{}
	rejectedSeen := false
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Envoy stat %s: %w", name, err)
		}
		typ := xdsTypeOfStat(name)
		c := out[typ]
		switch {
		case strings.HasSuffix(name, ".update_success"):
			c.Success += n
		case strings.HasSuffix(name, ".update_rejected"):
			c.Rejected += n
			rejectedSeen = true
		}
		out[typ] = c
	}
	if !rejectedSeen {
		// A misspelt filter, or a bootstrap that drops these stats, must
		// not pass for "nothing rejected".
		return nil, fmt.Errorf("Envoy has no update_rejected counter: %.500s", body)
	}
	return out, nil
}

// rejected sums Envoy's update_rejected counters over every xDS type.
func (e *envoyProc) rejected() (int64, error) {
	u, err := e.updates()
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, c := range u {
		sum += c.Rejected
	}
	return sum, nil
}

// EnvoyMemory is where Envoy's memory is, read after the changes.
type EnvoyMemory struct {
	// From /proc: the peak since the start (VmHWM), RSS when it was
	// ready, and RSS once the changes were over and Envoy was idle.
	PeakRSSBytes    int64 `json:"peak_rss_bytes"`
	ReadyRSSBytes   int64 `json:"ready_rss_bytes"`
	SettledRSSBytes int64 `json:"settled_rss_bytes"`
	// From /memory (tcmalloc): allocated is what Envoy's objects hold,
	// heap size what tcmalloc took from the system; the difference is
	// free pages not yet returned and thread caches.
	AllocatedBytes        int64 `json:"allocated_bytes"`
	HeapSizeBytes         int64 `json:"heap_size_bytes"`
	PageheapFreeBytes     int64 `json:"pageheap_free_bytes"`
	PageheapUnmappedBytes int64 `json:"pageheap_unmapped_bytes"`
	// Stats is how many stats /stats lists (counters, gauges, histograms
	// and text readouts), StatsBytes the size of that listing.
	Stats      int64 `json:"stats"`
	StatsBytes int64 `json:"stats_bytes"`
	// Clusters is how many clusters /clusters lists, ClustersBytes the
	// size of its listing (a line per host and figure).
	Clusters      int64 `json:"clusters"`
	ClustersBytes int64 `json:"clusters_bytes"`
	// ConfigDumpBytes is /config_dump without endpoints: listeners,
	// clusters, routes and secrets as Envoy holds them.
	ConfigDumpBytes int64 `json:"config_dump_bytes"`
	// ProfileSeconds is how long reading all of the above took.
	ProfileSeconds float64 `json:"profile_seconds"`
}

// profileMemory reads /memory, and counts /stats, /clusters and
// /config_dump, streamed (they are hundreds of MB at 10,000 Ingresses).
func (e *envoyProc) profileMemory(m *EnvoyMemory) error {
	start := time.Now()
	body, err := e.adminGet("/memory")
	if err != nil {
		return err
	}
	// tcmalloc's figures, as strings of decimal bytes.
	var mem struct {
		Allocated        string `json:"allocated"`
		HeapSize         string `json:"heap_size"`
		PageheapUnmapped string `json:"pageheap_unmapped"`
		PageheapFree     string `json:"pageheap_free"`
	}
	if err := json.Unmarshal(body, &mem); err != nil {
		return fmt.Errorf("Envoy's /memory: %w: %s", err, body)
	}
	for _, f := range []struct {
		s  string
		to *int64
	}{{mem.Allocated, &m.AllocatedBytes}, {mem.HeapSize, &m.HeapSizeBytes}, {mem.PageheapUnmapped, &m.PageheapUnmappedBytes}, {mem.PageheapFree, &m.PageheapFreeBytes}} {
		if f.s == "" {
			continue
		}
		if *f.to, err = strconv.ParseInt(f.s, 10, 64); err != nil {
			return fmt.Errorf("Envoy's /memory: %w", err)
		}
	}
	if m.Stats, m.StatsBytes, err = e.countLines("/stats", nil); err != nil {
		return err
	}
	// /clusters has a line per figure of each host, and one
	// "NAME::observability_name::NAME" line per cluster.
	if m.Clusters, m.ClustersBytes, err = e.countLines("/clusters", func(line string) bool {
		return strings.Contains(line, "::observability_name::")
	}); err != nil {
		return err
	}
	if _, m.ConfigDumpBytes, err = e.countLines("/config_dump", nil); err != nil {
		return err
	}
	m.ProfileSeconds = time.Since(start).Seconds()
	return nil
}

// countLines streams an admin page and counts its lines (those keep
// selects, or all) and bytes.
func (e *envoyProc) countLines(path string, keep func(string) bool) (lines, size int64, err error) {
	client := &http.Client{Timeout: 10 * time.Minute}
	resp, err := client.Get("http://" + e.admin + path)
	if err != nil {
		return 0, 0, fmt.Errorf("Envoy's %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("Envoy's %s: status %d", path, resp.StatusCode)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	for {
		line, err := r.ReadString('\n')
		size += int64(len(line))
		if line != "" && (keep == nil || keep(line)) {
			lines++
		}
		if err == io.EOF {
			return lines, size, nil
		}
		if err != nil {
			return 0, 0, fmt.Errorf("Envoy's %s: %w", path, err)
		}
	}
}

func (e *envoyProc) adminGet(path string) ([]byte, error) {
	// Filtered stats walk every stat: seconds at 10,000 Ingresses.
	client := &http.Client{Timeout: 5 * time.Minute}
	resp, err := client.Get("http://" + e.admin + path)
	if err != nil {
		return nil, fmt.Errorf("Envoy's %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("Envoy's %s: %d %.500s %v", path, resp.StatusCode, body, err)
	}
	return body, nil
}
