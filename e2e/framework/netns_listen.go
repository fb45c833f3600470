package framework

import (
	"io"
	"net"
)

// Listen opens a listener inside the namespace, at n.IP or any of its
// addresses, for a server of the test process that must not be on an
// address of this host (a mirror target checked by address).
func (n *Netns) Listen(network, address string) (net.Listener, error) {
	var l net.Listener
	err := n.inside(func() (io.Closer, error) {
		var err error
		l, err = net.Listen(network, address)
		return l, err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}
