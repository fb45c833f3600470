package ports

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// An owner is what a reservation record holds: "PID STARTTIME\n", the
// start time (in clock ticks after boot, /proc/PID/stat's 22nd field) so
// that a PID reused by an unrelated process does not keep a dead test's
// ports.

func selfOwner() (string, error) {
	pid := os.Getpid()
	start, _, err := procStat(pid)
	if err != nil {
		return "", fmt.Errorf("the port registry: this process's start time: %w", err)
	}
	return fmt.Sprintf("%d %s\n", pid, start), nil
}

// ownerAlive reports whether the process a record names still runs. A
// record that does not parse was cut short by a writer that died holding
// the lock: dead. A /proc that cannot be read for another reason counts as
// alive: better a port lost than one handed out twice.
func ownerAlive(record string) bool {
	f := strings.Fields(record)
	if len(f) != 2 || !strings.HasSuffix(record, "\n") {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	start, state, err := procStat(pid)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	// Z: exited, not yet reaped; X: being torn down.
	return start == f[1] && state != "Z" && state != "X"
}

// procStat returns a process's start time and state from /proc/PID/stat.
// The command name (field 2) is in parentheses and may hold spaces and
// parentheses itself: the fields are counted after its last ')'.
func procStat(pid int) (start, state string, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 {
		return "", "", fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return f[19], f[0], nil
}
