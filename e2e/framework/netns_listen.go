package framework

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// Listen opens a listener inside the namespace, at n.IP or any of its
// addresses, for a server of the test process that must not be on an
// address of this host (a mirror target checked by address): as dial, only
// the socket's making needs the thread in the namespace.
func (n *Netns) Listen(network, address string) (net.Listener, error) {
	target, err := os.Open(filepath.Join("/run/netns", n.Name))
	if err != nil {
		return nil, fmt.Errorf("opening network namespace %s: %w", n.Name, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	home, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("opening this thread's network namespace: %w", err)
	}
	defer home.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("entering network namespace %s: %w", n.Name, err)
	}
	l, listenErr := net.Listen(network, address)
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		if l != nil {
			l.Close()
		}
		return nil, fmt.Errorf("leaving network namespace %s: %w", n.Name, err)
	}
	runtime.UnlockOSThread()
	return l, listenErr
}
