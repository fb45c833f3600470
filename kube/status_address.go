package kube

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"
)

// AddressSource says where traffic for our Ingresses enters the cluster: the
// addresses the status writer puts into status.loadBalancer.ingress. There
// is one implementation per --status-address, --envoy-service and the
// default, the Envoy DaemonSet itself.
type AddressSource interface {
	// Run watches whatever the addresses come from until ctx is done. It
	// calls changed once the addresses are known (after the initial sync)
	// and after every later change of Addresses.
	Run(ctx context.Context, changed func()) error
	// Addresses returns the current addresses, sorted, never shared with the
	// caller. It is meaningful only after Run has called changed.
	Addresses() []networkingv1.IngressLoadBalancerIngress
}

// StaticAddresses is the AddressSource of --status-address: fixed IPs or
// hostnames, for when something outside the cluster (a cloud load balancer,
// DNS) fronts the Envoys.
type StaticAddresses struct {
	list []networkingv1.IngressLoadBalancerIngress
}

var _ AddressSource = (*StaticAddresses)(nil)

// NewStaticAddresses validates addresses (each an IP or a DNS name) and
// returns them as an AddressSource.
func NewStaticAddresses(addresses []string) (*StaticAddresses, error) {
	if len(addresses) == 0 {
		return nil, fmt.Errorf("no addresses")
	}
	var list []networkingv1.IngressLoadBalancerIngress
	for _, a := range addresses {
		if _, err := netip.ParseAddr(a); err == nil {
			list = append(list, networkingv1.IngressLoadBalancerIngress{IP: a})
			continue
		}
		if errs := validation.IsDNS1123Subdomain(a); len(errs) > 0 {
			return nil, fmt.Errorf("%q is neither an IP address nor a DNS name: %s", a, errs[0])
		}
		list = append(list, networkingv1.IngressLoadBalancerIngress{Hostname: a})
	}
	return &StaticAddresses{list: normalizeAddresses(list)}, nil
}

// Run implements AddressSource: the addresses are known from the start and
// never change.
func (s *StaticAddresses) Run(ctx context.Context, changed func()) error {
	changed()
	<-ctx.Done()
	return nil
}

// Addresses implements AddressSource.
func (s *StaticAddresses) Addresses() []networkingv1.IngressLoadBalancerIngress {
	return slices.Clone(s.list)
}

// normalizeAddresses sorts addresses and removes duplicates, so that the
// same set of addresses always yields the same status and an unchanged set
// never causes a write.
func normalizeAddresses(list []networkingv1.IngressLoadBalancerIngress) []networkingv1.IngressLoadBalancerIngress {
	slices.SortFunc(list, compareAddress)
	return slices.CompactFunc(list, func(a, b networkingv1.IngressLoadBalancerIngress) bool {
		return compareAddress(a, b) == 0
	})
}

// compareAddress orders IPs before hostnames, IPs numerically (v4 before v6).
func compareAddress(a, b networkingv1.IngressLoadBalancerIngress) int {
	if (a.IP == "") != (b.IP == "") {
		if a.IP != "" {
			return -1
		}
		return 1
	}
	if a.IP != "" {
		ipA, errA := netip.ParseAddr(a.IP)
		ipB, errB := netip.ParseAddr(b.IP)
		if errA == nil && errB == nil {
			if c := ipA.Compare(ipB); c != 0 {
				return c
			}
		} else if c := cmp.Compare(a.IP, b.IP); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Hostname, b.Hostname)
}

// addressTracker holds the current addresses of an informer-backed
// AddressSource.
type addressTracker struct {
	mu      sync.Mutex
	known   bool
	current []networkingv1.IngressLoadBalancerIngress
}

// refresh computes the addresses and stores them, and reports whether they
// differ from what was there: always true the first time, so that the source
// announces its initial addresses even when there are none. The lock is held
// while computing: events of several informers arrive on goroutines of their
// own, and a slow, stale computation must not overwrite a newer one.
func (t *addressTracker) refresh(compute func() ([]networkingv1.IngressLoadBalancerIngress, error)) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	list, err := compute()
	if err != nil {
		return false, err
	}
	if t.known && sameAddresses(t.current, list) {
		return false, nil
	}
	t.known, t.current = true, slices.Clone(list)
	return true, nil
}

// set stores list; see refresh.
func (t *addressTracker) set(list []networkingv1.IngressLoadBalancerIngress) bool {
	changed, _ := t.refresh(func() ([]networkingv1.IngressLoadBalancerIngress, error) { return list, nil })
	return changed
}

func (t *addressTracker) get() []networkingv1.IngressLoadBalancerIngress {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.current)
}

// sameAddresses compares address lists as the status writer sees them: by
// IP and hostname, in order.
func sameAddresses(a, b []networkingv1.IngressLoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y networkingv1.IngressLoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname && len(x.Ports) == 0 && len(y.Ports) == 0
	})
}

// onSyncedChange returns an event handler that calls update on every event
// once synced reports true. Events of the initial list are dropped: the
// source calls update itself after the sync, from a whole cache.
func onSyncedChange(synced func() bool, update func()) cache.ResourceEventHandler {
	ifSynced := func() {
		if synced() {
			update()
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { ifSynced() },
		UpdateFunc: func(any, any) { ifSynced() },
		DeleteFunc: func(any) { ifSynced() },
	}
}
