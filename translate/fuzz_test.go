package translate_test

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// FuzzTranslate feeds the translator Ingresses, Services, EndpointSlices and
// Secrets built from arbitrary strings and checks its invariants: no panic,
// every resource validates, the snapshot is consistent, and the output is
// deterministic. `go test` runs the seeds; `go test -fuzz FuzzTranslate
// ./translate` explores.
func FuzzTranslate(f *testing.F) {
	f.Add("a.example.com", "/", uint8(0), "svc", "http", int32(80), "10.0.0.1", int32(8080), "tls", []byte("cert"), false)
	f.Add("*.example.com", "/foo/", uint8(1), "svc", "", int32(80), "fd00::1", int32(1), "", []byte(nil), true)
	f.Add("", "", uint8(2), "Bad_Name", "x", int32(-1), "not-an-ip", int32(70000), "other/ns", []byte("-----BEGIN CERTIFICATE-----\n"), true)
	f.Add("bad\x00host", "/a\x00b", uint8(1), "svc", "http", int32(0), "127.0.0.1", int32(0), "tls", []byte{0xff}, false)
	f.Add("A.Example.COM", "/(.*)[", uint8(2), "svc", "http", int32(80), "10.0.0.1", int32(80), "tls", []byte(""), true)
	f.Fuzz(func(t *testing.T, host, path string, pathType uint8, svc, portName string, portNum int32, addr string, epPort int32, secret string, cert []byte, redirect bool) {
		st := fuzzState(host, path, pathType, svc, portName, portNum, addr, epPort, secret, cert, redirect)
		opts := translate.Options{HTTPPort: 8080, HTTPSPort: 8443, EnableExternalName: pathType%2 == 0}
		res, err := translate.Translate(st, opts)
		if err != nil {
			t.Fatalf("translate: %v", err)
		}
		if err := xds.Validate(res.Resources); err != nil {
			t.Fatalf("invalid resources: %v", err)
		}
		if _, err := xds.NewSnapshot(res.Resources); err != nil {
			t.Fatalf("inconsistent snapshot: %v", err)
		}
		first, err := translate.RenderJSON(res)
		if err != nil {
			t.Fatal(err)
		}
		again, err := translate.Translate(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		second, err := translate.RenderJSON(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatal("translation is not deterministic")
		}
	})
}

func fuzzState(host, path string, pathType uint8, svc, portName string, portNum int32, addr string, epPort int32, secret string, cert []byte, redirect bool) *kube.State {
	types3 := []networkingv1.PathType{networkingv1.PathTypePrefix, networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific}
	pt := types3[int(pathType)%len(types3)]
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
		Name: svc,
		Port: networkingv1.ServiceBackendPort{Name: portName},
	}}
	if pathType%3 == 0 {
		backend.Service.Port = networkingv1.ServiceBackendPort{Number: portNum}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "default"},
		Spec: networkingv1.IngressSpec{
			DefaultBackend: &backend,
			TLS:            []networkingv1.IngressTLS{{Hosts: []string{host, "*." + host}, SecretName: secret}},
			Rules: []networkingv1.IngressRule{
				{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{
						{Path: path, PathType: &pt, Backend: backend},
						{Path: path + "/", PathType: &pt, Backend: backend},
					},
				}}},
				{Host: "*." + host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pt, Backend: backend}},
				}}},
			},
		},
	}
	if redirect {
		ing.Annotations = map[string]string{forceSSLRedirect: "true"}
	}
	svcType := corev1.ServiceTypeClusterIP
	if pathType%2 == 0 {
		svcType = corev1.ServiceTypeExternalName
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type:         svcType,
			ExternalName: addr,
			Ports:        []corev1.ServicePort{{Name: portName, Port: portNum}},
		},
	}
	epPortName := portName
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &epPortName, Port: &epPort}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr, addr}}},
	}
	st := kube.NewState()
	st.Ingresses = []*networkingv1.Ingress{ing}
	svcName := types.NamespacedName{Namespace: "default", Name: svc}
	st.Services[svcName] = kube.NewService(service)
	st.EndpointSlices[svcName] = []*kube.EndpointSlice{kube.NewEndpointSlice(slice)}
	st.Secrets[types.NamespacedName{Namespace: "default", Name: secret}] = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: "default"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: cert},
	}
	return st
}
