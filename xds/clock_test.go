package xds

import (
	"sync"
	"time"
)

// fakeClock is a clock that moves only when the test says so. Every time a
// timer is armed it reports the absolute deadline on armed, which is how a
// test knows the Batcher has seen a notification before it moves time on.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	timer *fakeTimer
	armed chan time.Time
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
	c.timer = t
	c.mu.Unlock()
	t.Reset(d)
	return t
}

// Advance moves time on and fires the timer if its deadline has come.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	if t := c.timer; t != nil && t.active && !t.deadline.After(c.now) {
		t.active = false
		t.c <- c.now
	}
}

type fakeTimer struct {
	clock    *fakeClock
	c        chan time.Time
	deadline time.Time
	active   bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Reset(d time.Duration) {
	t.clock.mu.Lock()
	// Like time.Timer since Go 1.23: no stale tick survives a Reset.
	select {
	case <-t.c:
	default:
	}
	t.deadline = t.clock.now.Add(d)
	t.active = true
	deadline := t.deadline
	t.clock.mu.Unlock()
	t.clock.armed <- deadline
}

func (t *fakeTimer) Stop() {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.active = false
}
