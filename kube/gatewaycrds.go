package kube

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayKindsChanged is what GatewayCRDWatch.Run returns when the
// Gateway API kinds served are no longer those the control plane started
// watching: serve starts over, with informers for the kinds served now.
type GatewayKindsChanged struct {
	Was, Now []string
}

func (e *GatewayKindsChanged) Error() string {
	return fmt.Sprintf("the Gateway API kinds served changed from %v to %v", e.Was, e.Now)
}

// GatewayCRDWatch watches the CustomResourceDefinitions of the Gateway API
// kinds the front-end reads, each by its name (the roles grant those
// names only), so that CRDs installed, upgraded or removed after start-up
// are noticed without a restart of the pod: which informers run is decided
// when they start (ServedGatewayKinds), since an informer on a kind that
// is not served never syncs. Its events decide, not a clock.
type GatewayCRDWatch struct {
	Client dynamic.Interface
	// Started are the kinds served when the informers started.
	Started []string
	Logger  *slog.Logger
}

// crdResource is the CustomResourceDefinitions' resource.
func crdResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
}

// Run watches until ctx is done (nil), or until the kinds served differ
// from Started (a *GatewayKindsChanged). Without the right to read the
// CRDs (roles of an older install), it says so once and waits for ctx:
// CRDs installed later then take a restart, as before.
func (w *GatewayCRDWatch) Run(ctx context.Context) error {
	log := loggerOr(w.Logger).With("component", "gateway-crds")
	crds := gatewayCRDNames()
	names := slices.Sorted(maps.Keys(crds))
	if _, err := w.Client.Resource(crdResource()).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + names[0]}); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if apierrors.IsForbidden(err) {
			log.Warn("cannot read the Gateway API CRDs: Gateway API CRDs installed or changed after start-up take a restart", "error", err)
			<-ctx.Done()
			return nil
		}
		return fmt.Errorf("reading the Gateway API CRDs: %w", err)
	}
	changed := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	var informers []cache.SharedIndexInformer
	for _, name := range names {
		inf := dynamicinformer.NewFilteredDynamicInformer(w.Client, crdResource(), "", 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.FieldSelector = "metadata.name=" + name
		}).Informer()
		if err := inf.SetTransform(servedV1Only); err != nil {
			return fmt.Errorf("watching CRD %s: %w", name, err)
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) }, DeleteFunc: notify,
		}); err != nil {
			return fmt.Errorf("watching CRD %s: %w", name, err)
		}
		informers = append(informers, inf)
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	for _, inf := range informers {
		go inf.RunWithContext(watchCtx)
	}
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		synced[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	for {
		// A CRD not yet established (CRDs are often installed together)
		// is waited for, so as to start over once for all of them when
		// they come together.
		now, pending := servedFrom(crds, informers)
		if !pending && !slices.Equal(now, w.Started) {
			return &GatewayKindsChanged{Was: w.Started, Now: now}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// gatewayCRDNames are the CRD names of the kinds the front-end reads, to
// their kinds.
func gatewayCRDNames() map[string]string {
	out := map[string]string{}
	for kind, resource := range gatewayResources() {
		out[resource+"."+gwapiv1.GroupName] = kind
	}
	return out
}

// servedFrom are the kinds whose CRD serves v1 and is established, as
// the informers hold them, sorted; pending, whether some CRD is not
// established yet (or is being deleted).
func servedFrom(crds map[string]string, informers []cache.SharedIndexInformer) (kinds []string, pending bool) {
	for _, inf := range informers {
		for _, obj := range inf.GetStore().List() {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if settled, _, _ := unstructured.NestedBool(u.Object, "settled"); !settled {
				pending = true
			}
			if served, _, _ := unstructured.NestedBool(u.Object, "servedV1"); served {
				if kind, ok := crds[u.GetName()]; ok {
					kinds = append(kinds, kind)
				}
			}
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds), pending
}

// servedV1Only trims a CRD, whose schemas are large, to its name,
// whether it serves gateway.networking.k8s.io/v1 and is established (what
// the API server's discovery then lists: ServedGatewayKinds), and whether
// it is settled (established, or on its way out).
func servedV1Only(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if _, trimmed := u.Object["servedV1"]; trimmed {
		return obj, nil // the informer may hand an object over twice
	}
	served := false
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["name"] == gwapiv1.GroupVersion.Version && m["served"] == true {
			served = true
		}
	}
	established := false
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			established = true
		}
	}
	// Being deleted, a CRD is still established until it is gone: that
	// it is going is what counts.
	deleting := u.GetDeletionTimestamp() != nil
	trimmed := &unstructured.Unstructured{Object: map[string]any{
		"servedV1": served && established && !deleting,
		"settled":  established || deleting,
	}}
	trimmed.SetAPIVersion(u.GetAPIVersion())
	trimmed.SetKind(u.GetKind())
	trimmed.SetName(u.GetName())
	trimmed.SetResourceVersion(u.GetResourceVersion())
	trimmed.SetUID(u.GetUID())
	return trimmed, nil
}
