package load

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// xdsMeter stands between Envoy and the control plane's xDS port and
// counts the bytes each way. Envoy's own counter of them (its xDS
// cluster's upstream_cx_rx_bytes_total) is one of millions of stats at
// 10,000 Ingresses, and reading one stat through the admin interface walks
// them all: seconds per read, 400 reads a run. The meter costs one
// loopback copy per byte, and counts the same whatever the bootstrap keeps
// of Envoy's stats.
type xdsMeter struct {
	listener net.Listener
	upstream string // the control plane's xDS address
	toEnvoy  atomic.Int64
	toCP     atomic.Int64
	conns    atomic.Int64
	wg       sync.WaitGroup

	mu   sync.Mutex
	open map[net.Conn]struct{}
}

// startXDSMeter listens on a free loopback port and forwards each
// connection to upstream.
func startXDSMeter(upstream string) (*xdsMeter, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the xDS meter: %w", err)
	}
	m := &xdsMeter{listener: l, upstream: upstream, open: map[net.Conn]struct{}{}}
	m.wg.Add(1)
	go m.accept()
	return m, nil
}

// Address is where Envoy's bootstrap must point instead of the control
// plane.
func (m *xdsMeter) Address() string { return m.listener.Addr().String() }

// ToEnvoy is the bytes the control plane sent Envoy so far, over every
// connection; ToControlPlane the other way (requests and ACKs).
func (m *xdsMeter) ToEnvoy() int64        { return m.toEnvoy.Load() }
func (m *xdsMeter) ToControlPlane() int64 { return m.toCP.Load() }

// Connections counts the connections Envoy made: more than one means its
// stream broke and it reconnected during the run.
func (m *xdsMeter) Connections() int64 { return m.conns.Load() }

func (m *xdsMeter) accept() {
	defer m.wg.Done()
	for {
		down, err := m.listener.Accept()
		if err != nil {
			return // closed
		}
		m.conns.Add(1)
		up, err := net.Dial("tcp", m.upstream)
		if err != nil {
			down.Close()
			continue
		}
		m.track(down, up)
		m.wg.Add(2)
		go m.copy(up, down, &m.toCP)
		go m.copy(down, up, &m.toEnvoy)
	}
}

func (m *xdsMeter) track(conns ...net.Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range conns {
		m.open[c] = struct{}{}
	}
}

// copy forwards src to dst, counting, and closes both when either side
// ends: a half-open gRPC stream is of no use to anyone.
func (m *xdsMeter) copy(dst, src net.Conn, counter *atomic.Int64) {
	defer m.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			counter.Add(int64(n))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	src.Close()
	dst.Close()
}

// Close stops listening and cuts every connection.
func (m *xdsMeter) Close() error {
	err := m.listener.Close()
	m.mu.Lock()
	for c := range m.open {
		c.Close()
	}
	m.mu.Unlock()
	m.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

var _ io.Closer = (*xdsMeter)(nil)
