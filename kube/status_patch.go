package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// patchStatus sets status.loadBalancer.ingress of ing to want.
//
// A merge patch of the status subresource rather than UpdateStatus: an
// update sends the whole object, and the API server keeps the labels and
// annotations it carries, so an update made from our trimmed cache would
// wipe them. The patch names the resourceVersion we decided from, which
// makes it conditional: if the Ingress changed since (say, another
// controller took it over), the API server answers Conflict instead of
// letting us overwrite what we have not seen.
func patchStatus(ctx context.Context, client kubernetes.Interface, ing *networkingv1.Ingress, want []networkingv1.IngressLoadBalancerIngress) error {
	type loadBalancer struct {
		// No omitempty: null is how a merge patch removes the list.
		Ingress []networkingv1.IngressLoadBalancerIngress `json:"ingress"`
	}
	var patch struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status struct {
			LoadBalancer loadBalancer `json:"loadBalancer"`
		} `json:"status"`
	}
	patch.Metadata.ResourceVersion = ing.ResourceVersion
	patch.Status.LoadBalancer.Ingress = want
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encoding status patch: %w", err)
	}
	_, err = client.NetworkingV1().Ingresses(ing.Namespace).Patch(ctx, ing.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patching status of ingress %s/%s: %w", ing.Namespace, ing.Name, err)
	}
	return nil
}

// trim is trimForStatus, keeping the annotations of an Ingress that Refused
// refuses (few, by nature), so that sync still sees why. Under a
// controller ConfigMap, whose rules may refuse any Ingress by its
// annotations once it changes, every Ingress keeps them, but for the
// last-applied copy of the whole object.
func (w *StatusWriter) trim(obj any) (any, error) {
	out, err := trimForStatus(obj)
	ing, ok := obj.(*networkingv1.Ingress)
	switch {
	case !ok || err != nil || w.Refused == nil:
	case w.ConfigMap.Name != "":
		out.(*networkingv1.Ingress).Annotations = withoutAnnotation(ing.Annotations, corev1.LastAppliedConfigAnnotation)
	case w.Refused(ing, nil):
		out.(*networkingv1.Ingress).Annotations = ing.Annotations
	}
	return out, err
}

// withoutAnnotation is annotations without key, a copy only when it has it.
func withoutAnnotation(annotations map[string]string, key string) map[string]string {
	if _, ok := annotations[key]; !ok {
		return annotations
	}
	out := maps.Clone(annotations)
	delete(out, key)
	return out
}

// trimForStatus keeps, of Ingresses and IngressClasses, only what the status
// writer reads: ownership (class name, class annotations, controller) and
// the current status. At 10,000 Ingresses the rules, TLS sections and managed
// fields we drop are most of the memory.
func trimForStatus(obj any) (any, error) {
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{
				Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion,
				Annotations: keepAnnotation(o.Annotations, legacyClassAnnotation),
			},
			Spec:   networkingv1.IngressSpec{IngressClassName: o.Spec.IngressClassName},
			Status: o.Status,
		}, nil
	case *networkingv1.IngressClass:
		return &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{
				Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion,
				Annotations: keepAnnotation(o.Annotations, defaultClassAnnotation),
			},
			Spec: networkingv1.IngressClassSpec{Controller: o.Spec.Controller},
		}, nil
	}
	return obj, nil
}

func keepAnnotation(annotations map[string]string, key string) map[string]string {
	v, ok := annotations[key]
	if !ok {
		return nil
	}
	return map[string]string{key: v}
}
