package kube

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
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

func TestDropUnusedFieldsKeepsWhatTranslationReads(t *testing.T) {
	ready, notReady := true, false
	port := int32(8080)
	name := "http"
	udp := corev1.ProtocolUDP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1", Namespace: "app", ResourceVersion: "3",
			Labels:        map[string]string{discoveryv1.LabelServiceName: "web", "other": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kcm"}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}, {Protocol: &udp}},
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.0.0.1"},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: "web-abc"},
			NodeName:   &name,
		}, {
			Addresses:  []string{"10.0.0.2"}, // terminating
			Conditions: discoveryv1.EndpointConditions{Ready: &notReady},
		}, {
			Addresses: []string{"10.0.0.3", "10.0.0.4"}, // unset: ready
		}},
	}
	got, _ := dropUnusedFields(slice)
	es := got.(*EndpointSlice)
	if svc, ok := es.ServiceName(); !ok || svc != (types.NamespacedName{Namespace: "app", Name: "web"}) || es.Name != "web-1" {
		t.Errorf("slice lost its identity: %+v", es)
	}
	if key, err := cache.MetaNamespaceKeyFunc(es); err != nil || key != "app/web-1" {
		t.Errorf("informer key %q (%v), want app/web-1", key, err)
	}
	if want := []string{"10.0.0.1", "10.0.0.3", "10.0.0.4"}; !slices.Equal(es.Ready, want) {
		t.Errorf("ready addresses %v, want %v", es.Ready, want)
	}
	if want := []EndpointPort{{Name: "http", Port: 8080}, {Protocol: corev1.ProtocolUDP}}; !slices.Equal(es.Ports, want) {
		t.Errorf("ports = %+v, want %+v", es.Ports, want)
	}
	unlabeled := NewEndpointSlice(&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "app"}})
	if _, ok := unlabeled.ServiceName(); ok {
		t.Error("a slice without the service-name label belongs to a Service")
	}

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app", Annotations: map[string]string{"a": "b"}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "example.org",
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("web")},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			},
			Selector: map[string]string{"app": "web"},
		},
	}
	got, _ = dropUnusedFields(svc)
	s := got.(*Service)
	if s.Namespace != "app" || s.Name != "web" || s.Type != corev1.ServiceTypeExternalName || s.ExternalName != "example.org" || !slices.Equal(s.Ports, []ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}) {
		t.Errorf("service lost what translation reads: %+v", s)
	}
	if key, err := cache.MetaNamespaceKeyFunc(s); err != nil || key != "app/web" {
		t.Errorf("informer key %q (%v), want app/web", key, err)
	}
}
