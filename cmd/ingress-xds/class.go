package main

import (
	"flag"

	"github.com/ingress-xds/ingress-xds/kube"
)

// registerClass registers the flags that choose the Ingresses served, named
// and meaning as ingress-nginx's, so that `--controller-class
// k8s.io/ingress-nginx --ingress-class nginx` takes over ingress-nginx's
// class and its Ingresses (kube.ClassFilter has the rules).
func (f *serveFlags) registerClass(fs *flag.FlagSet) {
	fs.StringVar(&f.ingressClass, "ingress-class", kube.DefaultClassName,
		"IngressClass name to serve (also when no IngressClass of that name exists), and the value of the legacy kubernetes.io/ingress.class annotation to serve")
	fs.StringVar(&f.controllerClass, "controller-class", kube.DefaultControllerName,
		"serve the IngressClasses whose spec.controller is this, and their Ingresses (ingress-nginx's is k8s.io/ingress-nginx)")
	const classless = "also serve Ingresses that name no class (by spec.ingressClassName or annotation)"
	fs.BoolVar(&f.watchClassless, "watch-ingress-without-class", false, classless)
	fs.BoolVar(&f.watchClassless, "watch-classless", false, classless+"; the same as --watch-ingress-without-class")
}
