package kube

import (
	"context"
	"log/slog"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// ResolvingSource is a Source whose ExternalName Services are resolved by
// the control plane rather than by Envoy: it wraps another Source and is,
// like the informers, a source of the translator's input. Envoy is handed
// the checked addresses as the Service's endpoints (an EDS cluster) and
// does no DNS of its own, which an attacker controlling the name's records
// could rebind to a local address between two checks.
//
// Each name is looked up when its Service appears and again when its
// answer expires: on the records' TTL when the Resolver gives it, else
// every MaxInterval; never more often than MinInterval. A changed set of
// addresses is an endpoint change (the translator's fast path); a changed
// verdict (now refused, now resolving) is a new Service (a translation of
// the Ingresses that read it).
type ResolvingSource struct {
	Source   Source
	Resolver Resolver
	Policy   AddressPolicy
	// MinInterval and MaxInterval bound how often a name is looked up
	// again; 1 s and 30 s when zero.
	MinInterval, MaxInterval time.Duration
	// Clock is what the TTLs and intervals are counted on; the real
	// clock when nil. Tests step a fake one past each expiry instead of
	// waiting for it.
	Clock clock.Clock
	// Nodes, when set, adds the cluster's Nodes' addresses to the
	// policy's own ones (cluster mode); Run runs it.
	Nodes  *NodeAddresses
	Logger *slog.Logger
	// ExtraNames, when set, lists names beside the ExternalName Services'
	// that the translator needs resolved (mirror targets): each is handed
	// out as an ExternalName Service of no namespace named after it
	// (NameService), with its verdict and addresses as any other's.
	ExtraNames func(*State) []string

	mu    sync.Mutex
	names map[string]*resolvedName
	// services maps each ExternalName Service to its name.
	services map[types.NamespacedName]string
	changes  changeLog
	rescan   chan struct{}
	// scanned and scannedIngresses are the wrapped Source's Services and
	// Ingresses (which name ExtraNames) last scanned by State.
	scanned          any
	scannedIngresses []*networkingv1.Ingress
	// named are the Services of ExtraNames, made once per name.
	named map[string]*Service
	// The last State handed out, the parts it was made from, and the
	// versions of the verdicts and addresses then.
	out                   *State
	inServices, inSlices  any
	servicesV, slicesV    uint64
	outServicesV, outSlsV uint64
	copies                map[types.NamespacedName]serviceCopy
}

type resolvedName struct {
	verdict *Resolution
	addrs   []netip.Addr
	slices  map[types.NamespacedName][]*EndpointSlice
	next    time.Time
}

type serviceCopy struct {
	from, copy *Service
	verdict    *Resolution
}

var _ Source = (*ResolvingSource)(nil)

var notResolvedYet = &Resolution{Err: "not resolved yet"}

func (s *ResolvingSource) logger() *slog.Logger { return loggerOr(s.Logger) }

func (s *ResolvingSource) clock() clock.Clock {
	if s.Clock == nil {
		return clock.RealClock{}
	}
	return s.Clock
}

// policy is Policy, with the Nodes' addresses among the own ones.
func (s *ResolvingSource) policy() AddressPolicy {
	p := s.Policy
	if s.Nodes == nil {
		return p
	}
	own := p.own
	p.Own = func() []netip.Addr { return append(own(), s.Nodes.Addresses()...) }
	return p
}

func (s *ResolvingSource) intervals() (time.Duration, time.Duration) {
	lo, hi := s.MinInterval, s.MaxInterval
	if lo <= 0 {
		lo = time.Second
	}
	if hi <= 0 {
		hi = 30 * time.Second
	}
	return lo, max(lo, hi)
}

// Run implements Source: it runs the wrapped Source and looks names up
// until ctx is done.
func (s *ResolvingSource) Run(ctx context.Context, changed func()) error {
	s.mu.Lock()
	s.rescan = make(chan struct{}, 1)
	s.mu.Unlock()
	started := make(chan struct{})
	var once sync.Once
	if s.Nodes != nil {
		go func() {
			if err := s.Nodes.Run(ctx); err != nil && ctx.Err() == nil {
				s.logger().Error("watching node addresses", "err", err)
			}
		}()
	}
	go s.loop(ctx, started, changed)
	return s.Source.Run(ctx, func() {
		once.Do(func() { close(started) })
		s.poke()
		changed()
	})
}

func (s *ResolvingSource) poke() {
	select {
	case s.rescan <- struct{}{}:
	default:
	}
}

// loop finds the ExternalName Services after each change of the wrapped
// Source and looks their names up when due.
func (s *ResolvingSource) loop(ctx context.Context, started <-chan struct{}, changed func()) {
	select {
	case <-ctx.Done():
		return
	case <-started:
	}
	timer := s.clock().NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.scan()
		if s.resolveDue(ctx) {
			changed()
		}
		s.arm(timer)
		select {
		case <-ctx.Done():
			return
		case <-s.rescan:
		case <-timer.C():
		}
	}
}

// scan lists the ExternalName Services of the wrapped Source's state.
func (s *ResolvingSource) scan() {
	st := s.Source.State()
	found := map[types.NamespacedName]string{}
	for name, svc := range st.Services {
		if svc.Type == "ExternalName" && svc.ExternalName != "" {
			found[name] = normalName(svc.ExternalName)
		}
	}
	if s.ExtraNames != nil {
		for _, n := range s.ExtraNames(st) {
			n = normalName(n)
			found[NameService(n)] = n
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if maps.Equal(found, s.services) {
		return
	}
	s.services = found
	if s.names == nil {
		s.names = map[string]*resolvedName{}
	}
	live := map[string]bool{}
	for _, n := range found {
		live[n] = true
		if s.names[n] == nil {
			s.names[n] = &resolvedName{verdict: notResolvedYet}
		}
	}
	for n := range s.names {
		if !live[n] {
			delete(s.names, n)
			delete(s.named, n)
		}
	}
	// Services came or went: their copies and slices are made again.
	s.servicesV++
	s.slicesV++
	s.changes.everything()
}

func normalName(n string) string {
	for len(n) > 0 && n[len(n)-1] == '.' {
		n = n[:len(n)-1]
	}
	return n
}

// resolveDue looks up every name whose answer expired and reports whether
// anything changed.
func (s *ResolvingSource) resolveDue(ctx context.Context) bool {
	now := s.clock().Now()
	s.mu.Lock()
	var due []string
	for n, e := range s.names {
		if !now.Before(e.next) {
			due = append(due, n)
		}
	}
	s.mu.Unlock()
	slices.Sort(due)
	lo, hi := s.intervals()
	changedAny := false
	for _, n := range due {
		var addrs []netip.Addr
		var ttl time.Duration
		var err error
		if ip, perr := netip.ParseAddr(n); perr == nil {
			addrs = []netip.Addr{ip} // an address is its own answer
		} else {
			lookupCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			addrs, ttl, err = s.Resolver.Lookup(lookupCtx, n)
			cancel()
		}
		if ctx.Err() != nil {
			return changedAny
		}
		wait := hi
		if ttl > 0 {
			wait = min(max(ttl, lo), hi)
		}
		if s.record(n, addrs, err, s.clock().Now().Add(wait)) {
			changedAny = true
		}
	}
	return changedAny
}

// record keeps a lookup's outcome and reports whether it changed anything.
func (s *ResolvingSource) record(name string, addrs []netip.Addr, err error, next time.Time) bool {
	addrs = slices.Clone(addrs)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	addrs = slices.Compact(addrs)
	verdict := &Resolution{}
	switch {
	case err != nil:
		verdict = &Resolution{Err: err.Error()}
	case len(addrs) == 0:
		verdict = &Resolution{Err: "the name has no address"}
	default:
		if why := s.policy().check(addrs); why != "" {
			verdict, addrs = &Resolution{Refused: why}, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.names[name]
	if e == nil {
		return false // its Service went meanwhile
	}
	e.next = next
	if err != nil && e.verdict.Err == "" && e.verdict.Refused == "" && len(e.addrs) > 0 {
		// A failed lookup keeps the last good answer, as a DNS cache
		// would: the name's servers being down is no reason to stop.
		s.logger().Warn("looking up an ExternalName failed; keeping its last addresses", "name", name, "err", err)
		return false
	}
	changed := false
	if *verdict != *e.verdict {
		if verdict.Refused != "" {
			s.logger().Warn("ExternalName refused", "name", name, "why", verdict.Refused)
		}
		e.verdict = verdict
		s.servicesV++
		s.changes.everything()
		changed = true
	}
	if !slices.Equal(addrs, e.addrs) {
		e.addrs = addrs
		e.slices = nil
		s.slicesV++
		for svc, n := range s.services {
			if n == name {
				s.changes.endpointsOf(svc)
			}
		}
		changed = true
	}
	return changed
}

// arm sets the loop's timer for the next name due. It reads the clock and
// resets the timer holding the lock, so that a test moving a fake clock
// under the same lock never falls between the two, which would arm the
// timer for another instant than the one computed. A tick left from
// before is dropped (Go's timers drop it on Reset; a fake one keeps it).
func (s *ResolvingSource) arm(timer clock.Timer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-timer.C():
	default:
	}
	_, hi := s.intervals()
	wait := hi
	now := s.clock().Now()
	for _, e := range s.names {
		wait = min(wait, e.next.Sub(now))
	}
	timer.Reset(max(wait, 0))
}

// State implements Source: the wrapped Source's state, with each
// ExternalName Service carrying its verdict and its addresses as its
// endpoints. Parts are the same maps as last time when nothing in them
// changed (the State's contract).
func (s *ResolvingSource) State() *State {
	in := s.Source.State()
	s.mu.Lock()
	stale := !sameRef(in.Services, s.scanned) || s.ExtraNames != nil && !sameList(in.Ingresses, s.scannedIngresses)
	s.mu.Unlock()
	if stale {
		// Scanned here too, not only by the loop: no State may carry an
		// ExternalName Service without a verdict, which the translator
		// would hand to Envoy to resolve.
		s.scan()
		s.poke()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scanned, s.scannedIngresses = in.Services, in.Ingresses
	out := *in
	if len(s.services) == 0 {
		return &out
	}
	// The slices of ExternalName Services are ours: the wrapped source's
	// account of what changed in its map is not one of this map.
	out.SlicesSince = nil
	prev := s.out
	if prev != nil && sameRef(in.Services, s.inServices) && s.servicesV == s.outServicesV {
		out.Services = prev.Services
	} else {
		out.Services = s.services2(in.Services)
	}
	if prev != nil && sameRef(in.EndpointSlices, s.inSlices) && s.slicesV == s.outSlsV {
		out.EndpointSlices = prev.EndpointSlices
	} else {
		out.EndpointSlices = maps.Clone(in.EndpointSlices)
		if out.EndpointSlices == nil {
			out.EndpointSlices = map[types.NamespacedName][]*EndpointSlice{}
		}
		for svc := range s.services {
			if sl := s.slicesOf(svc); sl != nil {
				out.EndpointSlices[svc] = sl
			} else {
				delete(out.EndpointSlices, svc)
			}
		}
	}
	s.out, s.inServices, s.inSlices = &out, in.Services, in.EndpointSlices
	s.outServicesV, s.outSlsV = s.servicesV, s.slicesV
	return &out
}

// services2 is in with each ExternalName Service replaced by a copy
// carrying its verdict: the same copy for as long as neither changes.
func (s *ResolvingSource) services2(in map[types.NamespacedName]*Service) map[types.NamespacedName]*Service {
	out := maps.Clone(in)
	copies := make(map[types.NamespacedName]serviceCopy, len(s.services))
	for svc, name := range s.services {
		orig := in[svc]
		if orig == nil && svc.Namespace == "" {
			orig = s.namedService(svc.Name)
		}
		if orig == nil {
			continue
		}
		verdict := notResolvedYet
		if e := s.names[name]; e != nil {
			verdict = e.verdict
		}
		c := s.copies[svc]
		if c.from != orig || c.verdict != verdict {
			cp := *orig
			cp.Resolved = verdict
			c = serviceCopy{from: orig, copy: &cp, verdict: verdict}
		}
		copies[svc] = c
		out[svc] = c.copy
	}
	s.copies = copies
	return out
}

// NameService names the Service that stands for a name of ExtraNames: no
// namespace, which no real Service lacks.
func NameService(name string) types.NamespacedName { return types.NamespacedName{Name: name} }

// namedService is the Service standing for an extra name, the same one
// for as long as the name is listed.
func (s *ResolvingSource) namedService(name string) *Service {
	if s.named == nil {
		s.named = map[string]*Service{}
	}
	svc := s.named[name]
	if svc == nil {
		svc = &Service{Name: name, Type: "ExternalName", ExternalName: name}
		s.named[name] = svc
	}
	return svc
}

// slicesOf is an ExternalName Service's endpoints: its name's checked
// addresses, each serving every port of the Service (AnyPort).
func (s *ResolvingSource) slicesOf(svc types.NamespacedName) []*EndpointSlice {
	e := s.names[s.services[svc]]
	if e == nil || len(e.addrs) == 0 {
		return nil
	}
	if sl, ok := e.slices[svc]; ok {
		return sl
	}
	var v4, v6 []string
	for _, a := range e.addrs {
		if a.Is4() {
			v4 = append(v4, a.String())
		} else {
			v6 = append(v6, a.String())
		}
	}
	var out []*EndpointSlice
	for _, part := range []struct {
		t     discoveryv1.AddressType
		addrs []string
	}{{discoveryv1.AddressTypeIPv4, v4}, {discoveryv1.AddressTypeIPv6, v6}} {
		if len(part.addrs) > 0 {
			out = append(out, &EndpointSlice{Namespace: svc.Namespace, Name: svc.Name + "-externalname-" + string(part.t), Service: svc.Name,
				AddressType: part.t, Ready: part.addrs, AnyPort: true})
		}
	}
	if e.slices == nil {
		e.slices = map[types.NamespacedName][]*EndpointSlice{}
	}
	e.slices[svc] = out
	return out
}

// TakeChanges implements Source.
func (s *ResolvingSource) TakeChanges() Changes {
	c := s.Source.TakeChanges()
	mine := s.changes.take()
	// The first take of either is everything; after that, the union.
	if mine.All || c.All {
		return Changes{All: true}
	}
	for svc := range mine.Endpoints {
		if c.Endpoints == nil {
			c.Endpoints = map[types.NamespacedName]bool{}
		}
		c.Endpoints[svc] = true
	}
	return c
}

// EndpointSlices implements Source.
func (s *ResolvingSource) EndpointSlices(svc types.NamespacedName) []*EndpointSlice {
	s.mu.Lock()
	if _, ok := s.services[svc]; ok {
		defer s.mu.Unlock()
		return s.slicesOf(svc)
	}
	s.mu.Unlock()
	return s.Source.EndpointSlices(svc)
}

// sameRef says whether two maps are the very same map.
func sameRef(a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Kind() == reflect.Map && vb.Kind() == reflect.Map && va.Type() == vb.Type() && va.UnsafePointer() == vb.UnsafePointer()
}

// fixedSource is a Source of one State, for ResolveNames.
type fixedSource struct{ st *State }

func (f fixedSource) Run(ctx context.Context, changed func()) error {
	changed()
	<-ctx.Done()
	return nil
}
func (f fixedSource) State() *State        { return f.st }
func (f fixedSource) TakeChanges() Changes { return Changes{All: true} }
func (f fixedSource) EndpointSlices(svc types.NamespacedName) []*EndpointSlice {
	return f.st.EndpointSlices[svc]
}

// ResolveNames is st with its ExternalName Services, and the extra names
// extra lists (ResolvingSource.ExtraNames), resolved once, as a
// ResolvingSource would have them (for translate -f).
func ResolveNames(ctx context.Context, st *State, r Resolver, p AddressPolicy, extra func(*State) []string) *State {
	s := &ResolvingSource{Source: fixedSource{st}, Resolver: r, Policy: p, ExtraNames: extra}
	s.scan()
	s.resolveDue(ctx)
	return s.State()
}

// sameList says whether two lists are the very same list.
func sameList[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
