package framework

import (
	"context"
	"net"
)

// Dial opens a connection from inside the namespace (from n.IP), for
// tests that must hold a request open, or drop it, themselves.
func (n *Netns) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	return n.dial(ctx, network, address)
}
