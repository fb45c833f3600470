package kube

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestClassFilterAdoption: the flags ingress-nginx has, with its meaning.
// With its defaults, ingress-xds leaves ingress-nginx's class alone; with
// --controller-class k8s.io/ingress-nginx --ingress-class nginx it takes the
// class, the Ingresses naming it and those carrying the legacy annotation,
// and leaves its own former class; and an IngressClass of our --ingress-class
// name that another controller owns is not ours.
func TestClassFilterAdoption(t *testing.T) {
	class := func(name, controller string, isDefault bool) *networkingv1.IngressClass {
		c := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressClassSpec{Controller: controller}}
		if isDefault {
			c.Annotations = map[string]string{defaultClassAnnotation: "true"}
		}
		return c
	}
	ing := func(name string, className *string, legacy string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}}
		i.Spec.IngressClassName = className
		if legacy != "" {
			i.Annotations = map[string]string{legacyClassAnnotation: legacy}
		}
		return i
	}
	ingresses := []*networkingv1.Ingress{
		ing("nginx", ptr.To("nginx"), ""),
		ing("nginx-legacy", nil, "nginx"),
		ing("xds", ptr.To("ingress-xds"), ""),
		ing("xds-legacy", nil, "ingress-xds"),
		ing("classless", nil, ""),
		ing("unknown", ptr.To("no-such-class"), ""),
	}
	nginxController := "k8s.io/ingress-nginx"
	adopt := ClassFilter{ClassName: "nginx", ControllerName: nginxController}
	cluster := []*networkingv1.IngressClass{class("nginx", nginxController, false), class("ingress-xds", DefaultControllerName, false)}
	tests := []struct {
		name    string
		filter  ClassFilter
		classes []*networkingv1.IngressClass
		want    string
	}{
		{"side by side, our defaults", ClassFilter{}, cluster, "xds,xds-legacy"},
		{"side by side, adopting ingress-nginx's class", adopt, cluster, "nginx,nginx-legacy"},
		{"adopting, without ingress-nginx's IngressClass", adopt, nil, "nginx,nginx-legacy"},
		{"adopting, --watch-ingress-without-class", ClassFilter{ClassName: "nginx", ControllerName: nginxController, WatchClassless: true}, cluster, "nginx,nginx-legacy,classless"},
		{"adopting the cluster's default class", adopt, []*networkingv1.IngressClass{class("nginx", nginxController, true)}, "nginx,nginx-legacy,classless"},
		{"another's default class", ClassFilter{}, []*networkingv1.IngressClass{class("nginx", nginxController, true)}, "xds,xds-legacy"},
		// Our --ingress-class names an IngressClass of another controller:
		// its Ingresses are that controller's. The legacy annotation is
		// still ours, as ingress-nginx compares it with --ingress-class.
		{"our name, another's IngressClass", ClassFilter{}, []*networkingv1.IngressClass{class("ingress-xds", nginxController, false)}, "xds-legacy"},
		// --ingress-class nginx without --controller-class: the IngressClass
		// nginx is ingress-nginx's, so of its Ingresses only the annotated
		// one is ours; the IngressClass ingress-xds is still ours by its
		// controller.
		{"--ingress-class without --controller-class", ClassFilter{ClassName: "nginx"}, cluster, "nginx-legacy,xds,xds-legacy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, i := range tc.filter.Owned(ingresses, tc.classes) {
				got = append(got, i.Name)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("owned %v, want %s", got, tc.want)
			}
		})
	}
}
