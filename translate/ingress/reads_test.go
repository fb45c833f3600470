package ingress

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
)

// A fragment stays valid while every object it read is the same object,
// missing ones included, and no longer once one of them changes, appears
// or goes; objects it did not read never matter.
func TestFragmentReadsDecideReuse(t *testing.T) {
	secret, cm := types.NamespacedName{Namespace: "ns", Name: "auth"}, types.NamespacedName{Namespace: "ns", Name: "headers"}
	st := kube.NewState()
	st.Secrets[secret] = &corev1.Secret{}
	f := &fragmentBuilder{ing: &networkingv1.Ingress{}, state: st, frag: &fragment{}}
	f.secret(secret)
	f.configMap(cm) // missing: its appearance must count
	reads := f.frag.reads

	same := kube.NewState()
	same.Secrets[secret] = st.Secrets[secret]
	same.Secrets[types.NamespacedName{Namespace: "ns", Name: "other"}] = &corev1.Secret{}
	if !reads.unchanged(same, nil) {
		t.Error("a Secret the fragment did not read made it stale")
	}
	rotated := kube.NewState()
	rotated.Secrets[secret] = &corev1.Secret{}
	if reads.unchanged(rotated, nil) {
		t.Error("a changed Secret it read left it valid")
	}
	appeared := kube.NewState()
	appeared.Secrets[secret] = st.Secrets[secret]
	appeared.ConfigMaps[cm] = &corev1.ConfigMap{}
	if reads.unchanged(appeared, nil) {
		t.Error("a ConfigMap it found missing appeared, and it stayed valid")
	}
	if !reads.unchanged(rotated, rotated) {
		t.Error("parts that are the previous State's very maps were checked")
	}
}
