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
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if !started {
		return // the first take is everything: the informer's initial list
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		l.everything()
		return
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		l.everything()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[types.NamespacedName]bool{}
	}
	l.keys[types.NamespacedName{Namespace: ns, Name: name}] = true
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
