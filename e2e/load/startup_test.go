package load

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadStartup reads the start-up lines ingress-xds writes (as slog's
// text handler writes them) and ignores the rest, including klog's lines
// and a later rebuild.
func TestReadStartup(t *testing.T) {
	start := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	log := `I1201 20:00:00.100000    4595 leaderelection.go:258] "Attempting to acquire leader lease..." lock="default/ingress-xds-leader"
time=2026-12-01T20:00:00.500Z level=INFO msg="informer synced" component=informers kind=Service objects=10000 took=500ms
time=2026-12-01T20:00:01.250Z level=INFO msg="informer synced" component=informers kind=EndpointSlice objects=10000 took=1.25s
time=2026-12-01T20:00:01.260Z level=INFO msg="informer caches synced" component=informers took=1.26s
time=2026-12-01T20:00:02.000Z level=INFO msg="published snapshot" path=full listeners=1 virtualHosts=2000 clusters=10000 routeVersion=334e took=740ms steps.state=10ms steps.translate=500ms steps.problems=1ms steps.validate=200ms steps.assemble=29ms
time=2026-12-01T20:00:03.000Z level=INFO msg="published snapshot" path=full took=100ms steps.translate=90ms
`
	path := filepath.Join(t.TempDir(), "control-plane.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := readStartup(path, start)
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		t.Fatal("no start-up read")
	}
	if len(st.Informers) != 2 || st.Informers[1].Kind != "EndpointSlice" || st.Informers[1].Objects != 10000 || st.Informers[1].At != 1.25 {
		t.Errorf("informers %+v", st.Informers)
	}
	if st.CachesSyncedAt != 1.26 {
		t.Errorf("caches synced at %v, want 1.26", st.CachesSyncedAt)
	}
	want := BuildSteps{PublishedAt: 2, Took: 0.74, State: 0.01, Translate: 0.5, Problems: 0.001, Validate: 0.2, Assemble: 0.029}
	if st.FirstBuild == nil || *st.FirstBuild != want {
		t.Errorf("first build %+v, want %+v", st.FirstBuild, want)
	}

	// A peer's log has none of it.
	if err := os.WriteFile(path, []byte("time=\"2026-12-01T20:00:00Z\" level=info msg=\"contour\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := readStartup(path, start); err != nil || st != nil {
		t.Errorf("a peer's log gave %+v, %v; want nothing", st, err)
	}
}
