package load

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// Fanout is the result of the fan-out test: many clients on one snapshot,
// one endpoint change, and how long until each had the new version.
type Fanout struct {
	Clients int `json:"clients"`
	// OnDemandClusters is how many clusters each (delta) client asked for
	// by name, subscribing to the load assignments of those it held; 0:
	// every load assignment.
	OnDemandClusters int `json:"on_demand_clusters,omitempty"`
	// Connect is how long until every client held the current version of
	// all four types.
	ConnectSeconds float64 `json:"connect_seconds"`
	// Arrival summarises, over the clients, the time from the API write
	// to the new load assignment version reaching each.
	Arrival Summary `json:"arrival"`
	// WithinOneSecond counts the clients that had it within 1 s.
	WithinOneSecond int `json:"within_one_second"`
	// IngressArrival summarises, over the clients, the time from the API
	// write of a new Ingress (two new hosts, to Services that exist) to
	// a route configuration version with it reaching each: the endpoint
	// change's figure for a route change. IngressWithinOneSecond counts
	// the clients that had it within 1 s.
	IngressArrival         *Summary `json:"ingress_arrival,omitempty"`
	IngressWithinOneSecond int      `json:"ingress_within_one_second,omitempty"`
	// PeakRSSBytes is the control plane's peak memory, fan-out included.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// ConnectedRSSBytes is the control plane's memory with every client
	// connected and up to date, once it is idle: less what it held before
	// the fan-out, what the clients cost it to keep.
	ConnectedRSSBytes int64 `json:"connected_rss_bytes"`
	// ConnectCPU and ChangeCPU are the CPU time the control plane and this
	// process (the clients) spent connecting the clients, and from the
	// change until the last client had it: on a small machine the clients
	// compete for the same cores.
	ConnectCPU CPUSplit `json:"connect_cpu"`
	ChangeCPU  CPUSplit `json:"change_cpu"`
	// IngressChangeCPU is the same for the Ingress change, from the
	// write until the last client had it.
	IngressChangeCPU CPUSplit `json:"ingress_change_cpu"`
	// Reconnect, when asked for, is the storm after the change: every
	// client dropped at once and dialled again at once, as after a
	// control-plane rollout.
	Reconnect *Reconnect `json:"reconnect,omitempty"`
}

// onDemandNote says, after the clients' count, how many clusters each
// asked for on demand, if any.
func (f *Fanout) onDemandNote() string {
	if f.OnDemandClusters == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d clusters on demand each)", f.OnDemandClusters)
}

// Reconnect is the result of the reconnect storm.
type Reconnect struct {
	// Seconds is how long until every client held the current version of
	// all four types again, from the first dial; Back summarises, over
	// the clients, when each did (to the 10 ms of the polling).
	Seconds float64 `json:"seconds"`
	Back    Summary `json:"back"`
	// RSSBytes and PeakRSSBytes are the control plane's memory once
	// every client is back, and its peak since it started.
	RSSBytes     int64 `json:"rss_bytes"`
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// CPU is the CPU time spent from the drop until every client was back.
	CPU CPUSplit `json:"cpu"`
}

// CPUSplit is CPU time spent by the control plane and by the clients.
type CPUSplit struct {
	ControlPlaneSeconds float64 `json:"control_plane_seconds"`
	ClientsSeconds      float64 `json:"clients_seconds"`
}

func (a CPUSplit) minus(b CPUSplit) CPUSplit {
	return CPUSplit{ControlPlaneSeconds: a.ControlPlaneSeconds - b.ControlPlaneSeconds, ClientsSeconds: a.ClientsSeconds - b.ClientsSeconds}
}

// fanout runs the fan-out test with count clients, and the change on the
// EndpointSlice of Service svc. With onDemand > 0 (delta only) each client
// asks for that many clusters by name, svc's among them, and for the load
// assignments of the clusters it holds (see lightClient); else for every
// load assignment. beforeChange runs once every client is
// connected and up to date, just before the change; afterChange once every
// client has it; ingressChange runs the Ingress change (the write and the
// wait for every client), to measure it. With reconnect (not nil), every client is then dropped
// and dialled again at once, and reconnect runs once they are all up to
// date again, told how long that took.
func (c *changer) fanout(ctx context.Context, address string, count int, delta bool, onDemand, svc int, beforeChange, afterChange func() error, ingressChange func(func() error) error, reconnect func(took time.Duration, each Summary) error) (Fanout, error) {
	result := Fanout{Clients: count}
	main := c.ads.Snapshot()
	subs := names{routes: sortedKeys(main.Routes), endpoints: sortedKeys(main.Endpoints)}
	if delta && onDemand > 0 {
		var err error
		if subs.onDemand, subs.edsOf, err = onDemandClusters(main, svc, onDemand); err != nil {
			return result, err
		}
		result.OnDemandClusters = len(subs.onDemand)
	}
	if !delta {
		subs.sotwEndpoints = make([][]byte, count)
	}

	start := time.Now()
	clients := make([]*lightClient, count)
	var wg sync.WaitGroup
	errs := make([]error, count)
	// Dial in parallel but not all at once: 500 simultaneous initial
	// requests measure the listen backlog rather than the control plane.
	sem := make(chan struct{}, 32)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			clients[i], errs[i] = dialLight(ctx, address, i, subs, delta, c.fanoutH2)
		}()
	}
	wg.Wait()
	defer func() {
		for _, cl := range clients {
			if cl != nil {
				cl.close()
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return result, err
		}
	}
	types := []string{resource.ListenerType, resource.ClusterType, resource.RouteType, resource.EndpointType}
	if err := waitAll(ctx, count, func(i int) (bool, error) {
		return clients[i].holds(main.Versions, types)
	}); err != nil {
		return result, fmt.Errorf("fan-out clients getting the current versions: %w", err)
	}
	result.ConnectSeconds = time.Since(start).Seconds()
	c.log.Info("fan-out clients connected", "clients", count, "took", time.Since(start).Round(time.Millisecond))

	if err := beforeChange(); err != nil {
		return result, err
	}
	before := make([]string, count)
	for i, cl := range clients {
		before[i], _, _ = cl.state(resource.EndpointType)
	}
	slicesClient := c.kube.DiscoveryV1().EndpointSlices(c.w.Namespace)
	slice, err := slicesClient.Get(ctx, SliceName(svc), metav1.GetOptions{})
	if err != nil {
		return result, fmt.Errorf("fan-out change: %w", err)
	}
	j := len(slice.Endpoints) + 1
	if j >= addressesPerService {
		return result, fmt.Errorf("fan-out change: slice %s already has %d endpoints", slice.Name, j-1)
	}
	slice.Endpoints = append(slice.Endpoints, Endpoint(svc, j))
	changed := time.Now()
	if _, err := slicesClient.Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		return result, fmt.Errorf("fan-out change: updating %s: %w", slice.Name, err)
	}
	arrivals := make([]time.Duration, count)
	if err := waitAll(ctx, count, func(i int) (bool, error) {
		v, at, err := clients[i].state(resource.EndpointType)
		if err != nil {
			return false, err
		}
		if v == before[i] {
			return false, nil
		}
		arrivals[i] = at.Sub(changed)
		return true, nil
	}); err != nil {
		return result, fmt.Errorf("fan-out clients getting the change: %w", err)
	}
	result.Arrival = Summarize(arrivals)
	result.WithinOneSecond = withinOneSecond(arrivals)
	c.log.Info("fan-out clients have the endpoint change", "clients", count, "p99", result.Arrival.P99)
	if err := afterChange(); err != nil {
		return result, err
	}
	if err := c.fanoutIngressChange(ctx, clients, &result, ingressChange); err != nil {
		return result, err
	}
	if reconnect == nil {
		return result, nil
	}
	// The storm: every client dropped, then all dialled at once (no
	// bound on dials in flight, unlike the connect above), each asking
	// for everything again as a client that kept nothing.
	for i, cl := range clients {
		cl.close()
		clients[i] = nil
	}
	now := c.ads.Snapshot()
	back := make([]time.Duration, count)
	start = time.Now()
	err = c.profiled("fanout-storm", func() error {
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				clients[i], errs[i] = dialLight(ctx, address, i, subs, delta, c.fanoutH2)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("reconnect storm: %w", err)
			}
		}
		if err := waitAll(ctx, count, func(i int) (bool, error) {
			ok, err := clients[i].holds(now.Versions, types)
			if ok {
				back[i] = time.Since(start) // to the poll's 10 ms
			}
			return ok, err
		}); err != nil {
			return fmt.Errorf("reconnect storm: clients getting the current versions: %w", err)
		}
		return nil
	})
	if err != nil {
		return result, err
	}
	took := time.Since(start)
	c.log.Info("fan-out clients reconnected", "clients", count, "took", took.Round(time.Millisecond))
	return result, reconnect(took, Summarize(back))
}

// fanoutIngressChange creates one more Ingress of the workload's shape,
// two new hosts routed to Services that exist, once the control plane has
// settled after the endpoint change, and times until each client holds a
// route configuration or virtual host version with it: the clients are
// told nothing of hosts, so a new version of either after the write is
// the change (nothing else changes routes meanwhile). measure runs the write and the wait,
// once the control plane is idle (run.go).
func (c *changer) fanoutIngressChange(ctx context.Context, clients []*lightClient, result *Fanout, measure func(func() error) error) error {
	if err := c.pause(ctx); err != nil {
		return err
	}
	// Over VHDS (delta clients below the route scopes' line) a new host
	// is a new virtual host, and the route configuration is not sent.
	routeTypes := []string{resource.RouteType, resource.VirtualHostType}
	before := make([][2]string, len(clients))
	for i, cl := range clients {
		for j, t := range routeTypes {
			before[i][j], _, _ = cl.state(t)
		}
	}
	ing := c.w.ChangeIngress(c.run+"f", 0, pick(0, c.w.N))
	arrivals := make([]time.Duration, len(clients))
	if err := measure(func() error {
		changed := time.Now()
		if _, err := c.kube.NetworkingV1().Ingresses(c.w.Namespace).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("fan-out Ingress change: creating %s: %w", ing.Name, err)
		}
		if err := waitAll(ctx, len(clients), func(i int) (bool, error) {
			for j, t := range routeTypes {
				v, at, err := clients[i].state(t)
				if err != nil {
					return false, err
				}
				if v != before[i][j] {
					arrivals[i] = at.Sub(changed)
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			return fmt.Errorf("fan-out clients getting the Ingress change: %w", err)
		}
		return nil
	}); err != nil {
		return err
	}
	s := Summarize(arrivals)
	result.IngressArrival, result.IngressWithinOneSecond = &s, withinOneSecond(arrivals)
	c.log.Info("fan-out clients have the new Ingress", "clients", len(clients), "p99", s.P99)
	return nil
}

// withinOneSecond counts the durations of a second or less.
func withinOneSecond(ds []time.Duration) int {
	n := 0
	for _, d := range ds {
		if d <= time.Second {
			n++
		}
	}
	return n
}

// onDemandClusters returns count clusters of the main client's snapshot
// for a fan-out client to ask for on demand, those reading Service svc's
// load assignment first and then others spread over the sorted names, and
// the load assignment each cluster reads.
func onDemandClusters(main *adsclient.Snapshot, svc, count int) ([]string, map[string]string, error) {
	edsOf := make(map[string]string, len(main.Clusters))
	for name, cl := range main.Clusters {
		edsOf[name] = cmp.Or(cl.GetEdsClusterConfig().GetServiceName(), name)
	}
	changed := findLoadAssignment(main, EndpointAddress(svc, 1))
	if changed == "" {
		return nil, nil, fmt.Errorf("fan-out: no load assignment holds Service %d's endpoints", svc)
	}
	all := sortedKeys(main.Clusters)
	var asked []string
	for _, name := range all {
		if edsOf[name] == changed {
			asked = append(asked, name)
		}
	}
	step := max(1, len(all)/count)
	for i := 0; i < len(all) && len(asked) < count; i += step {
		if !slices.Contains(asked, all[i]) {
			asked = append(asked, all[i])
		}
	}
	return asked, edsOf, nil
}

// waitAll polls until done(i) holds for every client i < count; an error
// from done ends the wait. Polling every 10 ms costs nothing next to what
// it measures, and the arrival times are recorded by the clients themselves.
func waitAll(ctx context.Context, count int, done func(i int) (bool, error)) error {
	pending := make([]int, count)
	for i := range pending {
		pending[i] = i
	}
	_, err := framework.Poll(ctx, 0, 10*time.Millisecond, func() error {
		next := pending[:0]
		for _, i := range pending {
			ok, err := done(i)
			if err != nil {
				return framework.Permanent(fmt.Errorf("client %d: %w", i, err))
			}
			if !ok {
				next = append(next, i)
			}
		}
		if pending = next; len(pending) > 0 {
			return fmt.Errorf("%d of %d clients not there", len(pending), count)
		}
		return nil
	})
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
