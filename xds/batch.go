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

	notify chan struct{}
}

// NewBatcher returns a Batcher with the given delays.
func NewBatcher(holdoff, maxHoldoff time.Duration) *Batcher {
	if maxHoldoff < holdoff {
		maxHoldoff = holdoff
	}
	return &Batcher{Holdoff: holdoff, MaxHoldoff: maxHoldoff, notify: make(chan struct{}, 1)}
}

// Notify records that something changed. It never blocks.
func (b *Batcher) Notify() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// Run calls build after each burst of notifications until ctx is done. build
// runs on Run's goroutine, so builds never overlap.
func (b *Batcher) Run(ctx context.Context, build func(context.Context)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.notify:
		}
		deadline := time.Now().Add(b.MaxHoldoff)
		timer := time.NewTimer(b.Holdoff)
	wait:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-b.notify:
				next := time.Until(deadline)
				if next > b.Holdoff {
					next = b.Holdoff
				}
				timer.Reset(max(next, 0))
			case <-timer.C:
				break wait
			}
		}
		build(ctx)
	}
}
