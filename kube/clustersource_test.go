package kube

import (
	"testing"

	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeepOnlyKeyPairDropsEverythingElse(t *testing.T) {
	in := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cert", Namespace: "ns", ResourceVersion: "7",
			Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: "{huge}"},
			Labels:        map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       []byte("cert"),
			corev1.TLSPrivateKeyKey: []byte("key"),
			"ca.crt":                []byte("ca"),
			"extra":                 make([]byte, 1<<20),
		},
	}
	out, err := keepOnlyKeyPair(in)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Secret)
	if got.Name != "cert" || got.Namespace != "ns" || got.ResourceVersion != "7" || got.Type != corev1.SecretTypeTLS {
		t.Errorf("identity lost: %+v", got.ObjectMeta)
	}
	if len(got.Data) != 2 || string(got.Data[corev1.TLSCertKey]) != "cert" || string(got.Data[corev1.TLSPrivateKeyKey]) != "key" {
		t.Errorf("data = %v, want only tls.crt and tls.key", got.Data)
	}
	if got.Annotations != nil || got.Labels != nil || got.ManagedFields != nil {
		t.Errorf("metadata not stripped: %+v", got.ObjectMeta)
	}
}

func TestClassFilter(t *testing.T) {
	ours := "ingress-xds"
	other := "nginx"
	ing := func(name string, class *string, ann string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}}
		i.Spec.IngressClassName = class
		if ann != "" {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": ann}
		}
		return i
	}
	custom := "custom"
	all := []*networkingv1.Ingress{
		ing("by-name", &ours, ""),
		ing("by-controller", &custom, ""),
		ing("by-annotation", nil, ours),
		ing("classless", nil, ""),
		ing("other", &other, ""),
		ing("other-annotation", nil, other),
		ing("class-beats-annotation", &other, ours),
	}
	classes := []*networkingv1.IngressClass{
		{ObjectMeta: metav1.ObjectMeta{Name: custom}, Spec: networkingv1.IngressClassSpec{Controller: DefaultControllerName}},
	}
	names := func(list []*networkingv1.Ingress) []string {
		var out []string
		for _, i := range list {
			out = append(out, i.Name)
		}
		return out
	}
	tests := []struct {
		name    string
		filter  ClassFilter
		classes []*networkingv1.IngressClass
		want    []string
	}{
		{"explicit classes only", ClassFilter{}, classes, []string{"by-name", "by-controller", "by-annotation"}},
		{"watch classless", ClassFilter{WatchClassless: true}, classes, []string{"by-name", "by-controller", "by-annotation", "classless"}},
		{"our class is the default", ClassFilter{}, append(classes, &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{Name: ours, Annotations: map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}},
			Spec:       networkingv1.IngressClassSpec{Controller: DefaultControllerName},
		}), []string{"by-name", "by-controller", "by-annotation", "classless"}},
		{"someone else's default", ClassFilter{}, append(classes, &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{Name: other, Annotations: map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}},
			Spec:       networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"},
		}), []string{"by-name", "by-controller", "by-annotation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(tc.filter.Owned(all, tc.classes))
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("owned = %v, want %v", got, tc.want)
			}
		})
	}
}
