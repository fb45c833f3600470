package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// runMainEnv makes the test binary run main() with the arguments after
// "--", so that a test can see what the real command prints and how it
// exits.
const runMainEnv = "INGRESS_XDS_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"ingress-xds"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCommand runs the binary's main with args and returns its output and
// exit code.
func runCommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("running %v: %v", args, err)
		return "", -1
	}
}

// Every command of the usage text, and the binary itself, answers -h and
// --help with its usage and exit code 0: asking for help is no error. The
// commands are read from the usage text, so a new one is held to this too.
func TestHelpExitsZero(t *testing.T) {
	commands := regexp.MustCompile(`(?m)^  ingress-xds (\S+)`).FindAllStringSubmatch(usage, -1)
	if len(commands) < 5 {
		t.Fatalf("found %d commands in the usage text, want at least 5:\n%s", len(commands), usage)
	}
	for _, flag := range []string{"-h", "--help"} {
		out, code := runCommand(t, flag)
		if code != 0 || !strings.Contains(out, "Usage:") || !strings.Contains(out, "ingress-xds serve") {
			t.Errorf("ingress-xds %s: exit %d, want 0 and the usage text:\n%s", flag, code, out)
		}
		for _, c := range commands {
			name := c[1]
			out, code := runCommand(t, name, flag)
			want := "Usage of " + name
			if name == "version" {
				want = version // it has no flags: it answers with the version
			}
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("ingress-xds %s %s: exit %d, want 0 and %q in:\n%s", name, flag, code, want, out)
			}
		}
	}
	// Not asking for help still fails: an unknown flag, an unknown command.
	if out, code := runCommand(t, "serve", "--no-such-flag"); code == 0 {
		t.Errorf("ingress-xds serve --no-such-flag exited 0:\n%s", out)
	}
	if out, code := runCommand(t, "no-such-command"); code == 0 {
		t.Errorf("ingress-xds no-such-command exited 0:\n%s", out)
	}
}
