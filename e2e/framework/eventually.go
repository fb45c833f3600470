package framework

import (
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
	took, err := poll(timeout, check)
	if err != nil {
		t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
	}
	t.Logf("%s: took %s", what, took.Round(time.Millisecond))
	return took
}

// poll is Eventually without the test: it returns the time check took to
// succeed, or its last error at the deadline.
func poll(timeout time.Duration, check func() error) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		err := check()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return time.Since(start), err
		}
		time.Sleep(pollInterval)
	}
}
