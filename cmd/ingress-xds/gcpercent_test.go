package main

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent checks that --gc-percent reaches the Go runtime, that
// $GOGC wins over it, and that a non-positive value is refused.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOGC", "")
	if err := setGCPercent(37); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); got != 37 {
		t.Errorf("GC percent %d after --gc-percent 37", got)
	}
	if err := setGCPercent(0); err == nil {
		t.Error("--gc-percent 0 was accepted")
	}

	t.Setenv("GOGC", "80")
	if err := setGCPercent(37); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d: --gc-percent overrode $GOGC", got)
	}
}
