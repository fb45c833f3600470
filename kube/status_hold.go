package kube

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// waitHold waits for Hold to close (at once when there is none) and says
// whether to go on writing: false when ctx ended first.
func (w *StatusWriter) waitHold(ctx context.Context) bool {
	return waitHold(ctx, w.Hold, &w.holding, w.Logger, "ingress status")
}

// waitHold waits for hold to close, with holding set meanwhile, and says
// whether to go on writing: false when ctx ended first. what names the
// status held back, for the log.
func waitHold(ctx context.Context, hold <-chan struct{}, holding *atomic.Bool, logger *slog.Logger, what string) bool {
	if hold == nil {
		return true
	}
	select {
	case <-hold:
		return ctx.Err() == nil
	default:
	}
	holding.Store(true)
	defer holding.Store(false)
	start := time.Now()
	logger.Info("holding " + what + " back (until the first snapshot is published)")
	select {
	case <-ctx.Done():
		return false
	case <-hold:
	}
	logger.Info(what+" no longer held back", "heldFor", time.Since(start).Round(time.Millisecond))
	return ctx.Err() == nil
}
