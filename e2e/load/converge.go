package load

import (
	"context"
	"fmt"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// Convergence is how long, from the control plane's start, an ADS client
// took to get there.
type Convergence struct {
	// Connected is when the ADS stream opened (the xDS port listened).
	Connected time.Duration
	// FirstResponse is when the first response of any type arrived.
	FirstResponse time.Duration
	// AllHosts is when route configurations covered every workload host:
	// the figure compared with the peer's "initial convergence".
	AllHosts time.Duration
	// AllEndpoints is when the client also held a cluster and a load
	// assignment for every Service: what Envoy needs to serve them all.
	AllEndpoints time.Duration
}

// dial opens an ADS stream to address that lives as long as ctx, retrying
// while the control plane starts up, until deadline or until alive reports
// that the process died.
func dial(ctx context.Context, deadline time.Time, address string, opts adsclient.Options, alive func() error) (*adsclient.Client, error) {
	var c *adsclient.Client
	_, err := framework.Poll(ctx, time.Until(deadline), 20*time.Millisecond, func() (err error) {
		if c, err = adsclient.Dial(ctx, address, opts); err != nil {
			if exited := alive(); exited != nil {
				return framework.Permanent(exited)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to the xDS server at %s: %w", address, err)
	}
	return c, nil
}

// converge connects an ADS client, whose stream lives as long as ctx, and
// waits at most timeout until it holds the whole workload. start is when the
// control plane was started.
func converge(ctx context.Context, timeout time.Duration, address string, opts adsclient.Options, w Workload, start time.Time, alive func() error) (*adsclient.Client, Convergence, error) {
	var conv Convergence
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := waitCtx.Deadline()
	c, err := dial(ctx, deadline, address, opts, alive)
	if err != nil {
		return nil, conv, err
	}
	conv.Connected = time.Since(start)

	watch := &hostWatch{hosts: w.AllHosts()}
	var first time.Time
	snap, err := c.WaitFor(waitCtx, func(s *adsclient.Snapshot) bool {
		if first.IsZero() {
			first = earliest(s.Received)
		}
		return watch.ready(s)
	})
	if err != nil {
		c.Close()
		return nil, conv, fmt.Errorf("waiting for routes to all %d hosts: %w (client holds %s)", len(watch.hosts), err, describe(snap))
	}
	conv.FirstResponse = first.Sub(start)
	conv.AllHosts = snap.Received[resource.RouteType].Sub(start)

	services := w.Services()
	snap, err = c.WaitFor(waitCtx, func(s *adsclient.Snapshot) bool {
		return len(s.Clusters) >= services && len(s.Endpoints) >= services
	})
	if err != nil {
		c.Close()
		return nil, conv, fmt.Errorf("waiting for clusters and load assignments of all %d Services: %w (client holds %s)", services, err, describe(snap))
	}
	conv.AllEndpoints = latest(snap.Received, resource.ClusterType, resource.EndpointType).Sub(start)
	return c, conv, nil
}

func earliest(times map[string]time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if out.IsZero() || t.Before(out) {
			out = t
		}
	}
	return out
}

func latest(times map[string]time.Time, keys ...string) time.Time {
	var out time.Time
	for _, k := range keys {
		if t := times[k]; t.After(out) {
			out = t
		}
	}
	return out
}

func describe(s *adsclient.Snapshot) string {
	if s == nil {
		return "nothing"
	}
	return fmt.Sprintf("%d listeners, %d route configurations, %d clusters, %d load assignments, %d responses, %d rejected",
		len(s.Listeners), len(s.Routes), len(s.Clusters), len(s.Endpoints), s.Responses, len(s.Rejected))
}
