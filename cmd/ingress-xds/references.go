package main

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/kube"
)

// ingressReferences lists the Secrets and ConfigMaps an Ingress refers to
// beside spec.tls (through annotations), for serve's source and for
// translate -f alike: those, and no other Secret or ConfigMap, are handed
// to the translator. No annotation we support refers to one yet; the
// translator's annotations will answer here.
func ingressReferences(*networkingv1.Ingress) []kube.Reference { return nil }
