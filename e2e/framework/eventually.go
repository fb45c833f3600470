package framework

import (
	"context"
	"testing"
	"time"
)

// pollInterval is short because several tests measure convergence: a coarse
// poll would add its own latency to every figure they log.
const pollInterval = 10 * time.Millisecond

// Eventually calls check until it returns nil, and fails the test with the
// last error once timeout has passed. It logs how long the condition took to
// hold and returns that duration, for the test to report; the timeout is a
// generous bound against hanging, never a performance criterion.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) time.Duration {
	t.Helper()
	// Not t.Context(): Eventually also runs in cleanups, after it has ended.
	took, err := Poll(context.Background(), timeout, pollInterval, check)
	if err != nil {
		t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
	}
	t.Logf("%s: took %s", what, took.Round(time.Millisecond))
	return took
}
