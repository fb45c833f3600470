package main

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// references say which Secrets and ConfigMaps an Ingress refers to beside
// spec.tls (through annotations read under the configured prefix), for
// serve's source and for translate -f alike: those, and no other Secret or
// ConfigMap, are handed to the translator. Which keys name one is the
// front-end's knowledge (its annotation table). The controller ConfigMap
// (--configmap) is among every Ingress's references, and the ConfigMaps
// its keys name are followed: kube keeps and watches them as any other.
func (t *translateFlags) references() kube.Refs {
	name, _ := configMapName(t.configMap) // validate checked it
	return ingress.WithConfigMap(ingress.ReferencesWith(annotations.New(t.annotationsPrefix)), name)
}

// ingressRefused says whether an Ingress is refused by its annotations (an
// access control ingress-xds cannot apply), alone or under the controller
// ConfigMap's rules, for the status writer: such an Ingress gets no
// address.
func (t *translateFlags) ingressRefused() func(*networkingv1.Ingress, *corev1.ConfigMap) bool {
	return ingress.RefusedWith(annotations.New(t.annotationsPrefix), t.options())
}
