package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcStat is what /proc says of one process at one moment.
type ProcStat struct {
	RSS        int64   // VmRSS, bytes
	PeakRSS    int64   // VmHWM, bytes: the peak since the process started
	CPUSeconds float64 // user + system time
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// ReadProcStat reads /proc/PID/status and /proc/PID/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	var st ProcStat
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	if st.RSS, err = statusKiB(status, "VmRSS"); err != nil {
		return st, err
	}
	if st.PeakRSS, err = statusKiB(status, "VmHWM"); err != nil {
		return st, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, fmt.Errorf("reading the stat of process %d: %w", pid, err)
	}
	if st.CPUSeconds, err = statCPUSeconds(stat); err != nil {
		return st, fmt.Errorf("process %d: %w", pid, err)
	}
	return st, nil
}

// statusKiB returns field (e.g. "VmHWM") of /proc/PID/status in bytes.
func statusKiB(status []byte, field string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		num, unit, _ := strings.Cut(strings.TrimSpace(value), " ")
		if unit != "kB" {
			return 0, fmt.Errorf("%s: unexpected unit in %q", field, value)
		}
		kib, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		return kib << 10, nil
	}
	return 0, fmt.Errorf("no %s in /proc/PID/status", field)
}

// statCPUSeconds returns utime + stime from /proc/PID/stat. The command
// name (field 2) may hold spaces and parentheses, so fields are counted
// from the last ')'.
func statCPUSeconds(stat []byte) (float64, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed /proc/PID/stat")
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("short /proc/PID/stat")
	}
	var total float64
	for _, i := range []int{utime, stime} {
		ticks, err := strconv.ParseUint(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc/PID/stat: %w", err)
		}
		total += float64(ticks) / clockTicks
	}
	return total, nil
}

// childrenByName returns the children of process ppid by command name
// (kube-apiserver, etcd), from /proc/PID/stat's comm and ppid fields.
func childrenByName(ppid int) map[string]int {
	out := map[string]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process went away
		}
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(data[end+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(ppid) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err == nil {
			out[string(data[open+1:end])] = pid
		}
	}
	return out
}

// selfCPUSeconds is the user and system time of this process so far.
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// waitIdle returns once process pid used less than busy of a core over a
// window of one second, or when ctx ends (it is no error to measure a
// process that never idles; the caller logs how long it waited). A fixed
// pause would be too short at one scale and wasteful at another: status
// writes after convergence keep a control plane busy for seconds with
// 10,000 Ingresses and for milliseconds with 100.
func waitIdle(ctx context.Context, pid int, busy float64) (time.Duration, error) {
	const window = time.Second
	start := time.Now()
	prev, err := ReadProcStat(pid)
	if err != nil {
		return 0, err
	}
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), nil
		case <-time.After(window):
		}
		cur, err := ReadProcStat(pid)
		if err != nil {
			return 0, err
		}
		if (cur.CPUSeconds-prev.CPUSeconds)/window.Seconds() < busy {
			return time.Since(start), nil
		}
		prev = cur
	}
}
