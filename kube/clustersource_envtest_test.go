package kube

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// TestClusterSourceAgainstAPIServer checks the informer source against a real
// API server: the State it gives, that it rebuilds only the parts whose
// objects changed, that EndpointSlice changes are reported by Service for
// the fast path, and that only TLS Secrets, stripped to their key pair, are
// kept.
func TestClusterSourceAgainstAPIServer(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The API server makes its own Service and its slice (default/
	// kubernetes) a while after it starts, later on a loaded machine: once
	// the source has taken its first changes, that would be a Service
	// added, not ours to judge. Wait for both first.
	eventually(t, 60*time.Second, "the API server's own Service and slice", func() error {
		if _, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
			return err
		}
		slices, err := client.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
		if err == nil && len(slices.Items) == 0 {
			err = fmt.Errorf("no slice yet")
		}
		return err
	})
	createNamespace(t, client, "app")
	class := "ingress-xds"
	mustCreate(t, func() error {
		_, err := client.NetworkingV1().Ingresses("app").Create(ctx, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}},
			}},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := client.CoreV1().Services("app").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error { return createSlice(ctx, client, "web-1", "web", "198.18.0.1") })
	mustCreate(t, func() error {
		_, err := client.CoreV1().Secrets("app").Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "cert", Annotations: map[string]string{"note": "dropped"}},
			Type:       corev1.SecretTypeTLS,
			Data: map[string][]byte{
				corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key"),
				"ca.crt": []byte("ca"), "extra": make([]byte, 64<<10),
			},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := client.CoreV1().Secrets("app").Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "opaque"},
			Data:       map[string][]byte{"big": make([]byte, 256<<10)},
		}, metav1.CreateOptions{})
		return err
	})

	src := &ClusterSource{Filter: ClassFilter{}, Logger: testLogger(t)}
	handled := &handledIngresses{}
	runClusterSource(ctx, t, client, src, func(inf Informers) Informers {
		inf.Ingresses = handled.observe(inf.Ingresses)
		return inf
	})

	if c := src.TakeChanges(); !c.All {
		t.Errorf("first changes = %+v, want everything", c)
	}
	st := src.State()
	svc := types.NamespacedName{Namespace: "app", Name: "web"}
	if len(st.Ingresses) != 1 || st.Services[svc] == nil || len(st.EndpointSlices[svc]) != 1 {
		t.Fatalf("state = %d ingresses, services %v, slices %v", len(st.Ingresses), st.Services, st.EndpointSlices)
	}
	if len(st.Secrets) != 1 {
		t.Fatalf("secrets = %v, want only the TLS one", st.Secrets)
	}
	secret := st.Secrets[types.NamespacedName{Namespace: "app", Name: "cert"}]
	if len(secret.Data) != 2 || secret.Annotations != nil {
		t.Errorf("cached TLS secret keeps more than its key pair: data %d keys, annotations %v", len(secret.Data), secret.Annotations)
	}

	// A status write (ours, on every Ingress) is no change at all: once
	// the source has had its event, nothing is to be taken.
	ing, err := client.NetworkingV1().Ingresses("app").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
	withStatus, err := client.NetworkingV1().Ingresses("app").UpdateStatus(ctx, ing, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the source's handler to have had the status update", func() error {
		return handled.had(withStatus.ResourceVersion)
	})
	c := src.TakeChanges()
	// The API server rewrites its own Service's slice (default/kubernetes)
	// when it likes, after its start too: that one is not ours to judge.
	delete(c.Endpoints, types.NamespacedName{Namespace: "default", Name: "kubernetes"})
	if c.All || len(c.Endpoints) > 0 {
		t.Errorf("a status write was taken as a change: %+v", c)
	}

	// An EndpointSlice change is reported as such, for its Service only,
	// and rebuilds only the slices part of the State.
	mustCreate(t, func() error { return createSlice(ctx, client, "web-2", "web", "198.18.0.2") })
	var changes Changes
	eventually(t, 30*time.Second, "the new slice to be reported", func() error {
		c := src.TakeChanges()
		if c.All {
			t.Fatalf("an EndpointSlice change (or a status write) was reported as a change to everything")
		}
		for k := range c.Endpoints {
			if changes.Endpoints == nil {
				changes.Endpoints = map[types.NamespacedName]bool{}
			}
			changes.Endpoints[k] = true
		}
		if !changes.Endpoints[svc] || len(src.EndpointSlices(svc)) != 2 {
			return fmt.Errorf("changes %v, slices %d", changes.Endpoints, len(src.EndpointSlices(svc)))
		}
		return nil
	})
	st2 := src.State()
	if len(st2.EndpointSlices[svc]) != 2 {
		t.Errorf("state has %d slices for %s, want 2", len(st2.EndpointSlices[svc]), svc)
	}
	if reflect.ValueOf(st2.Services).Pointer() != reflect.ValueOf(st.Services).Pointer() {
		t.Error("services were listed again although none changed")
	}
	// And the State says which Services' slices it took again since the
	// previous one's map.
	if since := st2.SlicesSince; since == nil || reflect.ValueOf(since.Base).Pointer() != reflect.ValueOf(st.EndpointSlices).Pointer() || !slices.Contains(since.Services, svc) {
		t.Errorf("the state says of its slices %+v, want the previous state's map and %s", since, svc)
	}
	checkSlicesSince(t, st2)
	if !reflect.DeepEqual(st2.Ingresses, st.Ingresses) {
		t.Error("ingresses changed although none did")
	}
	if got := src.EndpointSlices(svc); got[0].Name != "web-1" || got[1].Name != "web-2" {
		t.Errorf("slices not in name order: %s, %s", got[0].Name, got[1].Name)
	}

	// Deleting a slice regroups its Service alone; the grouping is the one
	// listing every slice again gives.
	if err := client.DiscoveryV1().EndpointSlices("app").Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deleted slice to be gone from the state", func() error {
		st3 := src.State()
		if n := len(st3.EndpointSlices[svc]); n != 1 || st3.EndpointSlices[svc][0].Name != "web-2" {
			return fmt.Errorf("%d slices", n)
		}
		if want := listSlicesByService(ctx, t, client); !reflect.DeepEqual(st3.EndpointSlices, want) {
			t.Fatalf("slices by service %v, listing them all gives %v", st3.EndpointSlices, want)
		}
		return nil
	})

	// A slice relabelled to another Service moves to that Service's group:
	// both are reported, and the grouping is again the one listing gives.
	src.TakeChanges()
	moved, err := client.DiscoveryV1().EndpointSlices("app").Get(ctx, "web-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved.Labels[discoveryv1.LabelServiceName] = "other"
	if _, err := client.DiscoveryV1().EndpointSlices("app").Update(ctx, moved, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	other := types.NamespacedName{Namespace: "app", Name: "other"}
	reported := map[types.NamespacedName]bool{}
	eventually(t, 30*time.Second, "the relabelled slice to move", func() error {
		c := src.TakeChanges()
		if c.All {
			t.Fatalf("relabelling a slice was reported as a change to everything")
		}
		for k := range c.Endpoints {
			reported[k] = true
		}
		st4 := src.State()
		if !reported[svc] || !reported[other] || len(st4.EndpointSlices[svc]) != 0 || len(st4.EndpointSlices[other]) != 1 {
			return fmt.Errorf("reported %v, %s has %d slices, %s %d", reported, svc, len(st4.EndpointSlices[svc]), other, len(st4.EndpointSlices[other]))
		}
		if want := listSlicesByService(ctx, t, client); !reflect.DeepEqual(st4.EndpointSlices, want) {
			t.Fatalf("slices by service %v, listing them all gives %v", st4.EndpointSlices, want)
		}
		checkSlicesSince(t, st4)
		return nil
	})

	// Any other change is a change to everything.
	mustCreate(t, func() error {
		_, err := client.CoreV1().Services("app").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "api"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		return err
	})
	eventually(t, 30*time.Second, "the new service", func() error {
		if c := src.TakeChanges(); c.All {
			if src.State().Services[types.NamespacedName{Namespace: "app", Name: "api"}] == nil {
				return fmt.Errorf("reported, but not in the state")
			}
			return nil
		}
		return fmt.Errorf("not reported as a change to everything yet")
	})
}

// listSlicesByService groups every EndpointSlice the API server has, as
// sources keep them.
func listSlicesByService(ctx context.Context, t *testing.T, client kubernetes.Interface) map[types.NamespacedName][]*EndpointSlice {
	t.Helper()
	list, err := client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept := make([]*EndpointSlice, len(list.Items))
	for i := range list.Items {
		kept[i] = NewEndpointSlice(&list.Items[i])
	}
	return slicesByService(kept)
}

func createSlice(ctx context.Context, client kubernetes.Interface, name, svc, ip string) error {
	port := int32(8080)
	_, err := client.DiscoveryV1().EndpointSlices("app").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}}},
	}, metav1.CreateOptions{})
	return err
}

// runClusterSource gives src the informers serve uses (through wrap, when
// set), runs it until ctx is done and returns once it has synced (its first
// call of changed).
func runClusterSource(ctx context.Context, t *testing.T, client kubernetes.Interface, src *ClusterSource, wrap func(Informers) Informers) {
	t.Helper()
	factories := NewInformerFactories(client)
	src.Informers = factories.Informers()
	if wrap != nil {
		src.Informers = wrap(src.Informers)
	}
	synced := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := src.Run(ctx, func() { once.Do(func() { close(synced) }) }); err != nil {
			t.Errorf("source: %v", err)
		}
	}()
	factories.Start(ctx.Done())
	t.Cleanup(func() {
		<-done
		factories.Shutdown()
	})
	select {
	case <-synced:
	case <-time.After(60 * time.Second):
		t.Fatal("the source never synced")
	}
}

// handledIngresses records the resource versions of the Ingresses the
// source's event handler has finished with: a handler is called for one
// event after another, so once it has had one, it has had every earlier
// one too, and whatever they did to the source is done.
type handledIngresses struct {
	mu       sync.Mutex
	versions map[string]bool
}

// observe wraps the Ingress informer so that the handlers added to it
// record what they had.
func (h *handledIngresses) observe(inf networkinginformers.IngressInformer) networkinginformers.IngressInformer {
	return observedIngressInformer{IngressInformer: inf, handled: h}
}

func (h *handledIngresses) record(obj any) {
	if ing, ok := obj.(*networkingv1.Ingress); ok {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.versions == nil {
			h.versions = map[string]bool{}
		}
		h.versions[ing.ResourceVersion] = true
	}
}

func (h *handledIngresses) had(version string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.versions[version] {
		return fmt.Errorf("not yet had version %s", version)
	}
	return nil
}

type observedIngressInformer struct {
	networkinginformers.IngressInformer
	handled *handledIngresses
}

func (o observedIngressInformer) Informer() cache.SharedIndexInformer {
	return observedInformer{SharedIndexInformer: o.IngressInformer.Informer(), handled: o.handled}
}

type observedInformer struct {
	cache.SharedIndexInformer
	handled *handledIngresses
}

func (o observedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return o.SharedIndexInformer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			h.OnAdd(obj, initial)
			o.handled.record(obj)
		},
		UpdateFunc: func(old, obj any) {
			h.OnUpdate(old, obj)
			o.handled.record(obj)
		},
		DeleteFunc: func(obj any) {
			h.OnDelete(obj)
			o.handled.record(obj)
		},
	})
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

// checkSlicesSince checks what a State says of its EndpointSlices: every
// Service not listed has the very slices of the map it names.
func checkSlicesSince(t *testing.T, st *State) {
	t.Helper()
	since := st.SlicesSince
	if since == nil {
		return
	}
	for _, m := range []map[types.NamespacedName][]*EndpointSlice{st.EndpointSlices, since.Base} {
		for svc := range m {
			if slices.Contains(since.Services, svc) {
				continue
			}
			a, b := st.EndpointSlices[svc], since.Base[svc]
			if len(a) != len(b) || len(a) > 0 && &a[0] != &b[0] {
				t.Errorf("%s's slices differ from the map the state names, and it is not listed among %v", svc, since.Services)
			}
		}
	}
}
