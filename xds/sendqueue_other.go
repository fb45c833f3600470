//go:build !linux

package xds

import "net"

// setNotSentLowWater does nothing where TCP_NOTSENT_LOWAT is not Linux's.
func setNotSentLowWater(*net.TCPConn, int) error { return nil }
