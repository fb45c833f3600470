package main

import (
	"flag"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestEscapedSlashesFlag checks --escaped-slashes: each value reaches the
// IR's listeners, its default is the one that keeps /admin%2Fx under
// /admin's access controls, and a value of no meaning is an error.
func TestEscapedSlashesFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want ir.EscapedSlashes
	}{
		{nil, ir.EscapedSlashesRedirect},
		{[]string{"--escaped-slashes=redirect"}, ir.EscapedSlashesRedirect},
		{[]string{"--escaped-slashes=forward"}, ir.EscapedSlashesForward},
		{[]string{"--escaped-slashes=reject"}, ir.EscapedSlashesReject},
		{[]string{"--escaped-slashes=keep"}, ir.EscapedSlashesKeep},
	} {
		var tf translateFlags
		fs := newFlagSetForTest(&tf)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := tf.validate(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := tf.options().EscapedSlashes; got != tc.want {
			t.Errorf("%v: EscapedSlashes %q, want %q", tc.args, got, tc.want)
		}
	}
	var tf translateFlags
	fs := newFlagSetForTest(&tf)
	if err := fs.Parse([]string{"--escaped-slashes=decode"}); err != nil {
		t.Fatal(err)
	}
	if err := tf.validate(); err == nil {
		t.Error("--escaped-slashes=decode was accepted")
	}
}

func newFlagSetForTest(tf *translateFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	tf.register(fs)
	return fs
}
