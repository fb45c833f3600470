package load

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// startPerf records the on-CPU samples of the processes pids, with call
// graphs, into path; `perf report --sort comm` tells them apart.
func startPerf(path string, pids ...int) (*perfRecording, error) {
	list := make([]string, len(pids))
	for i, pid := range pids {
		list[i] = strconv.Itoa(pid)
	}
	cmd := exec.Command("perf", "record", "--quiet", "-F", "499", "-g", "-p", strings.Join(list, ","), "-o", path)
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
