package kube

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// GatewayServices against a real API server: a Service per Gateway, made,
// brought back to what is wanted when a port changes, left alone when
// nothing does, deleted once its Gateway is gone; each with its cluster
// IP as the Gateway's address.
func TestGatewayServices(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(startAPIServer(t))
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &GatewayServices{Client: client, Namespace: "ingress-xds", Selector: map[string]string{"app.kubernetes.io/name": "envoy"},
		Type: corev1.ServiceTypeClusterIP, Logger: slog.New(slog.DiscardHandler)}
	get := func(gateway string) *corev1.Service {
		t.Helper()
		svc, err := client.CoreV1().Services("ingress-xds").Get(ctx, GatewayServiceName(gateway), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the Service of %s: %v", gateway, err)
		}
		return svc
	}
	want := map[string]GatewayService{"a/one": {Ports: map[uint32]uint32{80: 22417}}, "b/one": {Ports: map[uint32]uint32{80: 29507, 8080: 23285}}}
	if err := s.Sync(ctx, want); err != nil {
		t.Fatal(err)
	}
	one, other := get("a/one"), get("b/one")
	if one.Name == other.Name {
		t.Fatalf("two Gateways of one name share Service %s", one.Name)
	}
	if p := other.Spec.Ports; len(p) != 2 || p[0].Port != 80 || p[0].TargetPort.IntValue() != 29507 || p[1].Port != 8080 || p[1].TargetPort.IntValue() != 23285 {
		t.Errorf("b/one's ports: %+v", p)
	}
	if got := GatewayServiceAddresses(one); len(got) != 1 || got[0] != one.Spec.ClusterIP {
		t.Errorf("a/one's addresses %v, want its cluster IP %s", got, one.Spec.ClusterIP)
	}
	version := one.ResourceVersion

	want["b/one"] = GatewayService{Ports: map[uint32]uint32{80: 29507}}
	if err := s.Sync(ctx, want); err != nil {
		t.Fatal(err)
	}
	if p := get("b/one").Spec.Ports; len(p) != 1 || p[0].Port != 80 {
		t.Errorf("b/one's ports after 8080 went: %+v", p)
	}
	if v := get("a/one").ResourceVersion; v != version {
		t.Errorf("a/one's Service was written again with nothing changed (%s, was %s)", v, version)
	}

	delete(want, "a/one")
	if err := s.Sync(ctx, want); err != nil {
		t.Fatal(err)
	}
	list, err := client.CoreV1().Services("ingress-xds").List(ctx, metav1.ListOptions{LabelSelector: GatewayServiceLabel + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Annotations[GatewayServiceAnnotation] != "b/one" {
		t.Errorf("after a/one went, the Gateways' Services are %v", list.Items)
	}
}

// A Gateway's Service's address and its first ready Envoy come after the
// Service is made (a load balancer's address, the endpoint controller's
// slices): Watch tells of each, and Addresses waits for both.
func TestGatewayServicesWatch(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(startAPIServer(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &GatewayServices{Client: client, Namespace: "ingress-xds", Selector: map[string]string{"app.kubernetes.io/name": "envoy"},
		Type: corev1.ServiceTypeLoadBalancer, Logger: slog.New(slog.DiscardHandler)}
	changed := make(chan string, 100)
	if err := s.Watch(ctx, func(gateway string) { changed <- gateway }); err != nil {
		t.Fatal(err)
	}
	// waitFor waits for Watch to tell of gateway and for Addresses to
	// say what is wanted of it.
	waitFor := func(gateway string, ok func(addresses []string, pending string) bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			addresses, pending, err := s.Addresses(gateway)
			if err != nil {
				t.Fatal(err)
			}
			if ok(addresses, pending) {
				return
			}
			select {
			case <-changed:
			case <-timeout:
				t.Fatalf("%s: addresses %v, pending %q", gateway, addresses, pending)
			}
		}
	}
	if _, pending, _ := s.Addresses("a/one"); !strings.Contains(pending, "not made yet") {
		t.Errorf("before Sync, a/one pending %q", pending)
	}
	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: map[uint32]uint32{80: 22417}}}); err != nil {
		t.Fatal(err)
	}
	waitFor("a/one", func(_ []string, pending string) bool { return strings.Contains(pending, "no Envoy is ready") })

	// What the endpoint controller would write (envtest runs none): the
	// Service's labels and its name.
	name := GatewayServiceName("a/one")
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-abcde", Namespace: "ingress-xds",
			Labels: map[string]string{GatewayServiceLabel: "true", "kubernetes.io/service-name": name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
	if _, err := client.DiscoveryV1().EndpointSlices("ingress-xds").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("a/one", func(_ []string, pending string) bool { return strings.Contains(pending, "has no address yet") })

	svc, err := client.CoreV1().Services("ingress-xds").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}}
	if _, err := client.CoreV1().Services("ingress-xds").UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("a/one", func(addresses []string, pending string) bool {
		return pending == "" && len(addresses) == 1 && addresses[0] == "203.0.113.9"
	})
}

// A Gateway's spec.addresses pin its ClusterIP Service's cluster IP: the
// first the API server grants; one outside the Service network is
// refused, the Service made with an IP of the API server's choosing and
// not made again until other addresses are asked for; asking anew for
// a grantable one makes the Service again with it.
func TestGatewayServicesPinned(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(startAPIServer(t))
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The kubernetes Service holds the Service network's first address;
	// dynamic allocation leaves the network's lower band alone. The API
	// server makes it in the background once it has started.
	var api *corev1.Service
	eventually(t, waitLong, "the API server's kubernetes Service", func() (err error) {
		api, err = client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err
	})
	first := netip.MustParseAddr(api.Spec.ClusterIP)
	grantable := first.Next().Next().Next().String()
	const outside = "198.51.100.254" // TEST-NET-2
	s := &GatewayServices{Client: client, Namespace: "ingress-xds", Selector: map[string]string{"app.kubernetes.io/name": "envoy"},
		Type: corev1.ServiceTypeClusterIP, Logger: slog.New(slog.DiscardHandler)}
	ports := map[uint32]uint32{80: 22417}
	get := func() *corev1.Service {
		t.Helper()
		svc, err := client.CoreV1().Services("ingress-xds").Get(ctx, GatewayServiceName("a/one"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}

	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: ports, Addresses: []string{outside, grantable}}}); err != nil {
		t.Fatal(err)
	}
	if ip := get().Spec.ClusterIP; ip != grantable {
		t.Fatalf("asked for %s then %s: cluster IP %s", outside, grantable, ip)
	}

	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: ports, Addresses: []string{outside}}}); err != nil {
		t.Fatal(err)
	}
	refused := get()
	if refused.Spec.ClusterIP == outside || refused.Spec.ClusterIP == "" {
		t.Fatalf("asked for %s alone: cluster IP %q", outside, refused.Spec.ClusterIP)
	}
	if got := GatewayServiceAddresses(refused); len(got) != 1 || got[0] == outside {
		t.Errorf("addresses %v", got)
	}
	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: map[uint32]uint32{80: 22417, 443: 20001}, Addresses: []string{outside}}}); err != nil {
		t.Fatal(err)
	}
	if again := get(); again.UID != refused.UID || again.Spec.ClusterIP != refused.Spec.ClusterIP {
		t.Errorf("the Service was made again for the address refused before (%s, was %s)", again.Spec.ClusterIP, refused.Spec.ClusterIP)
	}

	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: ports, Addresses: []string{grantable}}}); err != nil {
		t.Fatal(err)
	}
	if ip := get().Spec.ClusterIP; ip != grantable {
		t.Errorf("asked for %s again: cluster IP %s", grantable, ip)
	}
}

// A Gateway's spec.infrastructure labels and annotations go on its
// Service, with Gateway API's gateway-name label; one the Gateway no
// longer asks for is taken off, one another controller put on is left,
// and a Gateway cannot take over the Service's own.
func TestGatewayServicesInfrastructure(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(startAPIServer(t))
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &GatewayServices{Client: client, Namespace: "ingress-xds", Selector: map[string]string{"app.kubernetes.io/name": "envoy"},
		Type: corev1.ServiceTypeClusterIP, Logger: slog.New(slog.DiscardHandler)}
	ports := map[uint32]uint32{80: 22417}
	services := client.CoreV1().Services("ingress-xds")
	get := func() *corev1.Service {
		t.Helper()
		svc, err := services.Get(ctx, GatewayServiceName("a/one"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: ports,
		Labels:      map[string]string{"team": "web", GatewayServiceLabel: "false"},
		Annotations: map[string]string{"lb.example.com/internal": "true", "old": "x", GatewayServiceAnnotation: "b/two"}}}); err != nil {
		t.Fatal(err)
	}
	svc := get()
	if l := svc.Labels; l["team"] != "web" || l[GatewayServiceLabel] != "true" || l["gateway.networking.k8s.io/gateway-name"] != "one" {
		t.Errorf("labels %v", l)
	}
	if a := svc.Annotations; a["lb.example.com/internal"] != "true" || a["old"] != "x" || a[GatewayServiceAnnotation] != "a/one" {
		t.Errorf("annotations %v", a)
	}

	// Another controller's annotation.
	svc.Annotations["cloud.example.com/id"] = "lb-1"
	if _, err := services.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: ports,
		Labels: map[string]string{"team": "api"}, Annotations: map[string]string{"lb.example.com/internal": "true"}}}); err != nil {
		t.Fatal(err)
	}
	svc = get()
	if l := svc.Labels; l["team"] != "api" {
		t.Errorf("labels after team changed: %v", l)
	}
	if a := svc.Annotations; a["old"] != "" || a["cloud.example.com/id"] != "lb-1" || a["lb.example.com/internal"] != "true" {
		t.Errorf("annotations after old went: %v", a)
	}
	version := svc.ResourceVersion
	if err := s.Sync(ctx, map[string]GatewayService{"a/one": {Ports: ports,
		Labels: map[string]string{"team": "api"}, Annotations: map[string]string{"lb.example.com/internal": "true"}}}); err != nil {
		t.Fatal(err)
	}
	if v := get().ResourceVersion; v != version {
		t.Errorf("written again with nothing changed (%s, was %s)", v, version)
	}
}
