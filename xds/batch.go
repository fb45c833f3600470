package xds

import (
	"context"
	"time"
)

// Batcher coalesces bursts of change notifications: after a change it waits
// until Holdoff has passed with no further change, but never longer than
// MaxHoldoff after the first change of the burst, then calls the build
// function once. Contour operators know these knobs by the same names.
type Batcher struct {
	Holdoff    time.Duration
	MaxHoldoff time.Duration
	// FirstAtOnce builds the first notification without a holdoff: at
	// start-up nothing has been published, so there is nothing to batch
	// with and every millisecond is convergence (serve's first is the
	// informers' sync).
	FirstAtOnce bool
	// IdleAtOnce builds a notification without a holdoff when it comes a
	// whole Holdoff or more after the previous build ended: it starts no
	// burst that any change is known to be part of, and holding it off
	// would only add Holdoff to its latency. The changes that arrive while
	// it is built are held off as usual, so a burst costs one build more
	// than without it, and an isolated change (an Ingress created or
	// edited on a quiet cluster) is served a Holdoff sooner.
	IdleAtOnce bool

	notify chan struct{}
	clock  clock
	// afterBuild, when set, is called once a build has ended and Run has
	// noted when (tests wait on it before moving their clock).
	afterBuild func()
}

// NewBatcher returns a Batcher with the given delays. A MaxHoldoff shorter
// than Holdoff is raised to Holdoff.
func NewBatcher(holdoff, maxHoldoff time.Duration) *Batcher {
	return newBatcher(holdoff, maxHoldoff, realClock{})
}

func newBatcher(holdoff, maxHoldoff time.Duration, c clock) *Batcher {
	if maxHoldoff < holdoff {
		maxHoldoff = holdoff
	}
	return &Batcher{Holdoff: holdoff, MaxHoldoff: maxHoldoff, notify: make(chan struct{}, 1), clock: c}
}

// Notify records that something changed. It never blocks: notifications that
// arrive while one is already pending are the same burst.
func (b *Batcher) Notify() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// Run calls build after each burst of notifications until ctx is done. build
// runs on Run's goroutine, so builds never overlap; a notification that
// arrives during a build starts the next burst.
func (b *Batcher) Run(ctx context.Context, build func(context.Context)) {
	atOnce := b.FirstAtOnce
	var built time.Time // when the last build ended
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.notify:
		}
		if b.IdleAtOnce && !built.IsZero() && b.clock.Now().Sub(built) >= b.Holdoff {
			atOnce = true
		}
		if !atOnce && !b.waitForQuiet(ctx) {
			return
		}
		atOnce = false
		build(ctx)
		built = b.clock.Now()
		if b.afterBuild != nil {
			b.afterBuild()
		}
	}
}

// waitForQuiet returns once the burst that has just started is over, or
// false if ctx ended first.
func (b *Batcher) waitForQuiet(ctx context.Context) bool {
	first := b.clock.Now()
	timer := b.clock.NewTimer(fireDelay(first, first, b.Holdoff, b.MaxHoldoff))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-b.notify:
			timer.Reset(fireDelay(first, b.clock.Now(), b.Holdoff, b.MaxHoldoff))
		case <-timer.C():
			return true
		}
	}
}

// fireDelay is how long after now a burst that began at first, and whose
// latest change is now, should be built: Holdoff after the latest change,
// capped at MaxHoldoff after the first.
func fireDelay(first, now time.Time, holdoff, maxHoldoff time.Duration) time.Duration {
	return max(min(holdoff, first.Add(maxHoldoff).Sub(now)), 0)
}
