package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ingress-xds/ingress-xds/xds"
)

// heapFlags are bootstrap's --max-heap and --memory-limit.
type heapFlags struct {
	maxHeap, memoryLimit quantityFlag
}

// bytes is the heap limit: --max-heap, else the heap's share of
// --memory-limit, else 0 (no overload manager).
func (h heapFlags) bytes() uint64 {
	if h.maxHeap.n > 0 {
		return h.maxHeap.n
	}
	return uint64(float64(h.memoryLimit.n) * xds.MemoryLimitHeapShare)
}

// quantityFlag is a size in bytes, written as Kubernetes writes resource
// quantities (1073741824, 1Gi, 900Mi, 1G): the Downward API gives a
// container's limit in bytes.
type quantityFlag struct {
	n   uint64
	raw string
}

func (q *quantityFlag) String() string { return q.raw }

func (q *quantityFlag) Set(s string) error {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a size (bytes, or a quantity like 900Mi): %w", s, err)
	}
	n, ok := v.AsInt64()
	if !ok || n <= 0 {
		return fmt.Errorf("%q: want a whole number of bytes above zero", s)
	}
	q.n, q.raw = uint64(n), s
	return nil
}
