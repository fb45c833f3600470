//go:build linux

package xds

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// setNotSentLowWater sets c's TCP_NOTSENT_LOWAT to bytes.
func setNotSentLowWater(c *net.TCPConn, bytes int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("setting TCP_NOTSENT_LOWAT: %w", err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, bytes)
	}); err != nil {
		return fmt.Errorf("setting TCP_NOTSENT_LOWAT: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("setting TCP_NOTSENT_LOWAT: %w", serr)
	}
	return nil
}
