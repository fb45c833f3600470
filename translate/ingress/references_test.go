package ingress_test

import (
	"reflect"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// TestReferences: the Secrets the annotations name are listed for kube to
// keep, under the prefix the registry reads, and only those of the
// Ingress's own namespace (the front-end reads no other).
func TestReferences(t *testing.T) {
	ing := func(annotations map[string]string) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: annotations}}
	}
	ca := kube.Reference{Kind: kube.KindSecret, NamespacedName: types.NamespacedName{Namespace: "shop", Name: "upstream-ca"}}
	for _, tc := range []struct {
		name string
		refs func(*networkingv1.Ingress) []kube.Reference
		ann  map[string]string
		want []kube.Reference
	}{
		{"own namespace", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/proxy-ssl-secret": "shop/upstream-ca"}, []kube.Reference{ca}},
		{"another namespace", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/proxy-ssl-secret": "kube-system/ca"}, nil},
		{"unparsable", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/proxy-ssl-secret": "upstream-ca"}, nil},
		{"the client CA", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/auth-tls-secret": "shop/upstream-ca"}, []kube.Reference{ca}},
		{"no reference", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/upstream-vhost": "a.example.com"}, nil},
		// auth-secret takes a name alone, of the Ingress's namespace.
		{"a name alone", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/auth-secret": "upstream-ca"}, []kube.Reference{ca}},
		{"auth-secret of another namespace", ingress.References, map[string]string{"nginx.ingress.kubernetes.io/auth-secret": "kube-system/upstream-ca"}, nil},
		{"another prefix", ingress.ReferencesWith(annotations.New("custom.example.com")), map[string]string{"custom.example.com/proxy-ssl-secret": "shop/upstream-ca"}, []kube.Reference{ca}},
		{"the default prefix under another", ingress.ReferencesWith(annotations.New("custom.example.com")), map[string]string{"nginx.ingress.kubernetes.io/proxy-ssl-secret": "shop/upstream-ca"}, nil},
	} {
		if got := tc.refs(ing(tc.ann)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
