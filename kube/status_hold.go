package kube

import (
	"context"
	"time"
)

// waitHold waits for Hold to close (at once when there is none) and says
// whether to go on writing: false when ctx ended first.
func (w *StatusWriter) waitHold(ctx context.Context) bool {
	if w.Hold == nil {
		return true
	}
	select {
	case <-w.Hold:
		return ctx.Err() == nil
	default:
	}
	w.holding.Store(true)
	defer w.holding.Store(false)
	start := time.Now()
	w.Logger.Info("holding ingress status back (until the first snapshot is published)")
	select {
	case <-ctx.Done():
		return false
	case <-w.Hold:
	}
	w.Logger.Info("ingress status no longer held back", "heldFor", time.Since(start).Round(time.Millisecond))
	return ctx.Err() == nil
}
