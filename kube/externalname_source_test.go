package kube

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// staticSource is a Source whose state a test sets, reporting no change of
// its own after the first take.
type staticSource struct {
	mu    sync.Mutex
	state *State
	taken bool
}

func (s *staticSource) Run(ctx context.Context, changed func()) error {
	changed()
	<-ctx.Done()
	return nil
}
func (s *staticSource) State() *State { s.mu.Lock(); defer s.mu.Unlock(); return s.state }
func (s *staticSource) TakeChanges() Changes {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Changes{All: !s.taken}
	s.taken = true
	return c
}
func (s *staticSource) EndpointSlices(svc types.NamespacedName) []*EndpointSlice {
	return s.State().EndpointSlices[svc]
}

func externalNameState(name string) *State {
	st := NewState()
	st.Services[types.NamespacedName{Namespace: "default", Name: "ext"}] = &Service{Namespace: "default", Name: "ext", Type: corev1.ServiceTypeExternalName, ExternalName: name}
	st.Services[types.NamespacedName{Namespace: "default", Name: "plain"}] = &Service{Namespace: "default", Name: "plain", Type: corev1.ServiceTypeClusterIP}
	return st
}

var extSvc = types.NamespacedName{Namespace: "default", Name: "ext"}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func endpointAddresses(st *State) []string {
	var out []string
	for _, sl := range st.EndpointSlices[extSvc] {
		out = append(out, sl.Ready...)
	}
	return out
}

// setClock moves a ResolvingSource's fake clock holding the source's lock,
// as its loop arms its timer (arm): never between the loop reading the
// clock and arming the timer. Setting the time it is fires a timer armed
// for that instant after the clock got there.
func setClock(src *ResolvingSource, clk *clocktesting.FakeClock, t time.Time) {
	src.mu.Lock()
	defer src.mu.Unlock()
	clk.SetTime(t)
}

// expiry steps a ResolvingSource's fake clock to the instant a name's
// answer expires, checking both sides of it: a nanosecond before, the
// source still serves what it had (changed is false once the source's loop
// is idle again, should a wrong timer have fired); at it, the name is
// looked up again (changed becomes true). It returns the next expiry, the
// TTL later.
func expiry(t *testing.T, src *ResolvingSource, clk *clocktesting.FakeClock, at time.Time, ttl time.Duration, what string, changed func() bool) time.Time {
	t.Helper()
	setClock(src, clk, at.Add(-time.Nanosecond))
	waitFor(t, "the resolver idle", func() bool { return clk.Waiters() == 1 })
	if changed() {
		t.Fatalf("%s a nanosecond before the answer expired", what)
	}
	setClock(src, clk, at)
	waitFor(t, what, func() bool { setClock(src, clk, at); return changed() })
	return at.Add(ttl)
}

// A name is resolved by a real DNS server, re-resolved on its TTL, and
// refused once it points at loopback; an address change alone is an
// endpoint change, a verdict change is a change of everything. The TTL is
// counted on a fake clock the test steps to each expiry.
func TestResolvingSourceFollowsTheNameAndRefusesLocalAddresses(t *testing.T) {
	const ttl = time.Second
	d := framework.StartDNS(t, uint32(ttl/time.Second))
	d.Set("app.example.test", "192.0.2.10")
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := &staticSource{state: externalNameState("app.example.test.")}
	src := &ResolvingSource{Source: inner, Resolver: DNSResolver{Server: d.Address},
		Policy:      AddressPolicy{Own: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.99")} }},
		MinInterval: 100 * time.Millisecond, Clock: clk}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	calls := 0
	go func() {
		_ = src.Run(ctx, func() { mu.Lock(); calls++; mu.Unlock() })
	}()

	// The first lookup is due at once: the answer expires a TTL later.
	waitFor(t, "resolved", func() bool { return len(endpointAddresses(src.State())) == 1 })
	next := clk.Now().Add(ttl)
	st := src.State()
	if got := st.Services[extSvc].Resolved; got == nil || *got != (Resolution{}) {
		t.Errorf("verdict %+v, want a clean one", got)
	}
	if sl := st.EndpointSlices[extSvc][0]; !sl.AnyPort || sl.Ready[0] != "192.0.2.10" {
		t.Errorf("endpoints %+v, want 192.0.2.10 on any port", sl)
	}
	if src.State().Services[extSvc] != st.Services[extSvc] || !sameRef(src.State().EndpointSlices, st.EndpointSlices) {
		t.Error("nothing changed, yet the State's parts are new")
	}
	if plain := st.Services[types.NamespacedName{Namespace: "default", Name: "plain"}]; plain.Resolved != nil {
		t.Error("a ClusterIP Service got a verdict")
	}
	src.TakeChanges()

	// On the TTL, a new address: an endpoint change only.
	d.Set("app.example.test", "192.0.2.11", "2001:db8::11")
	next = expiry(t, src, clk, next, ttl, "re-resolved", func() bool { return len(endpointAddresses(src.State())) == 2 })
	if c := src.TakeChanges(); c.All || !c.Endpoints[extSvc] {
		t.Errorf("changes %+v, want the Service's endpoints alone", c)
	}
	if got := src.EndpointSlices(extSvc); len(got) != 2 {
		t.Errorf("EndpointSlices %v, want an IPv4 and an IPv6 slice", got)
	}

	// Re-pointed at loopback after the first resolution: refused.
	for _, local := range []string{"127.0.0.1", "169.254.169.254", "::1", "0.0.0.0", "192.0.2.99"} {
		d.Set("app.example.test", "192.0.2.11", local)
		next = expiry(t, src, clk, next, ttl, "refused for "+local, func() bool {
			r := src.State().Services[extSvc].Resolved
			return r != nil && strings.Contains(r.Refused, local)
		})
		if got := endpointAddresses(src.State()); len(got) != 0 {
			t.Errorf("%s: a refused name still has endpoints %v", local, got)
		}
		if c := src.TakeChanges(); !c.All {
			t.Errorf("%s: changes %+v, want everything (a new verdict)", local, c)
		}
		d.Set("app.example.test", "192.0.2.11")
		next = expiry(t, src, clk, next, ttl, "served again", func() bool { return len(endpointAddresses(src.State())) == 1 })
	}

	// A name that goes away after a good answer keeps its addresses; the
	// failed lookup comes on the TTL, and the next MaxInterval (30 s)
	// after it.
	d.Delete("app.example.test")
	failedAt := next
	expiry(t, src, clk, next, ttl, "looked up again, and failed", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return src.names["app.example.test"].next.Equal(failedAt.Add(30 * time.Second))
	})
	if got := endpointAddresses(src.State()); len(got) != 1 {
		t.Errorf("after a failed lookup: endpoints %v, want the last good answer", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls < 3 {
		t.Errorf("changed called %d times", calls)
	}
}

// The operator may allow local addresses; a name never resolved is not
// sent to.
func TestResolvingSourcePolicy(t *testing.T) {
	if why := (AddressPolicy{AllowLocal: true}).check([]netip.Addr{netip.MustParseAddr("127.0.0.1")}); why != "" {
		t.Errorf("allowed local: %s", why)
	}
	if why := (AddressPolicy{AllowLocal: true}).check([]netip.Addr{netip.MustParseAddr("224.0.0.1")}); why == "" {
		t.Error("a multicast address passed")
	}
	if why := (AddressPolicy{}).check([]netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}); why == "" {
		t.Error("a mapped loopback address passed")
	}
	d := framework.StartDNS(t, 1)
	src := &ResolvingSource{Source: &staticSource{state: externalNameState("nowhere.example.test")}, Resolver: DNSResolver{Server: d.Address}}
	st := src.State()
	if src.services == nil {
		src.scan()
		st = src.State()
	}
	if r := st.Services[extSvc].Resolved; r == nil || r.Err == "" || len(st.EndpointSlices[extSvc]) != 0 {
		t.Errorf("before any answer: %+v, endpoints %v", r, st.EndpointSlices[extSvc])
	}
}

// The very first State, before any lookup, already gives each ExternalName
// Service a verdict (not resolved yet), never none: without one the
// translator would hand the name to Envoy to resolve.
func TestResolvingSourceFirstStateHasVerdicts(t *testing.T) {
	src := &ResolvingSource{Source: &staticSource{state: externalNameState("app.example.test")}, Resolver: DNSResolver{Server: "127.0.0.1:1"}}
	r := src.State().Services[extSvc].Resolved
	if r == nil || r.Err == "" {
		t.Fatalf("first State: verdict %+v, want not resolved yet", r)
	}
	// A Service that appears later gets one at once too.
	st := externalNameState("app.example.test")
	st.Services[types.NamespacedName{Namespace: "default", Name: "late"}] = &Service{Namespace: "default", Name: "late", Type: corev1.ServiceTypeExternalName, ExternalName: "late.example.test"}
	src.Source.(*staticSource).state = st
	if r := src.State().Services[types.NamespacedName{Namespace: "default", Name: "late"}].Resolved; r == nil {
		t.Fatal("a Service that appeared: no verdict")
	}
}
