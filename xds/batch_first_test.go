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

// TestBatcherIdleAtOnce: with IdleAtOnce a notification that comes a whole
// holdoff after the previous build ended is built at once, and one that
// comes sooner, or during that build, is held off as usual.
func TestBatcherIdleAtOnce(t *testing.T) {
	release, ended := make(chan struct{}), make(chan struct{}, 1)
	h := startBatcherWith(t, release, func(b *Batcher) {
		b.IdleAtOnce = true
		b.afterBuild = func() { ended <- struct{}{} }
	})
	// done lets a build end and waits until the Batcher has noted when.
	done := func() {
		release <- struct{}{}
		<-ended
	}
	// Nothing built yet: the first is held off (FirstAtOnce is start-up's).
	if got := h.notify(); got != testHoldoff {
		t.Fatalf("first change: build armed at %v, want %v", got, testHoldoff)
	}
	h.advanceTo(testHoldoff)
	h.expectBuildAt(testHoldoff)
	done()
	// Sooner than a holdoff after that build: held off.
	h.advanceTo(testHoldoff + testHoldoff/2)
	if got := h.notify(); got != 2*testHoldoff+testHoldoff/2 {
		t.Fatalf("a change half a holdoff after a build: armed at %v, want %v", got, 2*testHoldoff+testHoldoff/2)
	}
	h.advanceTo(2*testHoldoff + testHoldoff/2)
	h.expectBuildAt(2*testHoldoff + testHoldoff/2)
	done()
	// A whole holdoff after it: built at once, without the clock moving.
	h.advanceTo(4 * testHoldoff)
	h.b.Notify()
	h.expectBuildAt(4 * testHoldoff)
	// A change during that build starts a burst held off as usual.
	h.b.Notify()
	done()
	if got := h.nextArmed(); got != 5*testHoldoff {
		t.Fatalf("a change during the build: armed at %v, want %v", got, 5*testHoldoff)
	}
	h.expectNoBuild()
	h.advanceTo(5 * testHoldoff)
	h.expectBuildAt(5 * testHoldoff)
	done()
}
