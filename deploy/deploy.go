// Package deploy holds the manifests `kubectl apply -k deploy/` installs, and
// for tests (here and on kind) the means to render and apply them without
// kubectl: kustomize in-process, and server-side apply through client-go.
package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Render runs kustomize over dir, as `kubectl apply -k` would, and returns
// the objects in kustomize's order (Namespace first, workloads last).
func Render(dir string) ([]*unstructured.Unstructured, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		// Through JSON rather than r.Map(): kustomize's maps hold Go ints,
		// which unstructured's deep copies reject; JSON gives int64s.
		raw, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		out = append(out, u)
	}
	return out, nil
}

// Apply server-side applies objs in order as fieldManager, for real or, with
// dryRun, through validation and admission only. It applies every object
// even when some fail, and returns all the errors.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, fieldManager string, dryRun bool) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	force := true
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var errs []error
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		what := fmt.Sprintf("%s %s", gvk.Kind, obj.GetName())
		if ns := obj.GetNamespace(); ns != "" {
			what = fmt.Sprintf("%s %s/%s", gvk.Kind, ns, obj.GetName())
		}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		body, err := json.Marshal(obj.Object)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if obj.GetNamespace() != "" {
			ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts); err != nil {
			errs = append(errs, fmt.Errorf("applying %s: %w", what, err))
		}
	}
	return errors.Join(errs...)
}
