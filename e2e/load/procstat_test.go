package load

import (
	"os"
	"testing"
)

func TestProcParsing(t *testing.T) {
	status := []byte("Name:\tingress-xds\nVmPeak:\t 2000 kB\nVmHWM:\t  81920 kB\nVmRSS:\t   40960 kB\n")
	if got, err := statusKiB(status, "VmHWM"); err != nil || got != 80<<20 {
		t.Errorf("VmHWM = %d, %v; want %d", got, err, 80<<20)
	}
	if got, err := statusKiB(status, "VmRSS"); err != nil || got != 40<<20 {
		t.Errorf("VmRSS = %d, %v; want %d", got, err, 40<<20)
	}
	if _, err := statusKiB(status, "VmSwap"); err == nil {
		t.Error("a missing field gave no error")
	}

	// A command name with a space and a ')' must not shift the fields.
	stat := []byte("4242 (ingress (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 0 0")
	if got, err := statCPUSeconds(stat); err != nil || got != 3.25 {
		t.Errorf("CPU seconds = %v, %v; want 3.25 (250 + 75 ticks)", got, err)
	}
	if _, err := statCPUSeconds([]byte("4242 (x) S 1")); err == nil {
		t.Error("a short stat line gave no error")
	}
}

func TestReadProcStatOfSelf(t *testing.T) {
	st, err := ReadProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.RSS <= 0 || st.PeakRSS < st.RSS {
		t.Errorf("RSS %d, peak %d: want 0 < RSS <= peak", st.RSS, st.PeakRSS)
	}
}
