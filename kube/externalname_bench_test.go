package kube

import (
	"fmt"
	"log/slog"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchResolving is a ResolvingSource over 10,000 Services, 100 of them
// ExternalName, every name resolved.
func benchResolving(b *testing.B) (*ResolvingSource, *staticSource) {
	st := NewState()
	for i := range 10000 {
		name := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("svc-%d", i)}
		svc := &Service{Namespace: "ns", Name: name.Name, Type: corev1.ServiceTypeClusterIP}
		if i%100 == 0 {
			svc.Type, svc.ExternalName = corev1.ServiceTypeExternalName, fmt.Sprintf("name-%d.example.test", i)
		}
		st.Services[name] = svc
		st.EndpointSlices[name] = []*EndpointSlice{{Namespace: "ns", Name: name.Name + "-1", Service: name.Name, Ready: []string{"10.0.0.1"}}}
	}
	inner := &staticSource{state: st}
	s := &ResolvingSource{Source: inner, Policy: AddressPolicy{Own: func() []netip.Addr { return nil }}, Logger: slog.New(slog.DiscardHandler)}
	s.scan()
	for n := range s.names {
		s.record(n, []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil, s.names[n].next)
	}
	s.State()
	return s, inner
}

// The costs the translator's callers pay for resolution: a State when
// nothing changed, one after a verdict changed (a Service map copied), and
// the endpoint fast path's read of one name's addresses.
func BenchmarkResolvingSource(b *testing.B) {
	b.Run("state unchanged", func(b *testing.B) {
		s, _ := benchResolving(b)
		b.ReportAllocs()
		for b.Loop() {
			s.State()
		}
	})
	b.Run("state after a verdict change", func(b *testing.B) {
		s, _ := benchResolving(b)
		name := "name-0.example.test"
		addrs := [][]netip.Addr{{netip.MustParseAddr("127.0.0.1")}, {netip.MustParseAddr("192.0.2.1")}}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.record(name, addrs[i%2], nil, s.names[name].next)
			s.State()
			i++
		}
	})
	b.Run("endpoint slices after an address change", func(b *testing.B) {
		s, _ := benchResolving(b)
		name := "name-0.example.test"
		svc := types.NamespacedName{Namespace: "ns", Name: "svc-0"}
		addrs := [][]netip.Addr{{netip.MustParseAddr("192.0.2.2")}, {netip.MustParseAddr("192.0.2.1")}}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.record(name, addrs[i%2], nil, s.names[name].next)
			s.EndpointSlices(svc)
			i++
		}
	})
}
