package xds

import (
	"net"
)

// sendQueueLowWater is how much of a response each xDS connection lets
// the kernel hold unsent (TCP_NOTSENT_LOWAT): past it, a write waits for
// the peer to take what is queued. What is not yet in the kernel is the
// resources' shared encoding, held once for the whole fleet (codec.go);
// what is in it is a copy per connection. Without the bound the kernel
// takes a response whole per Envoy (up to its autotuned send buffer),
// so a change of a large route table sent to a fleet is held once per
// Envoy, charged to the control plane's memory where the cgroup counts
// socket buffers (cgroup v2). docs/xds-cache.md, "What the kernel holds".
const sendQueueLowWater = 64 << 10

// lowWaterListener sets sendQueueLowWater on every TCP connection it
// accepts; a connection of another kind (a test's pipe) is left as it is.
type lowWaterListener struct {
	net.Listener
	bytes int
}

func (l lowWaterListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		// Best effort: a kernel without the option sends as before.
		_ = setNotSentLowWater(tc, l.bytes)
	}
	return c, nil
}
