package xds

import "time"

// clock is the part of package time the Batcher uses, so that tests can drive
// it by hand instead of sleeping.
type clock interface {
	Now() time.Time
	NewTimer(d time.Duration) timer
}

type timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }

// Reset relies on Go 1.23 timer semantics: Reset never delivers a stale
// value from the previous period, so no drain is needed.
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }

func (t realTimer) Stop() { t.t.Stop() }
