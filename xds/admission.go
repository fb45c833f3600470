package xds

import (
	"context"
	"sync"
	"time"
)

// What SotW Envoys are expected to send at once is kept within a budget.
//
// A SotW Envoy names every load assignment when it connects and again in
// each answer to load assignments. gRPC reads a stream's request as it
// arrives, as far as the stream's flow-control window lets the client
// send, and widens the window to the whole message once the stream starts
// reading it; a stream always is. So when a fleet reconnected at once, or
// answered one endpoint change, every one of those requests was in the
// control plane's memory together, held in gRPC's buffers while the CPU
// turned them into answers, past the manifests' memory limit for a large
// SotW fleet (docs/benchmarks.md, "Issue 31: what SotW Envoys send,
// within a budget", has the figures).
//
// So a stream of load assignments (SotW ADS or EDS) holds a place in a
// budget while its client is expected to send names:
//
//   - a new stream reads nothing until it has a place, weighed as twice
//     the encoded names of every load assignment served (its requests and
//     its answer) and a floor; what its client sent meanwhile waits within
//     the stream's flow-control window;
//   - a response of load assignments to a stream without a place waits for
//     one, weighed as the names once and the floor;
//   - the place is given back when the client answers the load assignments
//     last sent, when the stream ends, or after admissionHold, so that a
//     client that never answers, or never asks for load assignments, does
//     not keep it.
//
// Streams are admitted in the order they came; one heavier than the whole
// budget is admitted alone. Delta Envoys name only what changes and are
// not held back.
type sotwAdmission struct {
	budget int64
	clock  clock

	mu      sync.Mutex
	used    int64
	waiting []*admissionTicket // in arrival order
}

// admissionHold bounds how long a stream holds its place in the budget.
// Envoy's own initial fetch timeout is 15 s.
const admissionHold = 15 * time.Second

// admissionFloor is the weight of a stream beyond its load assignments'
// names: HTTP/2's initial flow-control window, what its client may send
// before the stream reads it.
const admissionFloor = 64 << 10

// DefaultSotWBudget is the budget's default (Options.SotWBudget).
const DefaultSotWBudget = 64 << 20

func newSotWAdmission(budget int64, c clock) *sotwAdmission {
	return &sotwAdmission{budget: budget, clock: c}
}

// admissionTicket is one stream's place: waiting, then held, then released
// (once, by whichever of the stream's answer, its end or the timer comes
// first).
type admissionTicket struct {
	a        *sotwAdmission
	weight   int64
	admitted chan struct{} // closed when admitted
	held     bool          // guarded by a.mu
	done     bool          // released or given up; guarded by a.mu
	timer    timer
}

// enqueue puts a stream of the given weight in line: its ticket's
// admitted channel is closed when it is admitted. The ticket must be
// released when what it was weighed for is read, or when the stream gives
// up waiting.
func (a *sotwAdmission) enqueue(weight int64) *admissionTicket {
	weight = min(max(weight, admissionFloor), a.budget)
	t := &admissionTicket{a: a, weight: weight, admitted: make(chan struct{})}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waiting = append(a.waiting, t)
	a.grantLocked()
	return t
}

// admit waits until a stream of the given weight is admitted, or ctx ends
// (then it leaves the line and ctx's error is returned).
func (a *sotwAdmission) admit(ctx context.Context, weight int64) (*admissionTicket, error) {
	t := a.enqueue(weight)
	select {
	case <-t.admitted:
		return t, nil
	case <-ctx.Done():
		t.release()
		return nil, ctx.Err()
	}
}

// grantLocked admits waiting streams in order while the first fits.
func (a *sotwAdmission) grantLocked() {
	for len(a.waiting) > 0 {
		t := a.waiting[0]
		if a.used > 0 && a.used+t.weight > a.budget {
			return
		}
		a.waiting = a.waiting[1:]
		a.used += t.weight
		t.held = true
		t.timer = a.clock.AfterFunc(admissionHold, t.release)
		close(t.admitted)
	}
}

// release gives the stream's place back, or takes a waiting stream out of
// line; a second call does nothing. Safe on a nil ticket.
func (t *admissionTicket) release() {
	if t == nil {
		return
	}
	a := t.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	if t.timer != nil {
		t.timer.Stop()
	}
	if t.held {
		a.used -= t.weight
		a.grantLocked()
		return
	}
	for i, w := range a.waiting {
		if w == t {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			break
		}
	}
	a.grantLocked()
}

// holds says whether the ticket still holds its place: false once
// released, by the stream or by the hold's end. False on a nil ticket.
func (t *admissionTicket) holds() bool {
	if t == nil {
		return false
	}
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.held && !t.done
}

// state reports the weight admitted and the streams waiting, for tests and
// the metrics.
func (a *sotwAdmission) state() (used int64, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used, len(a.waiting)
}
