package load

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// ControlPlane is the process under test, started from a command template
// so that the same run can measure ingress-xds or a peer. Envoy runs as one
// too. It is a framework.Process (Pid, Stop, LogPath) whose Exited names it
// and its log: the load command reports errors, not test failures.
type ControlPlane struct {
	*framework.Process
	name string // in errors: "the control plane", "envoy"
}

// Placeholders of a command template.
type Placeholders struct {
	Kubeconfig string // {kubeconfig}
	XDSAddress string // {xds}: 127.0.0.1:PORT
	XDSPort    string // {xds_port}
	// HTTPPort is {http_port}: the port the control plane must tell Envoy
	// to listen on for HTTP. Only the Envoy phase needs it.
	HTTPPort string
}

// ExpandCommand fills the placeholders of template and splits it into
// environment assignments and argv. Words are split on blanks, with single
// and double quotes as in a shell; leading NAME=value words set the
// environment, as in `GOGC=200 bin/ingress-xds serve ...`.
func ExpandCommand(template string, p Placeholders) (env, argv []string, err error) {
	return expandTemplate(template, []string{
		"{kubeconfig}", p.Kubeconfig,
		"{xds}", p.XDSAddress,
		"{xds_port}", p.XDSPort,
		"{http_port}", p.HTTPPort,
	})
}

// expandTemplate is ExpandCommand with the placeholders given as
// old, new pairs.
func expandTemplate(template string, pairs []string) (env, argv []string, err error) {
	expanded := strings.NewReplacer(pairs...).Replace(template)
	if left := regexp.MustCompile(`\{[a-z_]+\}`).FindString(expanded); left != "" {
		var known []string
		for i := 0; i < len(pairs); i += 2 {
			known = append(known, pairs[i])
		}
		return nil, nil, fmt.Errorf("unknown placeholder %s in the command (known: %s)", left, strings.Join(known, ", "))
	}
	words, err := splitWords(expanded)
	if err != nil {
		return nil, nil, err
	}
	assignment := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	for len(words) > 0 && assignment.MatchString(words[0]) {
		env, words = append(env, words[0]), words[1:]
	}
	if len(words) == 0 {
		return nil, nil, errors.New("the command is empty")
	}
	return env, words, nil
}

// splitWords splits s on blanks outside quotes. Inside single quotes
// everything is literal; inside double quotes a backslash escapes the next
// character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote or escape in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// StartControlPlane starts argv with env added, output to logPath.
func StartControlPlane(env, argv []string, logPath string) (*ControlPlane, error) {
	return startProcess("the control plane", env, argv, logPath)
}

// startProcess starts argv with env added, output to logPath, as a process
// that dies with this one; name says what it is in errors.
func startProcess(name string, env, argv []string, logPath string) (*ControlPlane, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	p, err := framework.Spawn(name, cmd, logPath)
	if err != nil {
		return nil, err
	}
	return &ControlPlane{Process: p, name: name}, nil
}

// Exited returns nil while the process runs and how it ended once it has: a
// control plane that dies during a run makes every later figure wrong.
func (cp *ControlPlane) Exited() error {
	if err := cp.Process.Exited(); err != nil {
		return fmt.Errorf("%s exited: %w (log: %s)", cp.name, err, cp.LogPath)
	}
	return nil
}
