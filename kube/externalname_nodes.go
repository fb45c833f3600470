package kube

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// NodeAddresses keeps the addresses of the cluster's Nodes, which an
// ExternalName Service must not resolve to: Envoy runs on them, and a node's
// own listeners (the kubelet, node-local services) are not an Ingress's to
// reach. Its informer holds only the addresses.
type NodeAddresses struct {
	Client kubernetes.Interface

	mu     sync.Mutex
	lister corelisters.NodeLister
}

// Run watches Nodes until ctx is done.
func (n *NodeAddresses) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(n.Client, 0, informers.WithTransform(trimNode))
	inf := factory.Core().V1().Nodes()
	informer := inf.Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("node addresses: %w", ctx.Err())
	}
	n.mu.Lock()
	n.lister = inf.Lister()
	n.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Addresses lists every IP address of every Node (none before the first
// sync).
func (n *NodeAddresses) Addresses() []netip.Addr {
	n.mu.Lock()
	lister := n.lister
	n.mu.Unlock()
	if lister == nil {
		return nil
	}
	nodes, err := lister.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, node := range nodes {
		for _, a := range node.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

// trimNode keeps a Node's name and IP addresses.
func trimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name, ResourceVersion: node.ResourceVersion}}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
			out.Status.Addresses = append(out.Status.Addresses, a)
		}
	}
	return out, nil
}

// Client is the client the factories read through; nil on nil factories
// (file mode).
func (f *InformerFactories) Client() kubernetes.Interface {
	if f == nil {
		return nil
	}
	return f.client
}
