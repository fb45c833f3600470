package load

import (
	"net/netip"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// The generator must produce exactly the workload the peer was measured
// with: per Ingress 2 hosts x 5 Prefix paths, each path to a Service of its
// own, each Service with one slice of 10 ready endpoints.
func TestWorkloadShape(t *testing.T) {
	w := Workload{N: 7, Namespace: "ns"}
	if got, want := w.Services(), 70; got != want {
		t.Fatalf("Services() = %d, want %d", got, want)
	}
	if got, want := w.Objects(), 2+7+70+70; got != want {
		t.Errorf("Objects() = %d, want %d", got, want)
	}
	if c := IngressClass(); c.Name != "ingress-xds" || c.Spec.Controller != "ingress-xds.io/controller" {
		t.Errorf("IngressClass is %s with controller %s", c.Name, c.Spec.Controller)
	}

	referenced := map[string]int{}
	hosts := map[string]bool{}
	for i := range w.N {
		ing := w.Ingress(i)
		if ing.Namespace != "ns" || ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != ClassName {
			t.Fatalf("Ingress %s: namespace %q, class %v", ing.Name, ing.Namespace, ing.Spec.IngressClassName)
		}
		if len(ing.Spec.Rules) != HostsPerIngress {
			t.Fatalf("Ingress %s has %d rules, want %d", ing.Name, len(ing.Spec.Rules), HostsPerIngress)
		}
		for _, rule := range ing.Spec.Rules {
			if hosts[rule.Host] {
				t.Errorf("host %s appears twice", rule.Host)
			}
			hosts[rule.Host] = true
			if len(rule.HTTP.Paths) != PathsPerHost {
				t.Fatalf("host %s has %d paths, want %d", rule.Host, len(rule.HTTP.Paths), PathsPerHost)
			}
			for _, p := range rule.HTTP.Paths {
				if *p.PathType != networkingv1.PathTypePrefix {
					t.Errorf("%s%s is %s, want Prefix", rule.Host, p.Path, *p.PathType)
				}
				if p.Backend.Service.Port.Number != servicePort {
					t.Errorf("%s%s goes to port %v, want the number %d", rule.Host, p.Path, p.Backend.Service.Port, servicePort)
				}
				referenced[p.Backend.Service.Name]++
			}
		}
	}
	if len(hosts) != len(w.AllHosts()) {
		t.Errorf("AllHosts has %d hosts, the Ingresses %d", len(w.AllHosts()), len(hosts))
	}
	for _, h := range w.AllHosts() {
		if !hosts[h] {
			t.Errorf("AllHosts lists %s, which no Ingress has", h)
		}
	}

	addresses := map[string]string{}
	for s := range w.Services() {
		svc := w.Service(s)
		if referenced[svc.Name] != 1 {
			t.Errorf("Service %s is referenced by %d paths, want exactly 1", svc.Name, referenced[svc.Name])
		}
		slice := w.EndpointSlice(s, EndpointsPerSlice)
		if slice.Labels[discoveryv1.LabelServiceName] != svc.Name {
			t.Errorf("slice %s belongs to %q, want %s", slice.Name, slice.Labels[discoveryv1.LabelServiceName], svc.Name)
		}
		if *slice.Ports[0].Name != svc.Spec.Ports[0].Name || *slice.Ports[0].Port != svc.Spec.Ports[0].TargetPort.IntVal {
			t.Errorf("slice %s port %s/%d does not match the Service's %v", slice.Name, *slice.Ports[0].Name, *slice.Ports[0].Port, svc.Spec.Ports[0])
		}
		if len(slice.Endpoints) != EndpointsPerSlice {
			t.Errorf("slice %s has %d endpoints, want %d", slice.Name, len(slice.Endpoints), EndpointsPerSlice)
		}
		for _, ep := range slice.Endpoints {
			if ep.Conditions.Ready == nil || !*ep.Conditions.Ready {
				t.Errorf("slice %s: endpoint %v not ready", slice.Name, ep.Addresses)
			}
			a := ep.Addresses[0]
			if other, dup := addresses[a]; dup {
				t.Errorf("address %s in both %s and %s", a, other, slice.Name)
			}
			addresses[a] = slice.Name
			if ip := netip.MustParseAddr(a); !netip.MustParsePrefix("10.0.0.0/8").Contains(ip) {
				t.Errorf("address %s outside 10.0.0.0/8", a)
			}
		}
	}
	if len(referenced) != w.Services() {
		t.Errorf("the Ingresses reference %d Services, want %d", len(referenced), w.Services())
	}
}

// The addresses of 10,000 Ingresses, and those endpoint changes add, must
// all be distinct and stay inside 10.0.0.0/8.
func TestEndpointAddressesAtFullScale(t *testing.T) {
	last := (Workload{N: 10000}).Services() - 1
	if got, want := EndpointAddress(0, 1), "10.0.0.1"; got != want {
		t.Errorf("first address %s, want %s", got, want)
	}
	if got, want := EndpointAddress(1, 1), "10.0.0.17"; got != want {
		t.Errorf("Service 1's first address %s, want %s", got, want)
	}
	if got := netip.MustParseAddr(EndpointAddress(last, addressesPerService-1)); !netip.MustParsePrefix("10.0.0.0/8").Contains(got) {
		t.Errorf("last address %s outside 10.0.0.0/8", got)
	}
	if EndpointAddress(last, addressesPerService-1) == EndpointAddress(last-1, 1) {
		t.Error("addresses of neighbouring Services overlap")
	}
}

// Translated by our own translator, the workload is what the measurements
// wait for: a virtual host per host, a cluster and a load assignment of 10
// endpoints per Service, and no problem reported.
func TestWorkloadTranslates(t *testing.T) {
	w := Workload{N: 3, Namespace: "ns"}
	st := kube.NewState()
	for s := range w.Services() {
		svc := w.Service(s)
		key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
		st.Services[key] = kube.NewService(svc)
		st.EndpointSlices[key] = []*kube.EndpointSlice{kube.NewEndpointSlice(w.EndpointSlice(s, EndpointsPerSlice))}
	}
	for i := range w.N {
		st.Ingresses = append(st.Ingresses, w.Ingress(i))
	}
	res, err := translate.Translate(st, translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) > 0 {
		t.Errorf("problems: %+v", res.Problems)
	}
	var vhosts []string
	for _, rc := range res.Resources.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			vhosts = append(vhosts, vh.GetDomains()...)
		}
	}
	if len(vhosts) != len(w.AllHosts()) {
		t.Errorf("%d virtual host domains, want %d", len(vhosts), len(w.AllHosts()))
	}
	if len(res.Resources.Clusters) != w.Services() || len(res.Resources.Endpoints) != w.Services() {
		t.Errorf("%d clusters and %d load assignments, want %d of each", len(res.Resources.Clusters), len(res.Resources.Endpoints), w.Services())
	}
	for _, la := range res.Resources.Endpoints {
		cla := proto.Clone(la).(*endpointv3.ClusterLoadAssignment) // kept encoded
		n := 0
		for _, l := range cla.GetEndpoints() {
			n += len(l.GetLbEndpoints())
		}
		if n != EndpointsPerSlice {
			t.Errorf("%s has %d endpoints, want %d", cla.GetClusterName(), n, EndpointsPerSlice)
		}
	}
}

func TestChangeIngressHasNewHosts(t *testing.T) {
	w := Workload{N: 5, Namespace: "ns"}
	existing := map[string]bool{}
	for _, h := range w.AllHosts() {
		existing[h] = true
	}
	a, b := w.ChangeIngress("run1", 0, 2), w.ChangeIngress("run1", 1, 2)
	if a.Name == b.Name || a.Name == w.ChangeIngress("run2", 0, 2).Name {
		t.Errorf("change Ingress names collide: %s, %s", a.Name, b.Name)
	}
	for _, r := range a.Spec.Rules {
		if existing[r.Host] {
			t.Errorf("change host %s already in the workload", r.Host)
		}
	}
	// Same backends as workload Ingress 2: only the hosts are new.
	want := w.Ingress(2)
	for h := range a.Spec.Rules {
		for p := range a.Spec.Rules[h].HTTP.Paths {
			if got, want := a.Spec.Rules[h].HTTP.Paths[p].Backend, want.Spec.Rules[h].HTTP.Paths[p].Backend; got.Service.Name != want.Service.Name {
				t.Errorf("rule %d path %d goes to %s, want %s", h, p, got.Service.Name, want.Service.Name)
			}
		}
	}
}

// -annotated-every N gives every Nth Ingress a set of annotations the
// translator honours, in turn, and changes neither the counts nor the
// other Ingresses: the translation has the same clusters and load
// assignments, and no problem.
func TestAnnotatedWorkload(t *testing.T) {
	plain := Workload{N: 16, Namespace: "ns"}
	annotated := Workload{N: 16, Namespace: "ns", AnnotatedEvery: 4}
	for i := range annotated.N {
		got := annotated.Ingress(i).Annotations
		if (i%4 == 0) != (len(got) > 0) {
			t.Errorf("Ingress %d: annotations %v", i, got)
		}
		if len(plain.Ingress(i).Annotations) != 0 {
			t.Errorf("plain Ingress %d has annotations", i)
		}
	}
	pr, err := translate.Translate(plain.State(), translate.Options{HTTPPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := translate.Translate(annotated.State(), translate.Options{HTTPPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if len(ar.Problems) != 0 {
		t.Errorf("the annotation mix has problems: %v", ar.Problems)
	}
	if len(ar.Resources.Clusters) != len(pr.Resources.Clusters) || len(ar.Resources.Endpoints) != len(pr.Resources.Endpoints) {
		t.Errorf("annotations changed the counts: %d/%d clusters, %d/%d load assignments",
			len(ar.Resources.Clusters), len(pr.Resources.Clusters), len(ar.Resources.Endpoints), len(pr.Resources.Endpoints))
	}
	if proto.Equal(ar.Resources.Routes[0], pr.Resources.Routes[0]) {
		t.Error("the annotations changed no route")
	}
}
