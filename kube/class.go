package kube

import (
	networkingv1 "k8s.io/api/networking/v1"
)

const (
	// DefaultControllerName is the spec.controller of IngressClasses we serve.
	DefaultControllerName = "ingress-xds.io/controller"
	// DefaultClassName is the IngressClass name we serve by default.
	DefaultClassName = "ingress-xds"

	legacyClassAnnotation  = "kubernetes.io/ingress.class"
	defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"
)

// ClassFilter decides which Ingresses belong to this controller, following
// the rules of networking.k8s.io/v1 and the conventions of peers:
//   - spec.ingressClassName names our class, or an IngressClass whose
//     spec.controller is ours;
//   - otherwise the legacy kubernetes.io/ingress.class annotation does;
//   - a class-less Ingress is ours when one of our IngressClasses is marked as
//     the cluster default, or when WatchClassless is set.
type ClassFilter struct {
	ClassName      string
	ControllerName string
	WatchClassless bool
}

// Owned returns the subset of ingresses that the filter accepts, in the same
// order, given the cluster's IngressClasses.
func (f ClassFilter) Owned(ingresses []*networkingv1.Ingress, classes []*networkingv1.IngressClass) []*networkingv1.Ingress {
	ours, defaultIsOurs := f.ourClasses(classes)
	var out []*networkingv1.Ingress
	for _, ing := range ingresses {
		if f.owns(ing, ours, defaultIsOurs) {
			out = append(out, ing)
		}
	}
	return out
}

// ourClasses returns the names of the IngressClasses we serve and whether one
// of them is the cluster's default class.
func (f ClassFilter) ourClasses(classes []*networkingv1.IngressClass) (map[string]bool, bool) {
	ours := map[string]bool{f.className(): true}
	defaultIsOurs := false
	for _, c := range classes {
		mine := c.Spec.Controller == f.controllerName()
		if mine {
			ours[c.Name] = true
		}
		if (mine || c.Name == f.className()) && c.Annotations[defaultClassAnnotation] == "true" {
			defaultIsOurs = true
		}
	}
	return ours, defaultIsOurs
}

func (f ClassFilter) owns(ing *networkingv1.Ingress, ours map[string]bool, defaultIsOurs bool) bool {
	if ing.Spec.IngressClassName != nil && *ing.Spec.IngressClassName != "" {
		return ours[*ing.Spec.IngressClassName]
	}
	if legacy, ok := ing.Annotations[legacyClassAnnotation]; ok && legacy != "" {
		return ours[legacy]
	}
	return f.WatchClassless || defaultIsOurs
}

func (f ClassFilter) className() string {
	if f.ClassName == "" {
		return DefaultClassName
	}
	return f.ClassName
}

func (f ClassFilter) controllerName() string {
	if f.ControllerName == "" {
		return DefaultControllerName
	}
	return f.ControllerName
}
