package kube

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// kindSynced is one informer's part of the initial sync: its kind (in the
// log), whether its handler has seen the initial list, and how many objects
// it holds.
type kindSynced struct {
	kind   string
	synced cache.InformerSynced
	count  func() int
}

// countOf counts what an informer holds.
func countOf(informer cache.SharedIndexInformer) func() int {
	return func() int { return len(informer.GetStore().ListKeys()) }
}

// waitForSync waits until every kind has synced, logging each as it does
// (the kinds are listed at once, each by its informer): start-up's first
// wait is mostly these lists, and which kind takes how long is what a
// faster start needs to know (docs/benchmarks.md, "Issue 18: start-up").
// It returns false when ctx ended first.
func waitForSync(ctx context.Context, start time.Time, kinds []kindSynced, log *slog.Logger) bool {
	var wg sync.WaitGroup
	ok := make([]bool, len(kinds))
	for i, k := range kinds {
		wg.Go(func() {
			if ok[i] = pollSynced(ctx, k.synced); ok[i] {
				log.Info("informer synced", "kind", k.kind, "objects", k.count(), "took", time.Since(start).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
	for _, synced := range ok {
		if !synced {
			return false
		}
	}
	return true
}

// syncPoll is how often waitForSync looks: client-go's WaitForCacheSync
// looks every 100 ms, a large part of a small cluster's start-up
// (docs/benchmarks.md, "Figures moved from code comments").
// HasSynced is a cheap read.
const syncPoll = 5 * time.Millisecond

// pollSynced waits for synced to be true, or returns false when ctx ends.
func pollSynced(ctx context.Context, synced cache.InformerSynced) bool {
	t := time.NewTicker(syncPoll)
	defer t.Stop()
	for !synced() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
