//go:build linux

package xds

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// unsentAfterStall writes to a peer that reads nothing until the kernel
// takes no more, and returns how much the writer's socket holds unsent
// (SIOCOUTQNSD) and how much the write got through.
func unsentAfterStall(t *testing.T, lis net.Listener) (unsent, written int) {
	t.Helper()
	defer lis.Close()
	client, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	// The deadline only ends the write once the queues are full: the
	// kernel stops taking bytes as soon as they are, well within it.
	if err := server.SetWriteDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	written, err = server.Write(make([]byte, 16<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writing 16 MiB to a peer that reads nothing: %d bytes, %v; want the deadline", written, err)
	}
	raw, err := server.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ierr error
	if err := raw.Control(func(fd uintptr) { unsent, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQNSD) }); err != nil || ierr != nil {
		t.Fatalf("SIOCOUTQNSD: %v %v", err, ierr)
	}
	return unsent, written
}

// With the low water mark, a connection whose Envoy does not read holds
// about that much unsent in the kernel; without it, the kernel takes
// whatever its send buffer grows to.
func TestLowWaterListenerBoundsTheKernelsQueue(t *testing.T) {
	listen := func() net.Listener {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return lis
	}
	plain, plainWritten := unsentAfterStall(t, listen())
	bounded, boundedWritten := unsentAfterStall(t, lowWaterListener{Listener: listen(), bytes: sendQueueLowWater})
	t.Logf("unsent in the writer's socket: %d bytes without the bound (%d written), %d with it (%d written)", plain, plainWritten, bounded, boundedWritten)
	if bounded > 2*sendQueueLowWater {
		t.Errorf("%d bytes unsent with a low water mark of %d", bounded, sendQueueLowWater)
	}
	if plain <= 2*sendQueueLowWater {
		t.Errorf("without the bound only %d bytes unsent: the test shows nothing", plain)
	}
}
