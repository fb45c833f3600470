package ingress_test

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

func stateOf(t *testing.T, manifests string) *kube.State {
	t.Helper()
	return stateWith(t, manifests, nil)
}

// stateWith is stateOf with the Secrets and ConfigMaps references names.
func stateWith(t *testing.T, manifests string, references func(*networkingv1.Ingress) []kube.Reference) *kube.State {
	t.Helper()
	st, err := kube.ManifestState(strings.NewReader(manifests), "test", kube.ClassFilter{WatchClassless: true}, kube.Refs{Ingress: references})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// An ExternalName Service needs no ports (Kubernetes does not ask for
// any): the Ingress's port number is the port of the name, as ingress-nginx
// has it. This is the smallest example a user of ingress-nginx tries.
func TestExternalNameWithoutPortsUsesTheIngressPort(t *testing.T) {
	st := stateOf(t, `
apiVersion: v1
kind: Service
metadata: {name: external-blog, namespace: default}
spec: {type: ExternalName, externalName: blog.example.org}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: blog, namespace: default, annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}}
spec:
  rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: external-blog, port: {number: 80}}}}]}}]
`)
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, EnableExternalName: true}).Build(st)
	if len(out.Problems) != 0 {
		t.Fatalf("problems: %v", out.Problems)
	}
	if len(out.Backends) != 1 || out.Backends[0].ExternalName != "blog.example.org" || out.Backends[0].Port != 80 {
		t.Fatalf("backends: %+v", out.Backends)
	}
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	// A port name cannot be resolved without ports: still a 503, told.
	st = stateOf(t, strings.Replace(`
apiVersion: v1
kind: Service
metadata: {name: external-blog, namespace: default}
spec: {type: ExternalName, externalName: blog.example.org}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: blog, namespace: default}
spec:
  rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: external-blog, port: {number: 80}}}}]}}]
`, "{number: 80}", "{name: http}", 1))
	out = ingress.NewBuilder(ingress.Options{HTTPPort: 8080, EnableExternalName: true}).Build(st)
	if len(out.Problems) != 1 || out.Problems[0].Reason != "ServicePortNotFound" {
		t.Fatalf("a port name on a Service without ports: problems %v", out.Problems)
	}
}
