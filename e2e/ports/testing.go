package ports

import "testing"

// Take reserves n ports in the shared registry (Open) for the test,
// released when it ends: after the processes the test started on them,
// whose stops are cleanups registered later and so run first.
func Take(t testing.TB, n int) []int {
	t.Helper()
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Reserve(n)
	if err != nil {
		t.Fatalf("reserving %d ports: %v", n, err)
	}
	t.Cleanup(func() {
		if err := res.Release(); err != nil {
			t.Errorf("releasing ports %v: %v", res.Ports, err)
		}
	})
	return res.Ports
}
