package kube

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// keyLog records which objects of one kind changed between takes, by
// namespace and name, or that everything must be listed again (the first
// take, and changes that touch every object, such as an IngressClass's).
type keyLog struct {
	mu      sync.Mutex
	keys    map[types.NamespacedName]bool
	all     bool
	started bool
}

// changed records the object obj, as an informer's handler receives it
// (a tombstone on a delete whose last state was missed).
func (l *keyLog) changed(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	var ns, name string
	if err == nil {
		ns, name, err = cache.SplitMetaNamespaceKey(key)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !l.started:
		// The first take is everything: the informer's initial list.
	case err != nil:
		l.all = true
	default:
		if l.keys == nil {
			l.keys = map[types.NamespacedName]bool{}
		}
		l.keys[types.NamespacedName{Namespace: ns, Name: name}] = true
	}
}

func (l *keyLog) everything() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = true
}

// take returns what was recorded since the previous take: the keys, or
// all (true) when everything is to be listed again.
func (l *keyLog) take() (map[types.NamespacedName]bool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys, all := l.keys, l.all || !l.started
	l.keys, l.all, l.started = nil, false, true
	return keys, all
}
