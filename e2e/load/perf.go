package load

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// perfRecording is `perf record` attached to the control plane for one
// phase of the run. perf needs nothing from the process: no pprof endpoint,
// no flag, so it profiles a peer just as well, and Go binaries keep the
// frame pointers its call graphs follow.
type perfRecording struct {
	cmd  *exec.Cmd
	Path string
}

// startPerf records pid's on-CPU samples, with call graphs, into path.
func startPerf(pid int, path string) (*perfRecording, error) {
	cmd := exec.Command("perf", "record", "--quiet", "-F", "499", "-g", "-p", strconv.Itoa(pid), "-o", path)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting perf record (is perf installed?): %w", err)
	}
	return &perfRecording{cmd: cmd, Path: path}, nil
}

// stop ends the recording; perf writes its file on SIGINT.
func (p *perfRecording) stop() error {
	if p == nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		// perf writes its data and then dies of the SIGINT it was sent.
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
				return nil
			}
		}
		if err != nil {
			return fmt.Errorf("perf record into %s: %w", p.Path, err)
		}
		return nil
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("perf record into %s did not stop", p.Path)
	}
}
