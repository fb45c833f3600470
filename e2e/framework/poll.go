package framework

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Poll calls check every interval until it returns nil, and returns how long
// that took. It gives up with check's last error once timeout has passed
// (a timeout of 0 leaves the bound to ctx; a negative one has passed
// already, so check runs once) or ctx has ended, and at once
// when check returns an error made by Permanent. It is the one wait-until
// loop of the tests, the framework and the load command: none of them may
// turn its duration into a pass/fail criterion, only report it.
func Poll(ctx context.Context, timeout, interval time.Duration, check func() error) (time.Duration, error) {
	start := time.Now()
	var deadline <-chan time.Time
	if timeout != 0 {
		timer := time.NewTimer(max(timeout, 0))
		defer timer.Stop()
		deadline = timer.C
	}
	for {
		err := check()
		if err == nil {
			return time.Since(start), nil
		}
		if p, ok := errors.AsType[*permanentError](err); ok {
			return time.Since(start), p.err
		}
		select {
		case <-deadline:
			return time.Since(start), err
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("%w (last error: %v)", context.Cause(ctx), err)
		case <-time.After(interval): // after each check, so a slow check is not called back to back
		}
	}
}

// Permanent marks err as one that waiting cannot cure (the process polled
// has exited, the request can never succeed): Poll returns err at once.
func Permanent(err error) error {
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }
