package xds

import "time"

// clock is the part of package time that package xds waits on: the
// Batcher's holdoff and the Server's break-after-make deadlines
// (breakaftermake.go). Tests drive a fake one by hand (clock_test.go)
// instead of sleeping and hoping a deadline has or has not passed.
type clock interface {
	Now() time.Time
	NewTimer(d time.Duration) timer
	// AfterFunc calls f on a goroutine of its own once d has passed.
	// The timer it returns has no channel: C returns nil.
	AfterFunc(d time.Duration, f func()) timer
}

type timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

func (realClock) AfterFunc(d time.Duration, f func()) timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }

// Reset relies on Go 1.23 timer semantics: Reset never delivers a stale
// value from the previous period, so no drain is needed.
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }

func (t realTimer) Stop() { t.t.Stop() }
