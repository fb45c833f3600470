package translate_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/xds"
)

// FuzzAnnotations gives one Ingress two known annotations with arbitrary
// values and an arbitrary path, beside an Ingress of another host, and
// checks the invariants of bad input: no panic, an IR that keeps its
// contract, resources that validate and make a consistent snapshot, the
// same output twice, and the other Ingress's routes exactly as without the
// fuzzed one. `go test -fuzz FuzzAnnotations ./translate` explores.
func FuzzAnnotations(f *testing.F) {
	f.Add(uint8(0), "true", uint8(1), "/new/$1", "/api/(.*)")
	f.Add(uint8(3), "\r\nX-Injected: 1", uint8(7), "10x", "/")
	f.Add(uint8(5), "(?=x)", uint8(9), "-1", "/(a|b")
	f.Add(uint8(11), "http://evil.example/", uint8(2), "$host", "/x")
	keys := annotations.New("").Keys()
	f.Fuzz(func(t *testing.T, k1 uint8, v1 string, k2 uint8, v2, path string) {
		ann := map[string]string{keys[int(k1)%len(keys)]: v1, keys[int(k2)%len(keys)]: v2}
		other := fuzzIngress("other", "other.example.com", "/", nil)
		with := stateOf(fuzzIngress("fuzzed", "fuzz.example.com", path, ann), other)
		opts := translate.Options{HTTPPort: 8080, HTTPSPort: 8443}
		res := translateChecked(t, with, opts)
		again, err := translate.Translate(with, opts)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := translate.RenderJSON(res)
		b, _ := translate.RenderJSON(again)
		if !bytes.Equal(a, b) {
			t.Fatal("translation is not deterministic")
		}
		without, err := translate.Translate(stateOf(other), opts)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := vhostNamed(res, "ingress_http", "other.example.com"), vhostNamed(without, "ingress_http", "other.example.com"); !proto.Equal(got, want) {
			t.Fatalf("the other Ingress's routes changed:\n got %v\nwant %v", got, want)
		}
	})
}

// translateChecked translates st and checks the invariants of bad input
// every fuzz target asks: no error, an IR that keeps its contract,
// resources that validate and make a consistent snapshot.
func translateChecked(t *testing.T, st *kube.State, opts translate.Options) *translate.Result {
	t.Helper()
	res, err := translate.Translate(st, opts)
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	if err := res.IR().Validate(); err != nil {
		t.Fatalf("the IR breaks its contract: %v", err)
	}
	if err := xds.Validate(res.Resources); err != nil {
		t.Fatalf("invalid resources: %v", err)
	}
	if _, err := xds.NewSnapshot(res.Resources); err != nil {
		t.Fatalf("inconsistent snapshot: %v", err)
	}
	return res
}

func fuzzIngress(name, host, path string, ann map[string]string) *networkingv1.Ingress {
	pt := networkingv1.PathTypeImplementationSpecific
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pt,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}},
		}}}},
	}
}

func stateOf(ingresses ...*networkingv1.Ingress) *kube.State {
	objs := kube.Objects{Ingresses: ingresses}
	return objs.State(kube.ClassFilter{WatchClassless: true})
}
