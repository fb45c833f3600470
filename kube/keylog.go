package kube

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// keyLog records which objects of one kind changed between takes, by
// namespace and name, or that everything must be looked at again (the
// first take, and changes that touch every object, such as an
// IngressClass's). What comes before the first take is not recorded: that
// take is everything anyway (the informers' initial lists).
type keyLog struct {
	mu      sync.Mutex
	keys    map[types.NamespacedName]bool
	all     bool
	started bool
}

// changed records the object obj, as an informer's handler receives it
// (a tombstone on a delete whose last state was missed); one without a
// key makes the next take everything.
func (l *keyLog) changed(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	var ns, name string
	if err == nil {
		ns, name, err = cache.SplitMetaNamespaceKey(key)
	}
	if err != nil {
		l.everything()
		return
	}
	l.add(types.NamespacedName{Namespace: ns, Name: name})
}

// add records the object named key.
func (l *keyLog) add(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		return
	}
	if l.keys == nil {
		l.keys = map[types.NamespacedName]bool{}
	}
	l.keys[key] = true
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
