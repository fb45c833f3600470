package kube

import (
	networkingv1 "k8s.io/api/networking/v1"
)

const (
	// DefaultControllerName is the spec.controller of IngressClasses we serve.
	DefaultControllerName = "ingress-xds.io/controller"
	// NginxControllerName is ingress-nginx's spec.controller, which
	// serve --controller-class names to take over its Ingresses.
	NginxControllerName = "k8s.io/ingress-nginx"
	// DefaultClassName is the IngressClass name we serve by default.
	DefaultClassName = "ingress-xds"

	legacyClassAnnotation  = "kubernetes.io/ingress.class"
	defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"
)

// ClassFilter decides which Ingresses belong to this controller, as
// ingress-nginx decides with its flags of the same names (--ingress-class,
// --controller-class, --watch-ingress-without-class):
//   - spec.ingressClassName names an IngressClass whose spec.controller is
//     ours (ControllerName). A name no IngressClass has is ours when it is
//     ClassName (files, and clusters where the class was never created);
//     an IngressClass of that name with another controller is not ours:
//     the IngressClass says whose its Ingresses are, which is what lets two
//     controllers run side by side, and one adopt the other's class by
//     taking its controller value;
//   - otherwise the legacy kubernetes.io/ingress.class annotation, when it
//     is ClassName (as in ingress-nginx) or names an IngressClass of ours;
//   - a class-less Ingress is ours when WatchClassless is set (ingress-nginx's
//     --watch-ingress-without-class), and also when one of our
//     IngressClasses is marked as the cluster default
//     (ingressclass.kubernetes.io/is-default-class), which ingress-nginx
//     leaves to the API server: it gives the default class to Ingresses
//     created without one, and this takes in those created before.
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
		// Set either way: an IngressClass named ClassName whose
		// controller is another's takes the name away from us.
		ours[c.Name] = mine
		if mine && c.Annotations[defaultClassAnnotation] == "true" {
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
		return legacy == f.className() || ours[legacy]
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
