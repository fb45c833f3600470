package kube

import "k8s.io/client-go/kubernetes"

// InformerOptions tune how the informers fill their caches.
type InformerOptions struct {
	// List fills each cache from one list per kind rather than from
	// client-go's default since 1.35, a watch that first sends every
	// object as an event of its own (WatchList). The list costs the
	// control plane less CPU to converge (docs/benchmarks.md, "Issue 18:
	// start-up", "The steps at 1,000 Ingresses"); it holds every object
	// of a kind, untrimmed, until the list is in, where the stream trims
	// each as it comes.
	List bool
}

// listingClient is a clientset whose informers list rather than stream:
// client-go's generated informers ask the client they are given whether
// it supports WatchList's semantics, and this one says it does not.
type listingClient struct {
	kubernetes.Interface
}

// IsWatchListSemanticsUnSupported is client-go's question
// (watchlist.DoesClientNotSupportWatchListSemantics).
func (listingClient) IsWatchListSemanticsUnSupported() bool { return true }
