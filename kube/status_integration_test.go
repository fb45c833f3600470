package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestStatusAgainstAPIServer runs the status writer against a real API
// server, one address source per subtest. Each subtest has its own
// IngressClass and controller name, so the others' Ingresses are, to it,
// Ingresses owned by somebody else, and its own addresses, so it never
// touches them.
func TestStatusAgainstAPIServer(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)

	t.Run("static addresses and ownership changes", func(t *testing.T) {
		ns := "static"
		createNamespace(t, client, ns)
		createIngressClass(t, client, "static", "test.example/static")
		createIngressClass(t, client, "other", "test.example/other")
		filter := ClassFilter{ClassName: "static", ControllerName: "test.example/static"}

		createIngress(t, client, ns, "ours", "static")
		createIngress(t, client, ns, "theirs", "other")
		setIngressStatus(t, client, ns, "theirs", "192.0.2.99")
		createIngress(t, client, ns, "classless", "")
		createIngress(t, client, ns, "leaving", "static")

		addrs, err := NewStaticAddresses([]string{"lb.example.com", "192.0.2.1"})
		if err != nil {
			t.Fatal(err)
		}
		w := NewStatusWriter(client, filter, addrs, nil, 4, testLogger(t))
		runWriter(t, w, true)

		eventually(t, waitLong, "our ingress gets our addresses, IPs first", func() error {
			return statusIs(client, ns, "ours", "192.0.2.1", "lb.example.com")
		})
		eventually(t, waitLong, "leaving gets our addresses", func() error {
			return statusIs(client, ns, "leaving", "192.0.2.1", "lb.example.com")
		})
		ours, err := getIngress(client, ns, "ours")
		if err != nil {
			t.Fatal(err)
		}
		if ours.Labels["app"] != "ours" || ours.Annotations[corev1.LastAppliedConfigAnnotation] == "" {
			t.Errorf("writing status lost labels or annotations: labels %v, annotations %v", ours.Labels, ours.Annotations)
		}
		if err := statusIs(client, ns, "theirs", "192.0.2.99"); err != nil {
			t.Errorf("another controller's ingress: %v", err)
		}
		if err := statusIs(client, ns, "classless"); err != nil {
			t.Errorf("class-less ingress, and no default class: %v", err)
		}

		// "leaving" moves to the other class: our address goes.
		leaving, err := getIngress(client, ns, "leaving")
		if err != nil {
			t.Fatal(err)
		}
		leaving.Spec.IngressClassName = ptr.To("other")
		if _, err := client.NetworkingV1().Ingresses(ns).Update(context.Background(), leaving, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "an ingress that stops being ours loses our addresses", func() error {
			return statusIs(client, ns, "leaving")
		})
		// An Ingress of another class that carries our address next to its
		// controller's: ours goes, theirs stays.
		createIngress(t, client, ns, "shared", "other")
		setIngressStatus(t, client, ns, "shared", "192.0.2.1", "192.0.2.99")
		eventually(t, waitLong, "another controller's ingress loses our address only", func() error {
			return statusIs(client, ns, "shared", "192.0.2.99")
		})

		// Our class becomes the cluster default: the class-less Ingress is
		// ours now.
		class, err := client.NetworkingV1().IngressClasses().Get(context.Background(), "static", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		class.Annotations = map[string]string{defaultClassAnnotation: "true"}
		if _, err := client.NetworkingV1().IngressClasses().Update(context.Background(), class, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "class-less ingress is ours once our class is the default", func() error {
			return statusIs(client, ns, "classless", "192.0.2.1", "lb.example.com")
		})
		// And back: the default goes, so does our address.
		class, err = client.NetworkingV1().IngressClasses().Get(context.Background(), "static", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		class.Annotations = nil
		if _, err := client.NetworkingV1().IngressClasses().Update(context.Background(), class, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "class-less ingress loses our address when our class stops being the default", func() error {
			return statusIs(client, ns, "classless")
		})

		// Someone overwrites our status by hand: it is put back.
		setIngressStatus(t, client, ns, "ours", "198.51.100.7")
		eventually(t, waitLong, "a status changed behind our back is restored", func() error {
			return statusIs(client, ns, "ours", "192.0.2.1", "lb.example.com")
		})
		if err := statusIs(client, ns, "theirs", "192.0.2.99"); err != nil {
			t.Errorf("another controller's ingress after all that: %v", err)
		}
	})

	t.Run("service in front of envoy", func(t *testing.T) {
		ns := "svc"
		createNamespace(t, client, ns)
		createIngressClass(t, client, "svc", "test.example/svc")
		filter := ClassFilter{ClassName: "svc", ControllerName: "test.example/svc"}
		createIngress(t, client, ns, "web", "svc")

		svcName := types.NamespacedName{Namespace: ns, Name: "envoy"}
		addrs := &ServiceAddresses{Client: client, Service: svcName, Logger: testLogger(t)}
		w := NewStatusWriter(client, filter, addrs, nil, 2, testLogger(t))
		runWriter(t, w, true)

		// A Service that is not the one we were told about, with an address:
		// never used.
		decoy := loadBalancerService(ns, "envoy-decoy")
		decoy, err := client.CoreV1().Services(ns).Create(context.Background(), decoy, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setServiceLB(t, client, decoy, corev1.LoadBalancerIngress{IP: "198.51.100.200"})

		svc, err := client.CoreV1().Services(ns).Create(context.Background(), loadBalancerService(ns, "envoy"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc = setServiceLB(t, client, svc, corev1.LoadBalancerIngress{Hostname: "elb.example.com"}, corev1.LoadBalancerIngress{IP: "203.0.113.10"})
		eventually(t, waitLong, "ingress gets the service's load-balancer addresses", func() error {
			return statusIs(client, ns, "web", "203.0.113.10", "elb.example.com")
		})

		setServiceLB(t, client, svc, corev1.LoadBalancerIngress{IP: "203.0.113.11"})
		eventually(t, waitLong, "ingress follows a change of the service's addresses", func() error {
			return statusIs(client, ns, "web", "203.0.113.11")
		})

		if err := client.CoreV1().Services(ns).Delete(context.Background(), "envoy", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "ingress loses the address of a deleted service", func() error {
			return statusIs(client, ns, "web")
		})
	})

	t.Run("envoy daemonset pods and nodes", func(t *testing.T) {
		ns := "envoy-ds"
		createNamespace(t, client, ns)
		createNamespace(t, client, "elsewhere")
		createIngressClass(t, client, "ds", "test.example/ds")
		filter := ClassFilter{ClassName: "ds", ControllerName: "test.example/ds"}
		createIngress(t, client, ns, "web", "ds")
		// Left over from a time when an Envoy was ready.
		setIngressStatus(t, client, ns, "web", "198.51.100.50")

		// n1 has an ExternalIP, n2 only an InternalIP.
		createNode(t, client, "n1", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"})
		createNode(t, client, "n2", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.2"})
		createNode(t, client, "n3", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.3"})

		envoyLabels := map[string]string{"app.kubernetes.io/name": "envoy"}
		e1 := createPod(t, client, ns, "envoy-1", "n1", envoyLabels)
		e2 := createPod(t, client, ns, "envoy-2", "n2", envoyLabels)
		// Ready pods that are not Envoys of ours: wrong label, wrong namespace.
		setPodReady(t, client, createPod(t, client, ns, "not-envoy", "n3", map[string]string{"app.kubernetes.io/name": "other"}), "10.0.0.3", true)
		setPodReady(t, client, createPod(t, client, "elsewhere", "envoy-elsewhere", "n3", envoyLabels), "10.0.0.3", true)

		addrs := &DaemonSetAddresses{Client: client, Namespace: ns, Selector: labels.SelectorFromSet(envoyLabels), Logger: testLogger(t)}
		w := NewStatusWriter(client, filter, addrs, nil, 2, testLogger(t))
		runWriter(t, w, true)

		eventually(t, waitLong, "with no envoy ready, a stale address is cleared", func() error {
			return statusIs(client, ns, "web")
		})

		e1 = setPodReady(t, client, e1, "10.0.0.1", true)
		eventually(t, waitLong, "a ready envoy on a node with an ExternalIP publishes the ExternalIP", func() error {
			return statusIs(client, ns, "web", "203.0.113.1")
		})
		e2 = setPodReady(t, client, e2, "10.0.0.2", true)
		eventually(t, waitLong, "a ready envoy on a node without an ExternalIP publishes its host IP", func() error {
			return statusIs(client, ns, "web", "10.0.0.2", "203.0.113.1")
		})
		e1 = setPodReady(t, client, e1, "10.0.0.1", false)
		eventually(t, waitLong, "an envoy that becomes unready drops its address", func() error {
			return statusIs(client, ns, "web", "10.0.0.2")
		})

		node, err := client.CoreV1().Nodes().Get(context.Background(), "n2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.2"})
		if _, err := client.CoreV1().Nodes().UpdateStatus(context.Background(), node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "a node that gains an ExternalIP publishes it instead", func() error {
			return statusIs(client, ns, "web", "203.0.113.2")
		})

		e1 = setPodReady(t, client, e1, "10.0.0.1", true)
		eventually(t, waitLong, "an envoy ready again comes back", func() error {
			return statusIs(client, ns, "web", "203.0.113.1", "203.0.113.2")
		})

		// Without a kubelet, a deleted pod that is bound to a node stays,
		// terminating: it drops out at once.
		if err := client.CoreV1().Pods(ns).Delete(context.Background(), e2.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "a terminating envoy drops its address", func() error {
			return statusIs(client, ns, "web", "203.0.113.1")
		})
		if err := client.CoreV1().Pods(ns).Delete(context.Background(), e1.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitLong, "no envoy left, no address left", func() error {
			return statusIs(client, ns, "web")
		})
	})
}

func loadBalancerService(namespace, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app.kubernetes.io/name": "envoy"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
}

func setServiceLB(t *testing.T, client kubernetes.Interface, svc *corev1.Service, lb ...corev1.LoadBalancerIngress) *corev1.Service {
	t.Helper()
	svc = svc.DeepCopy()
	svc.Status.LoadBalancer.Ingress = lb
	updated, err := client.CoreV1().Services(svc.Namespace).UpdateStatus(context.Background(), svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("setting load-balancer status of service %s/%s: %v", svc.Namespace, svc.Name, err)
	}
	return updated
}

func createNode(t *testing.T, client kubernetes.Interface, name string, addresses ...corev1.NodeAddress) {
	t.Helper()
	node, err := client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	node.Status.Addresses = addresses
	if _, err := client.CoreV1().Nodes().UpdateStatus(context.Background(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting addresses of node %s: %v", name, err)
	}
}

// createPod creates a pod already bound to a node, as the scheduler would
// have it.
func createPod(t *testing.T, client kubernetes.Interface, namespace, name, node string, labels map[string]string) *corev1.Pod {
	t.Helper()
	pod, err := client.CoreV1().Pods(namespace).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "envoy", Image: "envoyproxy/envoy:v1.40.0"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", namespace, name, err)
	}
	return pod
}

// setPodReady sets a pod's Ready condition and host IP through the status
// subresource, as the kubelet would.
func setPodReady(t *testing.T, client kubernetes.Interface, pod *corev1.Pod, hostIP string, ready bool) *corev1.Pod {
	t.Helper()
	pod, err := client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP = hostIP
	pod.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	updated, err := client.CoreV1().Pods(pod.Namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("setting readiness of pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return updated
}
