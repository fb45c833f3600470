package kube

import (
	"maps"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// TestKeyLog: the first take is everything (what came before it is the
// informer's initial list); later ones give the objects changed since, a
// delete whose last state was missed (a tombstone) included, or everything
// when told so.
func TestKeyLog(t *testing.T) {
	var l keyLog
	ing := func(ns, name string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	l.changed(ing("a", "initial"))
	if keys, all := l.take(); !all || len(keys) != 0 {
		t.Fatalf("first take: %v, all %t; want everything", keys, all)
	}
	l.changed(ing("a", "x"))
	l.changed(cache.DeletedFinalStateUnknown{Key: "b/y", Obj: ing("b", "y")})
	l.changed(ing("a", "x"))
	keys, all := l.take()
	want := []types.NamespacedName{{Namespace: "a", Name: "x"}, {Namespace: "b", Name: "y"}}
	got := slices.SortedFunc(maps.Keys(keys), func(p, q types.NamespacedName) int {
		return compareIngress(&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}, q)
	})
	if all || !slices.Equal(got, want) {
		t.Errorf("take: %v, all %t; want %v", got, all, want)
	}
	if keys, all := l.take(); all || len(keys) != 0 {
		t.Errorf("a take with nothing changed: %v, all %t", keys, all)
	}
	l.changed(ing("a", "z"))
	l.everything()
	if _, all := l.take(); !all {
		t.Error("everything was not taken as everything")
	}
}
