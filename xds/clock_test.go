package xds

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when the test says so. Every time a
// channel timer (the Batcher's) is armed it reports the absolute deadline on
// armed, which is how a test knows the Batcher has seen a notification
// before it moves time on. An AfterFunc's function runs on the goroutine
// that calls Advance, before Advance returns, so that a test asserts on
// what it did without waiting for it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), armed: make(chan time.Time, 16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) timer {
	t := &fakeTimer{clock: c, c: make(chan time.Time, 1)}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) timer {
	t := &fakeTimer{clock: c, f: f}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

// Advance moves time on by d, stopping at each deadline on the way, in
// order, to fire its timer: a channel timer's tick is sent, an AfterFunc's
// function is called (without the clock's lock, so it may arm timers,
// which fire too if due by the end of d).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		var next *fakeTimer
		for _, t := range c.timers {
			if t.active && !t.deadline.After(end) && (next == nil || t.deadline.Before(next.deadline)) {
				next = t
			}
		}
		if next == nil {
			break
		}
		if next.deadline.After(c.now) {
			c.now = next.deadline
		}
		next.active = false
		if next.f == nil {
			next.c <- c.now
			continue
		}
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	c.now = end
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool { return !t.active && t.f != nil })
	c.mu.Unlock()
}

// pending returns the deadlines of the AfterFunc timers still to fire, as
// offsets from now, soonest first.
func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.timers {
		if t.active && t.f != nil {
			out = append(out, t.deadline.Sub(c.now))
		}
	}
	slices.Sort(out)
	return out
}

type fakeTimer struct {
	clock    *fakeClock
	c        chan time.Time // nil for an AfterFunc
	f        func()         // nil for a channel timer
	deadline time.Time
	active   bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Reset(d time.Duration) {
	t.clock.mu.Lock()
	// Like time.Timer since Go 1.23: no stale tick survives a Reset.
	if t.c != nil {
		select {
		case <-t.c:
		default:
		}
	}
	t.deadline = t.clock.now.Add(d)
	t.active = true
	deadline := t.deadline
	t.clock.mu.Unlock()
	if t.c != nil {
		t.clock.armed <- deadline
	}
}

func (t *fakeTimer) Stop() {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.active = false
}

// TestFakeClockFiresInOrder: Advance fires every deadline it passes, in
// order and at its own time, including one that a function it calls arms;
// none before its time.
func TestFakeClockFiresInOrder(t *testing.T) {
	c := newFakeClock()
	start := c.Now()
	var fired []time.Duration
	record := func() { fired = append(fired, c.Now().Sub(start)) }
	c.AfterFunc(2*time.Second, record)
	c.AfterFunc(time.Second, func() {
		record()
		c.AfterFunc(500*time.Millisecond, record)
	})
	c.Advance(time.Second - 1)
	if len(fired) != 0 {
		t.Fatalf("fired %v before the first deadline", fired)
	}
	if got, want := c.pending(), []time.Duration{1, time.Second + 1}; !slices.Equal(got, want) {
		t.Fatalf("pending %v, want %v", got, want)
	}
	c.Advance(3 * time.Second)
	if want := []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second}; !slices.Equal(fired, want) {
		t.Fatalf("fired at %v, want %v", fired, want)
	}
	if got := c.Now().Sub(start); got != 4*time.Second-1 {
		t.Fatalf("now %v after the advances, want 4s-1ns", got)
	}
	if p := c.pending(); len(p) != 0 {
		t.Fatalf("still pending %v", p)
	}
}
