package xds

import (
	"context"
	"testing"
	"time"
)

const (
	testHoldoff    = 100 * time.Millisecond
	testMaxHoldoff = 500 * time.Millisecond
)

// batcherHarness runs a Batcher on a fake clock and records its builds.
type batcherHarness struct {
	t      *testing.T
	clock  *fakeClock
	b      *Batcher
	start  time.Time
	builds chan time.Time
	// release, when set, is what each build waits on before returning.
	release chan struct{}
	done    chan struct{}
	cancel  context.CancelFunc
}

func startBatcher(t *testing.T, release chan struct{}) *batcherHarness {
	t.Helper()
	return startBatcherWith(t, release, func(*Batcher) {})
}

// startBatcherWith is startBatcher with the Batcher's fields set by tune
// before it runs.
func startBatcherWith(t *testing.T, release chan struct{}, tune func(*Batcher)) *batcherHarness {
	t.Helper()
	c := newFakeClock()
	h := &batcherHarness{
		t: t, clock: c, b: newBatcher(testHoldoff, testMaxHoldoff, c), start: c.Now(),
		builds: make(chan time.Time, 16), release: release, done: make(chan struct{}),
	}
	tune(h.b)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		h.b.Run(ctx, func(context.Context) {
			h.builds <- c.Now()
			if h.release != nil {
				<-h.release
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-h.done })
	return h
}

// notify sends a notification and returns the build deadline the Batcher
// armed in response, as an offset from the start of the test.
func (h *batcherHarness) notify() time.Duration {
	h.t.Helper()
	h.b.Notify()
	return h.nextArmed()
}

func (h *batcherHarness) nextArmed() time.Duration {
	h.t.Helper()
	select {
	case d := <-h.clock.armed:
		return d.Sub(h.start)
	case <-time.After(10 * time.Second): // a hang, not a timing criterion
		h.t.Fatal("the Batcher never armed its timer")
		return 0
	}
}

func (h *batcherHarness) expectBuildAt(at time.Duration) {
	h.t.Helper()
	select {
	case got := <-h.builds:
		if got.Sub(h.start) != at {
			h.t.Fatalf("build at %v, want %v", got.Sub(h.start), at)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatalf("no build (wanted one at %v)", at)
	}
}

// expectNoBuild checks that no build has happened. On a fake clock this is
// exact: a build can only follow a timer firing, which only Advance does.
func (h *batcherHarness) expectNoBuild() {
	h.t.Helper()
	select {
	case got := <-h.builds:
		h.t.Fatalf("unexpected build at %v", got.Sub(h.start))
	default:
	}
}

func (h *batcherHarness) advanceTo(at time.Duration) {
	h.clock.Advance(at - h.clock.Now().Sub(h.start))
}

func TestBatcherBuildsOnceAfterTheBurstGoesQuiet(t *testing.T) {
	h := startBatcher(t, nil)
	if got := h.notify(); got != 100*time.Millisecond {
		t.Fatalf("first change: build armed at %v, want 100ms", got)
	}
	// Each further change within the holdoff pushes the build back.
	for _, at := range []time.Duration{60, 120, 180} {
		h.advanceTo(at * time.Millisecond)
		if got, want := h.notify(), (at+100)*time.Millisecond; got != want {
			t.Fatalf("change at %vms: build armed at %v, want %v", at, got, want)
		}
	}
	h.advanceTo(279 * time.Millisecond)
	h.expectNoBuild()
	h.advanceTo(280 * time.Millisecond)
	h.expectBuildAt(280 * time.Millisecond)
	h.expectNoBuild()
}

func TestBatcherNeverWaitsLongerThanMaxHoldoff(t *testing.T) {
	h := startBatcher(t, nil)
	h.notify()
	// A change every 90ms would postpone the build forever without the cap.
	var armed time.Duration
	for at := 90 * time.Millisecond; at < 500*time.Millisecond; at += 90 * time.Millisecond {
		h.advanceTo(at)
		armed = h.notify()
		if want := min(at+testHoldoff, testMaxHoldoff); armed != want {
			t.Fatalf("change at %v: build armed at %v, want %v", at, armed, want)
		}
	}
	if armed != testMaxHoldoff {
		t.Fatalf("last deadline %v, want the cap %v", armed, testMaxHoldoff)
	}
	h.advanceTo(499 * time.Millisecond)
	h.expectNoBuild()
	h.advanceTo(500 * time.Millisecond)
	h.expectBuildAt(500 * time.Millisecond)

	// The next burst has a cap of its own, counted from its first change.
	h.advanceTo(700 * time.Millisecond)
	if got := h.notify(); got != 800*time.Millisecond {
		t.Fatalf("next burst armed at %v, want 800ms", got)
	}
	h.advanceTo(800 * time.Millisecond)
	h.expectBuildAt(800 * time.Millisecond)
}

func TestBatcherChangeDuringBuildStartsAnotherBurst(t *testing.T) {
	release := make(chan struct{})
	h := startBatcher(t, release)
	h.notify()
	h.advanceTo(100 * time.Millisecond)
	h.expectBuildAt(100 * time.Millisecond) // the build is now blocked on release

	// Changes during the build are not lost, and make one more build.
	h.b.Notify()
	h.b.Notify()
	h.advanceTo(150 * time.Millisecond)
	release <- struct{}{}
	if got := h.nextArmed(); got != 250*time.Millisecond {
		t.Fatalf("burst after the build armed at %v, want 250ms", got)
	}
	h.advanceTo(250 * time.Millisecond)
	h.expectBuildAt(250 * time.Millisecond)
	release <- struct{}{}
	h.expectNoBuild()
}

func TestBatcherStopsWithItsContext(t *testing.T) {
	h := startBatcher(t, nil)
	h.notify()
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	h.expectNoBuild()
}

func TestNewBatcherRaisesMaxHoldoffToHoldoff(t *testing.T) {
	b := NewBatcher(time.Second, time.Millisecond)
	if b.MaxHoldoff != time.Second {
		t.Fatalf("MaxHoldoff = %v, want 1s", b.MaxHoldoff)
	}
}

func TestFireDelay(t *testing.T) {
	t0 := time.Unix(0, 0)
	for _, c := range []struct {
		since time.Duration // from the first change to now
		want  time.Duration
	}{
		{0, 100 * time.Millisecond},
		{350 * time.Millisecond, 100 * time.Millisecond},
		{450 * time.Millisecond, 50 * time.Millisecond},
		{500 * time.Millisecond, 0},
		{time.Second, 0},
	} {
		if got := fireDelay(t0, t0.Add(c.since), testHoldoff, testMaxHoldoff); got != c.want {
			t.Errorf("fireDelay after %v = %v, want %v", c.since, got, c.want)
		}
	}
}
