package xds

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An Envoy's connection to the control plane ages out (MaxConnectionAge):
// the server sends GOAWAY, and once the grace has passed closes the
// connection, and the Envoy opens a new one (through a Service, to any
// replica: that is how a fleet spreads again after a rollout). The Envoy
// keeps its configuration throughout, serves every request meanwhile, and
// takes changes on the new connection. The age is gRPC's own timer, which
// a test cannot step; the test waits for what follows it (new connections)
// and never judges how long that took.
func TestConnectionsAgeOut(t *testing.T) {
	toolPath(t, "envoy")
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			logs := &logBuffer{}
			s := NewServerWithOptions(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Options{MaxConnectionAge: time.Second, MaxConnectionAgeGrace: 500 * time.Millisecond})
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			lis := &countingListener{Listener: inner}
			ts := serveOn(t, s, lis, logs)
			port := freePort(t)
			f := fixture{listenerPort: port, clusters: map[string][]string{"a": {backend(t, "a1")}}}
			ts.publish(t, f)
			e := startEnvoy(t, ts.addr, "aging-"+protocol, delta, nil)
			waitSynced(t, ts, e.nodeID)
			expectBackend(t, port, "/a", "a1")

			// Requests all along, until the Envoy has moved twice.
			var failed []string
			var mu sync.Mutex
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if status, body, err := through(port, "/a"); err != nil || status != 200 || body != "a1" {
						mu.Lock()
						failed = append(failed, fmt.Sprintf("%d %q %v", status, body, err))
						mu.Unlock()
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			eventually(t, "the envoy on its third connection", func() error {
				if n := lis.accepted.Load(); n < 3 {
					return fmt.Errorf("%d connections accepted", n)
				}
				if n := e.stat("cluster." + XDSClusterName + ".upstream_cx_total"); n < 3 {
					return fmt.Errorf("envoy opened %d connections to the control plane", n)
				}
				return nil
			})
			close(stop)
			<-done
			if len(failed) > 0 {
				t.Errorf("%d requests failed while the connection aged, first: %s", len(failed), failed[0])
			}
			// Configured once: moving rebuilt nothing.
			if n := e.stat("listener_manager.listener_removed") + e.stat("cluster_manager.cluster_removed"); n != 0 {
				t.Errorf("envoy removed %d listeners or clusters while moving", n)
			}
			// And a change reaches it on the connection it holds now.
			f.clusters["b"] = []string{backend(t, "b1")}
			ts.publish(t, f)
			expectBackend(t, port, "/b", "b1")
		})
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}
