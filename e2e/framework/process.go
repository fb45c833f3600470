package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tailLines is how much of a process's output a failed test prints.
const tailLines = 80

// Process is a child process whose stdout and stderr go to a file. Under a
// test (StartProcess) it is stopped when the test ends, its tail is printed
// when the test fails, and a process that exits on its own before that
// fails the test: a crash of the control plane or of Envoy is always a bug
// worth seeing. The load command, which has no test, starts its processes
// with Spawn and stops them itself.
type Process struct {
	Name    string
	LogPath string

	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited

	mu       sync.Mutex
	stopping bool
	waitErr  error
}

// StartProcess starts cmd, named name in reports, with its output in a file
// of the test's temporary directory. The caller sets cmd's path, arguments,
// environment and directory; StartProcess owns its output.
func StartProcess(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p, err := Spawn(name, cmd, filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started %s (pid %d): %s", name, p.Pid(), strings.Join(cmd.Args, " "))
	t.Cleanup(func() {
		if err := p.Exited(); err != nil && !p.wasStopped() {
			t.Errorf("%s exited during the test: %v", name, err)
		}
		start := time.Now()
		p.Stop()
		t.Logf("stopped %s (pid %d): took %s", name, p.Pid(), time.Since(start).Round(time.Millisecond))
		if t.Failed() {
			t.Logf("--- last %d lines of %s output (%s) ---\n%s", tailLines, name, p.LogPath, p.Tail(tailLines))
		}
	})
	return p
}

// Spawn starts cmd, named name in errors, with its stdout and stderr
// written to logPath, as a process that dies with this one. Nothing stops
// it but the caller (Stop, Kill) or the end of this process.
func Spawn(name string, cmd *exec.Cmd, logPath string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Kill the child if this process dies without cleaning up (a panic, a
	// test timeout, a signal), so that no Envoy outlives its test or run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logFile.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited returns nil while the process runs, and an error saying how it
// ended once it has.
func (p *Process) Exited() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitErr != nil {
		return p.waitErr
	}
	return errors.New("exit status 0")
}

// Stop sends SIGTERM, waits for the process to exit, and kills it if it has
// not within ten seconds. Stopping a stopped process does nothing.
func (p *Process) Stop() {
	if !p.markStopping() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL, as a crash or the OOM killer would, and waits for the
// process to exit. The test is not failed for it.
func (p *Process) Kill() {
	if !p.markStopping() {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
}

// markStopping records that the process is being ended on purpose, and
// returns whether it still runs.
func (p *Process) markStopping() (running bool) {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// ExitCode returns the process's exit status once it has exited, and false
// while it runs or when a signal ended it.
func (p *Process) ExitCode() (int, bool) {
	select {
	case <-p.done:
	default:
		return 0, false
	}
	code := p.cmd.ProcessState.ExitCode()
	return code, code >= 0
}

func (p *Process) wasStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// Output returns everything the process has written so far.
func (p *Process) Output() string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.LogPath, err)
	}
	return string(data)
}

// Tail returns the last n lines of the process's output.
func (p *Process) Tail(n int) string {
	out := bytes.TrimRight([]byte(p.Output()), "\n")
	lines := bytes.Split(out, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
