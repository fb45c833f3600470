package ingress_test

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

const externalBlog = `
apiVersion: v1
kind: Service
metadata: {name: external-blog, namespace: default}
spec: {type: ExternalName, externalName: blog.example.org}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: blog, namespace: default}
spec:
  rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: external-blog, port: {number: 8443}}}}]}}]
`

// resolved sets what kube.ResolvingSource would: the verdict on the
// Service, the addresses as its endpoints.
func resolved(t *testing.T, verdict *kube.Resolution, addrs ...string) *kube.State {
	t.Helper()
	st := stateOf(t, externalBlog)
	name := types.NamespacedName{Namespace: "default", Name: "external-blog"}
	svc := *st.Services[name]
	svc.Resolved = verdict
	st.Services[name] = &svc
	if len(addrs) > 0 {
		st.EndpointSlices[name] = []*kube.EndpointSlice{{Namespace: "default", Name: "external-blog-externalname", Service: "external-blog",
			AddressType: discoveryv1.AddressTypeIPv4, Ready: addrs, AnyPort: true}}
	}
	return st
}

// With the control plane resolving names, Envoy gets the checked addresses
// as endpoints (at the Ingress's port) and never the name; a refused or
// unresolved name answers 503 with a problem.
func TestExternalNameResolvedByTheControlPlane(t *testing.T) {
	opts := ingress.Options{HTTPPort: 8080, EnableExternalName: true}
	out := ingress.NewBuilder(opts).Build(resolved(t, &kube.Resolution{}, "192.0.2.10"))
	if len(out.Problems) != 0 {
		t.Fatalf("problems: %v", out.Problems)
	}
	if len(out.Backends) != 1 || out.Backends[0].ExternalName != "" || len(out.Backends[0].Endpoints) != 1 ||
		out.Backends[0].Endpoints[0].Address != "192.0.2.10" || out.Backends[0].Endpoints[0].Port != 8443 {
		t.Fatalf("backends %+v, want 192.0.2.10:8443 and no name", out.Backends)
	}
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		verdict *kube.Resolution
		reason  string
	}{
		{&kube.Resolution{Refused: "resolves to 127.0.0.1, a loopback address"}, "ExternalNameRefused"},
		{&kube.Resolution{Err: "not resolved yet"}, "ExternalNameUnresolved"},
	} {
		out := ingress.NewBuilder(opts).Build(resolved(t, tc.verdict))
		if len(out.Problems) != 1 || out.Problems[0].Reason != tc.reason {
			t.Errorf("%+v: problems %v, want %s", tc.verdict, out.Problems, tc.reason)
		}
		if len(out.Backends) != 0 || len(out.VirtualHosts) != 1 || out.VirtualHosts[0].Routes[0].Action.Direct == nil {
			t.Errorf("%+v: backends %v, routes %v: want a 503", tc.verdict, out.Backends, out.VirtualHosts)
		}
	}
}

// With Options.ResolveNames, a Service the resolver has not seen yet is
// not sent to (never Envoy's own DNS meanwhile).
func TestExternalNameNotResolvedYetIsNotHandedToEnvoy(t *testing.T) {
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, EnableExternalName: true, ResolveNames: true}).Build(stateOf(t, externalBlog))
	if len(out.Problems) != 1 || out.Problems[0].Reason != "ExternalNameUnresolved" || len(out.Backends) != 0 {
		t.Errorf("problems %v, backends %v: want ExternalNameUnresolved and no backend", out.Problems, out.Backends)
	}
}
