package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The test pipeline validates every full translation's IR: the states of
// these tests keep the contract, so nothing is counted or logged.
func TestValidIRNotReported(t *testing.T) {
	tp := newTestPipeline(t, state(true, "198.18.0.1"))
	tp.Rebuild(context.Background())
	if !tp.Ready() {
		t.Fatal("nothing published")
	}
	if got := testutil.ToFloat64(tp.invalid.builds); got != 0 {
		t.Errorf("%v builds counted as breaking the IR's contract, want 0; logs:\n%s", got, tp.logs.String())
	}
	if strings.Contains(tp.logs.String(), "IR's contract") {
		t.Errorf("a broken contract logged:\n%s", tp.logs.String())
	}
}

// A broken contract is counted, build and violations, and logged with the
// violations (at most maxViolationsLogged of them), never a panic.
func TestInvalidIRReported(t *testing.T) {
	tp := newTestPipeline(t, state(false, "198.18.0.1"))
	m := &ir.IR{Backends: []*ir.Backend{{Name: "b", Port: 0}, {Name: "a", Port: 80}}}
	err := m.Validate()
	if err == nil {
		t.Fatal("the broken IR validates")
	}
	tp.invalid.report(tp.log, err)
	if got := testutil.ToFloat64(tp.invalid.builds); got != 1 {
		t.Errorf("builds counted %v, want 1", got)
	}
	if got := testutil.ToFloat64(tp.invalid.violations); got != 2 {
		t.Errorf("violations counted %v, want 2 (a out of order, b's port)", got)
	}
	logs := tp.logs.String()
	for _, want := range []string{"level=ERROR", "violations=2", `backend a: not sorted: after \"b\"`, "backend b: port 0 out of range"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
}
