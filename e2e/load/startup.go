package load

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Startup takes convergence apart, from the control plane's own log (the
// lines ingress-xds writes; a peer's log gives nothing and Startup stays
// nil) and from the status watch. Every "at" is seconds since the control
// plane was started; every "took" is a duration in seconds.
type Startup struct {
	// Informers is, per kind, when its initial list had reached its
	// handler, and how many objects it held.
	Informers []InformerSync `json:"informers,omitempty"`
	// CachesSyncedAt is when every informer had synced.
	CachesSyncedAt float64 `json:"caches_synced_at_seconds,omitempty"`
	// FirstBuild is the first full rebuild's steps.
	FirstBuild *BuildSteps `json:"first_build,omitempty"`
	// StatusFirstAt is when the first workload Ingress had a status
	// address; StatusBeforeConvergence how many had one when the client
	// converged (writes competing with the start-up for the API server).
	StatusFirstAt           float64 `json:"status_first_at_seconds,omitempty"`
	StatusBeforeConvergence int     `json:"status_before_convergence"`
}

// InformerSync is one kind's initial list.
type InformerSync struct {
	Kind    string  `json:"kind"`
	Objects int     `json:"objects"`
	At      float64 `json:"at_seconds"`
}

// BuildSteps is a rebuild as its log line tells it.
type BuildSteps struct {
	PublishedAt float64 `json:"published_at_seconds"`
	Took        float64 `json:"took_seconds"`
	State       float64 `json:"state_seconds"`
	Translate   float64 `json:"translate_seconds"`
	Problems    float64 `json:"problems_seconds"`
	Validate    float64 `json:"validate_seconds"`
	Assemble    float64 `json:"assemble_seconds"`
}

// readStartup reads the start-up lines of the control plane's log, which
// was started at start. It returns nil when the log has none of them.
func readStartup(logPath string, start time.Time) (*Startup, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, fmt.Errorf("reading the control plane's log: %w", err)
	}
	defer f.Close()
	var st Startup
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := logFields(sc.Text())
		at, ok := line.time("time")
		if !ok {
			continue
		}
		since := at.Sub(start).Seconds()
		switch line["msg"] {
		case "informer synced":
			n, _ := strconv.Atoi(line["objects"])
			st.Informers = append(st.Informers, InformerSync{Kind: line["kind"], Objects: n, At: since})
			found = true
		case "informer caches synced":
			st.CachesSyncedAt, found = since, true
		case "published snapshot":
			if st.FirstBuild != nil || line["path"] != "full" {
				continue
			}
			st.FirstBuild = &BuildSteps{
				PublishedAt: since,
				Took:        line.seconds("took"),
				State:       line.seconds("steps.state"),
				Translate:   line.seconds("steps.translate"),
				Problems:    line.seconds("steps.problems"),
				Validate:    line.seconds("steps.validate"),
				Assemble:    line.seconds("steps.assemble"),
			}
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the control plane's log: %w", err)
	}
	if !found {
		return nil, nil
	}
	return &st, nil
}

// logLine is one line of slog's text format, key by key.
type logLine map[string]string

// logFields splits a line of slog's text format (key=value, values with
// blanks quoted) into its keys; anything else gives an empty map.
func logFields(s string) logLine {
	out := logLine{}
	for s != "" {
		s = strings.TrimLeft(s, " ")
		key, rest, ok := strings.Cut(s, "=")
		if !ok || strings.ContainsAny(key, " \"") {
			return out
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(rest) {
				return out
			}
			if v, err := strconv.Unquote(rest[:end+1]); err == nil {
				value = v
			}
			s = rest[end+1:]
		} else {
			value, s, _ = strings.Cut(rest, " ")
		}
		out[key] = value
	}
	return out
}

func (l logLine) time(key string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, l[key])
	return t, err == nil
}

// seconds reads a Go duration ("1.234s", "850ms"); 0 when absent.
func (l logLine) seconds(key string) float64 {
	d, err := time.ParseDuration(l[key])
	if err != nil {
		return 0
	}
	return d.Seconds()
}

// readStartup adds the start-up breakdown to the result: the control
// plane's log, and from the status watch (nil: not watched) when the first
// status came and how many Ingresses had one at convergence.
func (s *session) readStartup(status *statusWatch, atConvergence int) error {
	st, err := readStartup(s.cp.LogPath, s.start)
	if err != nil {
		return err
	}
	if status != nil {
		if st == nil {
			st = &Startup{}
		}
		_, first := status.progress()
		if !first.IsZero() {
			st.StatusFirstAt = first.Sub(s.start).Seconds()
		}
		st.StatusBeforeConvergence = atConvergence
	}
	s.res.Startup = st
	return nil
}

// writeRows prints the breakdown under the convergence rows.
func (st *Startup) writeRows(row func(name, format string, args ...any)) {
	if st == nil {
		return
	}
	for _, k := range st.Informers {
		row("  informer synced", "%s: %d at %s", k.Kind, k.Objects, secs(k.At))
	}
	if st.CachesSyncedAt > 0 {
		row("  caches synced", "%s", secs(st.CachesSyncedAt))
	}
	if b := st.FirstBuild; b != nil {
		row("  first build", "took %s, published at %s: state %s, translate %s, problems %s, validate %s, assemble %s",
			secs(b.Took), secs(b.PublishedAt), secs(b.State), secs(b.Translate), secs(b.Problems), secs(b.Validate), secs(b.Assemble))
	}
	if st.StatusFirstAt > 0 {
		row("  status writes", "first at %s; %d Ingresses had one at convergence", secs(st.StatusFirstAt), st.StatusBeforeConvergence)
	}
}
