//go:build linux

package xds

import (
	"errors"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// unsentAfterStall writes to a peer that reads nothing until the kernel
// takes no more (EAGAIN on the non-blocking socket, no clock involved),
// and returns how much the writer's socket holds unsent (SIOCOUTQNSD) and
// how much the kernel took.
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
	raw, err := server.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	var werr, ierr error
	if err := raw.Control(func(fd uintptr) {
		for written < 64<<20 {
			n, err := unix.Write(int(fd), chunk)
			if err != nil {
				if !errors.Is(err, unix.EAGAIN) {
					werr = err
				}
				break
			}
			written += n
		}
		unsent, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQNSD)
	}); err != nil {
		t.Fatal(err)
	}
	if werr != nil || ierr != nil {
		t.Fatalf("writing until the kernel takes no more: %v; SIOCOUTQNSD: %v", werr, ierr)
	}
	if written >= 64<<20 {
		t.Fatalf("the kernel took %d bytes for a peer that reads nothing", written)
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
