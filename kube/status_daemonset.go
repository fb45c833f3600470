package kube

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// DaemonSetAddresses is the default AddressSource, for Envoys that take
// traffic on host ports: the addresses of the nodes that run a Ready Envoy
// pod. A node's ExternalIP is preferred, as that is what clients outside the
// cluster can reach; without one, the pod's host IPs are used.
//
// Pods are watched in one namespace with the Envoy label selector, so the
// API server sends only Envoy pods; Nodes are watched whole (there is no
// selector for "nodes that run these pods"), trimmed to their addresses.
type DaemonSetAddresses struct {
	Client    kubernetes.Interface
	Namespace string
	Selector  labels.Selector
	Logger    *slog.Logger

	addresses addressTracker
}

var _ AddressSource = (*DaemonSetAddresses)(nil)

// Run implements AddressSource.
func (s *DaemonSetAddresses) Run(ctx context.Context, changed func()) error {
	if s.Selector == nil || s.Selector.Empty() {
		// Every pod of the namespace would count as an Envoy.
		return fmt.Errorf("envoy pod selector is empty")
	}
	podFactory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0,
		informers.WithNamespace(s.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s.Selector.String() }),
		informers.WithTransform(trimPodForStatus))
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0,
		informers.WithTransform(trimNodeForStatus))
	podInformer := podFactory.Core().V1().Pods().Informer()
	nodeInformer := nodeFactory.Core().V1().Nodes().Informer()
	pods := podFactory.Core().V1().Pods().Lister()
	nodes := nodeFactory.Core().V1().Nodes().Lister()

	update := func() {
		changedNow, err := s.addresses.refresh(func() ([]networkingv1.IngressLoadBalancerIngress, error) {
			return envoyNodeAddresses(pods.Pods(s.Namespace), nodes)
		})
		if err != nil {
			s.logger().Error("listing envoy pods", "err", err)
			return
		}
		if changedNow {
			s.logger().Info("status addresses from envoy pods", "namespace", s.Namespace, "selector", s.Selector.String(), "addresses", formatAddresses(s.addresses.get()))
			changed()
		}
	}
	synced := func() bool { return podInformer.HasSynced() && nodeInformer.HasSynced() }
	for _, inf := range []cache.SharedIndexInformer{podInformer, nodeInformer} {
		if _, err := inf.AddEventHandler(onSyncedChange(synced, update)); err != nil {
			return fmt.Errorf("adding event handler: %w", err)
		}
	}
	podFactory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	defer podFactory.Shutdown()
	defer nodeFactory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, nodeInformer.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("envoy pods and nodes: caches did not sync")
	}
	update()
	<-ctx.Done()
	return nil
}

// Addresses implements AddressSource.
func (s *DaemonSetAddresses) Addresses() []networkingv1.IngressLoadBalancerIngress {
	return s.addresses.get()
}

func (s *DaemonSetAddresses) logger() *slog.Logger { return loggerOr(s.Logger) }

// envoyNodeAddresses returns the addresses of the nodes that run a Ready,
// not terminating Envoy pod. A terminating pod is left out at once, without
// waiting for it to turn unready: its preStop hook is draining it.
func envoyNodeAddresses(pods corelisters.PodNamespaceLister, nodes corelisters.NodeLister) ([]networkingv1.IngressLoadBalancerIngress, error) {
	all, err := pods.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var list []networkingv1.IngressLoadBalancerIngress
	for _, pod := range all {
		if pod.DeletionTimestamp != nil || !podReady(pod) || pod.Spec.NodeName == "" {
			continue
		}
		var external []string
		if node, err := nodes.Get(pod.Spec.NodeName); err == nil {
			for _, a := range node.Status.Addresses {
				if a.Type == corev1.NodeExternalIP && a.Address != "" {
					external = append(external, a.Address)
				}
			}
		}
		if len(external) == 0 {
			external = hostIPs(pod)
		}
		for _, ip := range external {
			list = append(list, networkingv1.IngressLoadBalancerIngress{IP: ip})
		}
	}
	return normalizeAddresses(list), nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hostIPs returns every host IP of a pod (both families on a dual-stack
// node), falling back to the single hostIP older kubelets report.
func hostIPs(pod *corev1.Pod) []string {
	var out []string
	for _, h := range pod.Status.HostIPs {
		if h.IP != "" {
			out = append(out, h.IP)
		}
	}
	if len(out) == 0 && pod.Status.HostIP != "" {
		out = append(out, pod.Status.HostIP)
	}
	return out
}

// trimPodForStatus keeps only what envoyNodeAddresses reads: Envoy pods
// carry large specs we never look at.
func trimPodForStatus(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	var ready []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = append(ready, corev1.PodCondition{Type: c.Type, Status: c.Status})
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, ResourceVersion: pod.ResourceVersion,
			DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec:   corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{Conditions: ready, HostIP: pod.Status.HostIP, HostIPs: pod.Status.HostIPs},
	}, nil
}

// trimNodeForStatus keeps a Node's name and addresses: node objects are large
// (images, conditions, capacity) and there may be thousands.
func trimNodeForStatus(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, ResourceVersion: node.ResourceVersion},
		Status:     corev1.NodeStatus{Addresses: node.Status.Addresses},
	}, nil
}
