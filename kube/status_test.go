package kube

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestNewStaticAddresses(t *testing.T) {
	got, err := NewStaticAddresses([]string{"lb.example.com", "2001:db8::1", "192.0.2.10", "192.0.2.9", "192.0.2.10"})
	if err != nil {
		t.Fatal(err)
	}
	// Sorted (IPs numerically, v4 first, then hostnames) and deduplicated,
	// so that the same flag always gives the same status.
	want := "[192.0.2.9 192.0.2.10 2001:db8::1 lb.example.com]"
	if s := fmt.Sprint(formatAddresses(got.Addresses())); s != want {
		t.Errorf("addresses %s, want %s", s, want)
	}
	if a := got.Addresses(); a[0].IP != "192.0.2.9" || a[0].Hostname != "" || a[3].Hostname != "lb.example.com" || a[3].IP != "" {
		t.Errorf("IPs must go to ip and names to hostname: %+v", a)
	}
	for _, bad := range [][]string{nil, {"not a name"}, {"http://lb.example.com"}, {"lb.example.com:80"}} {
		if _, err := NewStaticAddresses(bad); err == nil {
			t.Errorf("NewStaticAddresses(%q) accepted", bad)
		}
	}
}

func TestDesiredStatus(t *testing.T) {
	lb := func(addrs ...string) []networkingv1.IngressLoadBalancerIngress {
		var out []networkingv1.IngressLoadBalancerIngress
		for _, a := range addrs {
			if a[0] >= '0' && a[0] <= '9' {
				out = append(out, networkingv1.IngressLoadBalancerIngress{IP: a})
			} else {
				out = append(out, networkingv1.IngressLoadBalancerIngress{Hostname: a})
			}
		}
		return out
	}
	ours := lb("192.0.2.1", "lb.example.com")
	cases := []struct {
		name    string
		current []networkingv1.IngressLoadBalancerIngress
		owned   bool
		want    []networkingv1.IngressLoadBalancerIngress
	}{
		{"owned, empty", nil, true, ours},
		{"owned, someone else's address replaced", lb("198.51.100.1"), true, ours},
		{"owned, right already", ours, true, ours},
		{"not owned, never ours", lb("198.51.100.1"), false, lb("198.51.100.1")},
		{"not owned, ours removed, theirs kept", lb("192.0.2.1", "198.51.100.1", "lb.example.com"), false, lb("198.51.100.1")},
		{"not owned, only ours", ours, false, nil},
		{"not owned, same IP as hostname is not ours", lb("other.example.com"), false, lb("other.example.com")},
	}
	for _, c := range cases {
		got := desiredStatus(c.current, ours, c.owned)
		if !sameAddresses(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, formatAddresses(got), formatAddresses(c.want))
		}
	}
}

// TestTrimKeepsOwnership guards the status writer's trimmed cache against
// ClassFilter starting to read a field the trim drops: ownership decided
// from trimmed objects must match ownership decided from whole ones.
func TestTrimKeepsOwnership(t *testing.T) {
	classes := []*networkingv1.IngressClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "mine", Annotations: map[string]string{defaultClassAnnotation: "true", "x": "y"}},
			Spec: networkingv1.IngressClassSpec{Controller: "test.example/mine", Parameters: &networkingv1.IngressClassParametersReference{Kind: "K", Name: "p"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "alias"}, Spec: networkingv1.IngressClassSpec{Controller: "test.example/mine"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}, Spec: networkingv1.IngressClassSpec{Controller: "test.example/theirs"}},
	}
	ing := func(name string, class *string, annotations map[string]string) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Annotations: annotations, Labels: map[string]string{"a": "b"}},
			Spec: networkingv1.IngressSpec{IngressClassName: class, Rules: []networkingv1.IngressRule{{Host: "x.example.com"}},
				TLS: []networkingv1.IngressTLS{{SecretName: "s"}}},
		}
	}
	ingresses := []*networkingv1.Ingress{
		ing("by-name", ptr.To("mine"), nil),
		ing("by-controller", ptr.To("alias"), nil),
		ing("other-class", ptr.To("theirs"), nil),
		ing("legacy-ours", nil, map[string]string{legacyClassAnnotation: "mine"}),
		ing("legacy-theirs", nil, map[string]string{legacyClassAnnotation: "theirs"}),
		ing("classless", nil, map[string]string{"unrelated": "x"}),
	}
	for _, filter := range []ClassFilter{
		{ClassName: "mine", ControllerName: "test.example/mine"},
		{ClassName: "theirs", ControllerName: "test.example/theirs"},
		{ClassName: "mine", ControllerName: "test.example/mine", WatchClassless: true},
	} {
		var trimmedIngresses []*networkingv1.Ingress
		var trimmedClasses []*networkingv1.IngressClass
		for _, i := range ingresses {
			obj, _ := trimForStatus(i.DeepCopy())
			trimmedIngresses = append(trimmedIngresses, obj.(*networkingv1.Ingress))
		}
		for _, c := range classes {
			obj, _ := trimForStatus(c.DeepCopy())
			trimmedClasses = append(trimmedClasses, obj.(*networkingv1.IngressClass))
		}
		whole := names(filter.Owned(ingresses, classes))
		trimmed := names(filter.Owned(trimmedIngresses, trimmedClasses))
		if whole != trimmed {
			t.Errorf("filter %+v: owns %s of whole objects but %s of trimmed ones", filter, whole, trimmed)
		}
	}
	obj, _ := trimForStatus(ingresses[0].DeepCopy())
	if trimmed := obj.(*networkingv1.Ingress); len(trimmed.Spec.Rules) != 0 || trimmed.Labels != nil {
		t.Errorf("trim kept rules or labels: %+v", trimmed)
	}
}

func names(ingresses []*networkingv1.Ingress) string {
	var out []string
	for _, i := range ingresses {
		out = append(out, i.Name)
	}
	return fmt.Sprint(out)
}

func TestEnvoyNodeAddresses(t *testing.T) {
	podIndex := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	nodeIndex := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	node := func(name string, addrs ...corev1.NodeAddress) {
		obj, _ := trimNodeForStatus(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
			Addresses: addrs, Images: []corev1.ContainerImage{{Names: []string{"big"}}}}})
		nodeIndex.Add(obj)
	}
	pod := func(name, nodeName string, ready bool, hostIPs ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "envoy"}, Spec: corev1.PodSpec{NodeName: nodeName}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: status}}
		for _, ip := range hostIPs {
			p.Status.HostIPs = append(p.Status.HostIPs, corev1.HostIP{IP: ip})
		}
		if len(hostIPs) > 0 {
			p.Status.HostIP = hostIPs[0]
		}
		return p
	}
	add := func(p *corev1.Pod) {
		obj, _ := trimPodForStatus(p)
		podIndex.Add(obj)
	}
	node("external", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"})
	node("internal", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.2"})
	node("dual", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.3"})
	add(pod("on-external", "external", true, "10.0.0.1"))
	add(pod("on-internal", "internal", true, "10.0.0.2"))
	add(pod("on-dual", "dual", true, "10.0.0.3", "fd00::3"))
	add(pod("on-unknown-node", "missing", true, "10.0.0.4"))
	add(pod("unready", "internal", false, "10.0.0.9"))
	add(pod("unscheduled", "", true))
	terminating := pod("terminating", "internal", true, "10.0.0.8")
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	add(terminating)
	add(pod("twin-on-external", "external", true, "10.0.0.1")) // two Envoys on one node: one address

	got, err := envoyNodeAddresses(corelisters.NewPodLister(podIndex).Pods("envoy"), corelisters.NewNodeLister(nodeIndex))
	if err != nil {
		t.Fatal(err)
	}
	want := "[10.0.0.2 10.0.0.3 10.0.0.4 203.0.113.1 fd00::3]"
	if s := fmt.Sprint(formatAddresses(got)); s != want {
		t.Errorf("addresses %s, want %s", s, want)
	}
}
