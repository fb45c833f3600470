package kube

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// testRefsAnnotation lists what an Ingress refers to in these tests, as
// "Kind/name,Kind/name" in its own namespace; the translator's annotations
// play this part in serve.
const testRefsAnnotation = "test.ingress-xds.io/refers-to"

func testReferences(ing *networkingv1.Ingress) []Reference {
	var out []Reference
	for _, ref := range strings.Split(ing.Annotations[testRefsAnnotation], ",") {
		if kind, name, ok := strings.Cut(ref, "/"); ok {
			out = append(out, Reference{Kind: kind, NamespacedName: types.NamespacedName{Namespace: ing.Namespace, Name: name}})
		}
	}
	return out
}

// TestReferencedObjectsAgainstAPIServer checks, with a real API server,
// that State holds the Secrets (of any type) and ConfigMaps that owned
// Ingresses refer to and no others; that an Ingress that comes to refer to
// one brings it in, and one that stops takes it out; that a change to a
// referenced object reaches State and is reported; and that the source
// watches the referenced objects alone, so that nothing else can be
// reported.
func TestReferencedObjectsAgainstAPIServer(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createNamespace(t, client, "app")
	secrets, configMaps := client.CoreV1().Secrets("app"), client.CoreV1().ConfigMaps("app")
	for _, name := range []string{"htpasswd", "unreferenced", "later"} {
		mustCreate(t, func() error {
			_, err := secrets.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Data:       map[string][]byte{"auth": []byte(name + ":v1")},
			}, metav1.CreateOptions{})
			return err
		})
	}
	for _, name := range []string{"settings", "unused"} {
		mustCreate(t, func() error {
			_, err := configMaps.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Data:       map[string]string{"k": name + ":v1"},
			}, metav1.CreateOptions{})
			return err
		})
	}
	ingress := func(name, refersTo string) *networkingv1.Ingress {
		class := DefaultClassName
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{testRefsAnnotation: refersTo}},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}},
			}},
		}
	}
	ingresses := client.NetworkingV1().Ingresses("app")
	mustCreate(t, func() error {
		_, err := ingresses.Create(ctx, ingress("web", "Secret/htpasswd,ConfigMap/settings,Secret/missing"), metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error { _, err := ingresses.Create(ctx, ingress("api", ""), metav1.CreateOptions{}); return err })
	// An Ingress of another class refers to something too: not ours, so
	// not in the State.
	mustCreate(t, func() error {
		ing := ingress("theirs", "Secret/unreferenced,ConfigMap/unused")
		other := "nginx"
		ing.Spec.IngressClassName = &other
		_, err := ingresses.Create(ctx, ing, metav1.CreateOptions{})
		return err
	})

	src := &ClusterSource{Filter: ClassFilter{}, Logger: testLogger(t), References: Refs{Ingress: testReferences}}
	runClusterSource(ctx, t, client, src, nil)
	src.TakeChanges()

	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "app", Name: name} }
	// holds reports what State has of the Secret and ConfigMap names given
	// (one of each kind; "" for none), and that it has nothing else.
	holds := func(st *State, secret, secretData, configMap, configMapData string) error {
		var secretNames, configMapNames []string
		for k := range st.Secrets {
			secretNames = append(secretNames, k.Name)
		}
		for k := range st.ConfigMaps {
			configMapNames = append(configMapNames, k.Name)
		}
		want := func(name string) []string {
			if name == "" {
				return nil
			}
			return []string{name}
		}
		if !reflect.DeepEqual(secretNames, want(secret)) || !reflect.DeepEqual(configMapNames, want(configMap)) {
			return fmt.Errorf("state holds Secrets %v and ConfigMaps %v, want %v and %v", secretNames, configMapNames, want(secret), want(configMap))
		}
		if secret != "" {
			if got := string(st.Secrets[key(secret)].Data["auth"]); got != secretData {
				return fmt.Errorf("Secret %s holds %q, want %q", secret, got, secretData)
			}
		}
		if configMap != "" {
			if got := st.ConfigMaps[key(configMap)].Data["k"]; got != configMapData {
				return fmt.Errorf("ConfigMap %s holds %q, want %q", configMap, got, configMapData)
			}
		}
		return nil
	}
	watches := func(want ...string) error {
		got := map[string]bool{}
		for r := range src.referenced.references() {
			got[r.Kind+"/"+r.Name] = true
		}
		wantSet := map[string]bool{}
		for _, w := range want {
			wantSet[w] = true
		}
		if !reflect.DeepEqual(got, wantSet) {
			return fmt.Errorf("the source watches %v, want %v", got, wantSet)
		}
		return nil
	}

	// The first State already holds what is referenced: no Ingress is ever
	// seen without the objects it refers to.
	st := src.State()
	if err := holds(st, "htpasswd", "htpasswd:v1", "settings", "settings:v1"); err != nil {
		t.Fatal(err)
	}
	// A missing object is watched too: it may be created later.
	if err := watches("Secret/htpasswd", "ConfigMap/settings", "Secret/missing"); err != nil {
		t.Fatal(err)
	}

	// A change to a referenced object reaches State and is reported as a
	// change; the parts it does not touch are the same maps as before.
	setData := func(kind, name, value string) {
		t.Helper()
		var err error
		if kind == KindSecret {
			_, err = secrets.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"auth": []byte(value)}}, metav1.UpdateOptions{})
		} else {
			_, err = configMaps.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": value}}, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	reported := func(what string, check func(*State) error) *State {
		t.Helper()
		var all bool
		var last *State
		eventually(t, 30*time.Second, what, func() error {
			all = src.TakeChanges().All || all
			last = src.State()
			if err := check(last); err != nil {
				return err
			}
			if !all {
				return fmt.Errorf("in the state, but not reported as a change")
			}
			return nil
		})
		return last
	}
	setData(KindConfigMap, "settings", "settings:v2")
	st2 := reported("the ConfigMap's update", func(st *State) error {
		return holds(st, "htpasswd", "htpasswd:v1", "settings", "settings:v2")
	})
	if reflect.ValueOf(st2.Secrets).Pointer() != reflect.ValueOf(st.Secrets).Pointer() {
		t.Error("Secrets were listed again although only a ConfigMap changed")
	}
	if reflect.ValueOf(st2.Ingresses).Pointer() != reflect.ValueOf(st.Ingresses).Pointer() {
		t.Error("Ingresses were listed again although only a ConfigMap changed")
	}
	setData(KindSecret, "htpasswd", "htpasswd:v2")
	reported("the Secret's update", func(st *State) error {
		return holds(st, "htpasswd", "htpasswd:v2", "settings", "settings:v2")
	})

	// An Ingress that comes to refer to a Secret brings it in, with the
	// data it had all along; one that stops referring takes it out.
	api, err := ingresses.Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	api.Annotations[testRefsAnnotation] = "Secret/later"
	if _, err := ingresses.Update(ctx, api, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	web, err := ingresses.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Annotations[testRefsAnnotation] = "ConfigMap/settings"
	if web, err = ingresses.Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reported("the newly referenced Secret in, the no longer referenced one out", func(st *State) error {
		return holds(st, "later", "later:v1", "settings", "settings:v2")
	})
	if err := watches("Secret/later", "ConfigMap/settings"); err != nil {
		t.Error(err)
	}
	setData(KindSecret, "later", "later:v2")
	reported("the newly referenced Secret's update", func(st *State) error {
		return holds(st, "later", "later:v2", "settings", "settings:v2")
	})

	// A referenced object that is created later comes in as well.
	web.Annotations[testRefsAnnotation] = "ConfigMap/settings,ConfigMap/created-later"
	if _, err := ingresses.Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the source to watch the ConfigMap to be created", func() error {
		src.State()
		return watches("Secret/later", "ConfigMap/settings", "ConfigMap/created-later")
	})
	src.TakeChanges()
	mustCreate(t, func() error {
		_, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "created-later"}, Data: map[string]string{"k": "new"}}, metav1.CreateOptions{})
		return err
	})
	reported("the ConfigMap created later", func(st *State) error {
		if cm := st.ConfigMaps[key("created-later")]; cm == nil || cm.Data["k"] != "new" {
			return fmt.Errorf("not in the state: %v", st.ConfigMaps)
		}
		return nil
	})
}

// testNamedConfigMaps reads what a ConfigMap named "controller" names in
// these tests: "namespace/name,..." under the key "names"; the controller
// ConfigMap's add-headers plays this part in serve.
func testNamedConfigMaps(cm *corev1.ConfigMap) []Reference {
	if cm.Name != "controller" {
		return nil
	}
	var out []Reference
	for _, ref := range strings.Split(cm.Data["names"], ",") {
		if ns, name, ok := strings.Cut(ref, "/"); ok {
			out = append(out, Reference{Kind: KindConfigMap, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		}
	}
	return out
}

// TestConfigMapsNamedByConfigMapsAgainstAPIServer checks, with a real API
// server, that State holds the ConfigMaps a referenced ConfigMap names in
// its data (Refs.ConfigMap), one step only; that a change to one reaches
// State; and that a change to what is named brings the new one in and
// takes the old one out.
func TestConfigMapsNamedByConfigMapsAgainstAPIServer(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createNamespace(t, client, "app")
	configMaps := client.CoreV1().ConfigMaps("app")
	for name, data := range map[string]map[string]string{
		"controller": {"names": "app/first"},
		"first":      {"k": "first:v1", "names": "app/third"}, // not followed: one step
		"second":     {"k": "second:v1"},
		"third":      {"k": "third:v1"},
	} {
		mustCreate(t, func() error {
			_, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
			return err
		})
	}
	class := DefaultClassName
	mustCreate(t, func() error {
		_, err := client.NetworkingV1().Ingresses("app").Create(ctx, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{testRefsAnnotation: "ConfigMap/controller"}},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}},
			}},
		}, metav1.CreateOptions{})
		return err
	})
	src := &ClusterSource{Filter: ClassFilter{}, Logger: testLogger(t), References: Refs{Ingress: testReferences, ConfigMap: testNamedConfigMaps}}
	runClusterSource(ctx, t, client, src, nil)

	// holds checks that State holds these ConfigMaps, name=k, and no
	// other, and that the source watches them alone.
	holds := func(want map[string]string) func() error {
		return func() error {
			st := src.State()
			got := map[string]string{}
			for n, cm := range st.ConfigMaps {
				got[n.Name] = cm.Data["k"]
			}
			if !reflect.DeepEqual(got, want) {
				return fmt.Errorf("state holds ConfigMaps %v, want %v", got, want)
			}
			watched := map[string]string{}
			for r := range src.referenced.references() {
				watched[r.Name] = want[r.Name]
			}
			if !reflect.DeepEqual(watched, want) {
				return fmt.Errorf("the source watches %v, want %v", watched, want)
			}
			return nil
		}
	}
	// The first State already holds the named ConfigMap.
	if err := holds(map[string]string{"controller": "", "first": "first:v1"})(); err != nil {
		t.Fatal(err)
	}
	update := func(name string, data map[string]string) {
		t.Helper()
		if _, err := configMaps.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update("first", map[string]string{"k": "first:v2"})
	eventually(t, 30*time.Second, "the named ConfigMap's update", holds(map[string]string{"controller": "", "first": "first:v2"}))
	update("controller", map[string]string{"names": "app/second"})
	eventually(t, 30*time.Second, "the newly named ConfigMap in, the other out", holds(map[string]string{"controller": "", "second": "second:v1"}))
	update("controller", map[string]string{})
	eventually(t, 30*time.Second, "none named", holds(map[string]string{"controller": ""}))
}
