package kube

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

const referencingManifests = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    test.ingress-xds.io/refers-to: Secret/htpasswd,ConfigMap/settings,Secret/missing
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
---
apiVersion: v1
kind: Secret
metadata: {name: htpasswd}
data: {auth: dXNlcjpoYXNo} # user:hash
---
apiVersion: v1
kind: Secret
metadata: {name: unreferenced}
data: {auth: b3RoZXI=}
---
apiVersion: v1
kind: Secret
metadata: {name: cert}
type: kubernetes.io/tls
data: {tls.crt: Yw==, tls.key: aw==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unused}
data: {k: v}
`

// Manifests give the same State as the cluster: TLS Secrets, and of the
// other Secrets and the ConfigMaps those the owned Ingresses refer to;
// without a References function, TLS Secrets only.
func TestManifestStateHoldsReferencedObjects(t *testing.T) {
	var objs Objects
	if err := DecodeManifests(strings.NewReader(referencingManifests), "test", &objs); err != nil {
		t.Fatal(err)
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	filter := ClassFilter{WatchClassless: true}

	st := objs.StateWith(filter, Refs{Ingress: testReferences})
	if len(st.Secrets) != 2 || st.Secrets[key("cert")] == nil || string(st.Secrets[key("htpasswd")].Data["auth"]) != "user:hash" {
		t.Errorf("secrets = %v, want cert and htpasswd", st.Secrets)
	}
	if len(st.ConfigMaps) != 1 || st.ConfigMaps[key("settings")].Data["k"] != "v" {
		t.Errorf("config maps = %v, want settings", st.ConfigMaps)
	}

	plain := objs.State(filter)
	if len(plain.Secrets) != 1 || plain.Secrets[key("cert")] == nil || len(plain.ConfigMaps) != 0 {
		t.Errorf("without references: secrets %v, config maps %v, want cert alone", plain.Secrets, plain.ConfigMaps)
	}

	// An Ingress we do not own refers to nothing.
	theirs := objs.StateWith(ClassFilter{}, Refs{Ingress: testReferences})
	if len(theirs.Ingresses) != 0 || len(theirs.Secrets) != 1 || len(theirs.ConfigMaps) != 0 {
		t.Errorf("with the Ingress not ours: %d ingresses, secrets %v, config maps %v", len(theirs.Ingresses), theirs.Secrets, theirs.ConfigMaps)
	}
	// What a referenced ConfigMap names is held too, one step only.
	if err := DecodeManifests(strings.NewReader(namingManifests), "test", &objs); err != nil {
		t.Fatal(err)
	}
	named := objs.StateWith(filter, Refs{Ingress: testReferences, ConfigMap: testNamedConfigMaps})
	var names []string
	for n := range named.ConfigMaps {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	if want := []string{"controller", "named", "settings"}; !slices.Equal(names, want) {
		t.Errorf("with the ConfigMaps a ConfigMap names: %v, want %v", names, want)
	}
}

// namingManifests: an Ingress refers to the ConfigMap controller, which
// names another, which names a third in turn.
const namingManifests = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: configured
  namespace: default
  annotations: {test.ingress-xds.io/refers-to: ConfigMap/controller}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: controller, namespace: default}
data: {names: default/named}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: named, namespace: default}
data: {names: default/unused}
`

// A referenced object that cannot be listed (here the API refuses every
// list) does not hold State: it goes on without the object once the lists
// stop coming in, and the watch goes on trying, its events counted.
func TestReferenceThatCannotBeListed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refused := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, apierrors.NewForbidden(corev1.Resource("secrets"), "htpasswd", errors.New("not allowed"))
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("not allowed")
		},
	}
	w := newReferenceWatches(ctx, func(Reference) cache.ListerWatcher { return refused }, func(Reference) {}, slog.New(slog.DiscardHandler))
	w.timeout = 50 * time.Millisecond
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web",
		Annotations: map[string]string{testRefsAnnotation: "Secret/htpasswd"}}}
	secrets, _ := w.update([]*networkingv1.Ingress{ing}, testReferences, nil, nil)
	if !secrets {
		t.Error("a new reference did not change the watched Secrets")
	}
	if got := w.secrets(); len(got) != 0 {
		t.Errorf("secrets = %v, want none", got)
	}
	ow := w.watches[Reference{Kind: KindSecret, NamespacedName: types.NamespacedName{Namespace: "app", Name: "htpasswd"}}]
	if ow == nil || !ow.counted.Load() {
		t.Error("the watch was dropped, or its later events would not count")
	}
}
