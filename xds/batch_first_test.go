package xds

import (
	"testing"
	"time"
)

// TestBatcherFirstAtOnce: with FirstAtOnce the first notification is built
// without waiting for the clock (start-up has nothing to batch with), and
// every later one is held off as usual.
func TestBatcherFirstAtOnce(t *testing.T) {
	h := startBatcherWith(t, nil, func(b *Batcher) { b.FirstAtOnce = true })
	h.b.Notify()
	h.expectBuildAt(0) // the fake clock never moved: no timer was waited for
	if got := h.notify(); got != testHoldoff {
		t.Fatalf("second change: build armed at %v, want %v", got, testHoldoff)
	}
	h.advanceTo(testHoldoff - time.Millisecond)
	h.expectNoBuild()
	h.advanceTo(testHoldoff)
	h.expectBuildAt(testHoldoff)
}
