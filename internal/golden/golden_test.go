package golden

import (
	"strings"
	"testing"
)

func TestDiffShowsInsertedAndRemovedLinesOnly(t *testing.T) {
	want := "a\nb\nc\nd\ne\nf\ng\nh"
	got := "a\nb\nc\nX\nd\ne\nf\nh"
	diff := Diff(want, got)
	for _, line := range []string{"+    4 X", "-    7 g", "     3 c", "     6 f"} {
		if !strings.Contains(diff, line) {
			t.Errorf("diff lacks %q:\n%s", line, diff)
		}
	}
	if strings.Contains(diff, "-    4 d") || strings.Contains(diff, "+    5 d") {
		t.Errorf("an inserted line shifted the rest into the diff:\n%s", diff)
	}
	if Diff(want, want) != "" {
		t.Errorf("equal texts differ: %q", Diff(want, want))
	}
}
