package kube

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Objects is the set of Kubernetes objects a State is built from, before class
// filtering. Both the file source and the informer source produce it.
type Objects struct {
	Ingresses      []*networkingv1.Ingress
	IngressClasses []*networkingv1.IngressClass
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	Secrets        []*corev1.Secret // of every type
	ConfigMaps     []*corev1.ConfigMap
	// Gateway holds the Gateway API objects (gatewayapi.go).
	Gateway GatewayObjects
}

// State builds the translator's view: the Ingresses the filter owns (sorted
// by namespace/name so that output never depends on input order), and the
// objects they may refer to, indexed by name. It is StateWith without
// references: of Secrets only TLS ones, of ConfigMaps only those Gateway
// API objects name (GatewayReferences).
func (o *Objects) State(filter ClassFilter) *State {
	return o.StateWith(filter, Refs{})
}

// StateWith is State with, beside the TLS Secrets, the Secrets and
// ConfigMaps the owned Ingresses refer to as refs says (zero: none), as
// ClusterSource.References.
func (o *Objects) StateWith(filter ClassFilter, refs Refs) *State {
	st := &State{
		Ingresses:      ownedIngresses(lastByName(o.Ingresses), o.IngressClasses, filter),
		Services:       servicesByName(keepAll(o.Services, NewService)),
		EndpointSlices: slicesByService(keepAll(lastByName(o.EndpointSlices), NewEndpointSlice)),
		Secrets:        tlsSecretsByName(o.Secrets),
		ConfigMaps:     map[types.NamespacedName]*corev1.ConfigMap{},
		Gateway:        gatewayState(o.Gateway),
	}
	configMaps := indexByName(o.ConfigMaps)
	for _, r := range GatewayReferences(st.Gateway) {
		if cm := configMaps[r.NamespacedName]; cm != nil {
			st.ConfigMaps[r.NamespacedName] = cm
		}
	}
	if refs.Ingress == nil {
		return st
	}
	secrets := indexByName(o.Secrets)
	keep := func(r Reference) {
		switch r.Kind {
		case KindSecret:
			if s := secrets[r.NamespacedName]; s != nil {
				st.Secrets[r.NamespacedName] = s
			}
		case KindConfigMap:
			if cm := configMaps[r.NamespacedName]; cm != nil {
				st.ConfigMaps[r.NamespacedName] = cm
			}
		}
	}
	for _, ing := range st.Ingresses {
		for _, r := range refs.Ingress(ing) {
			keep(r)
		}
	}
	for _, r := range refs.inConfigMaps(st.ConfigMaps) {
		keep(r)
	}
	return st
}

// indexByName indexes objects by namespace and name; of two with the same, the
// later wins, as with successive applies.
func indexByName[T metav1.Object](objs []T) map[types.NamespacedName]T {
	out := make(map[types.NamespacedName]T, len(objs))
	for _, o := range objs {
		out[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] = o
	}
	return out
}

// The parts of a State, each built on its own so that a source can rebuild
// only the parts whose objects changed. Each takes objects unique by
// namespace and name: informer caches are; manifests go through lastByName.

func ownedIngresses(ingresses []*networkingv1.Ingress, classes []*networkingv1.IngressClass, filter ClassFilter) []*networkingv1.Ingress {
	owned := filter.Owned(ingresses, classes)
	sort.Slice(owned, func(i, j int) bool {
		a, b := owned[i], owned[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return owned
}

func servicesByName(services []*Service) map[types.NamespacedName]*Service {
	out := make(map[types.NamespacedName]*Service, len(services))
	for _, s := range services {
		out[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return out
}

// keepAll keeps what the translator reads of each API object (see
// NewService, NewEndpointSlice), as informers do with their transform.
func keepAll[A, K any](objs []A, keep func(A) K) []K {
	out := make([]K, len(objs))
	for i, o := range objs {
		out[i] = keep(o)
	}
	return out
}

func slicesByService(slices []*EndpointSlice) map[types.NamespacedName][]*EndpointSlice {
	out := make(map[types.NamespacedName][]*EndpointSlice, len(slices))
	for _, es := range slices {
		if svc, ok := es.ServiceName(); ok {
			out[svc] = append(out[svc], es)
		}
	}
	for _, list := range out {
		sortSlices(list)
	}
	return out
}

func tlsSecretsByName(secrets []*corev1.Secret) map[types.NamespacedName]*corev1.Secret {
	out := map[types.NamespacedName]*corev1.Secret{}
	for _, s := range secrets {
		if s.Type == corev1.SecretTypeTLS {
			out[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
		}
	}
	return out
}

// lastByName drops all but the last of objects that share a namespace and
// name (the same object in two files): the later one wins, as with
// successive applies, and nothing downstream ever sees two of one object.
func lastByName[T metav1.Object](objs []T) []T {
	last := make(map[types.NamespacedName]int, len(objs))
	for i, o := range objs {
		last[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] = i
	}
	if len(last) == len(objs) {
		return objs
	}
	out := make([]T, 0, len(last))
	for i, o := range objs {
		if last[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] == i {
			out = append(out, o)
		}
	}
	return out
}

// decoder accepts only the built-in types client-go knows and Gateway API's
// kinds (no defaulting, no conversion): what a user would kubectl apply.
func decoder() runtime.Decoder { return manifestDecoder() }

// ManifestState is the State (Objects.StateWith) of the objects one stream
// of manifests holds, source naming it in errors: for tests and tools that
// hold manifests as text. A document that does not decode is an error.
func ManifestState(r io.Reader, source string, filter ClassFilter, refs Refs) (*State, error) {
	var objs Objects
	if err := DecodeManifests(r, source, &objs); err != nil {
		return nil, err
	}
	return objs.StateWith(filter, refs), nil
}

// DecodeManifests reads a multi-document YAML or JSON stream and adds the
// objects we care about to objs. Kinds we do not use are skipped silently, as
// kubectl users mix them into the same files. A document that does not decode
// is reported in the returned error but does not stop the others.
func DecodeManifests(r io.Reader, source string, objs *Objects) error {
	dec := decoder()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var errs []error
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", source, doc, err))
			break
		}
		if len(bytes.TrimSpace(raw)) == 0 || isOnlyComments(raw) {
			continue
		}
		obj, _, err := dec.Decode(raw, nil, nil)
		if err != nil {
			if runtime.IsNotRegisteredError(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: document %d: %w", source, doc, err))
			continue
		}
		objs.add(obj)
	}
	return errors.Join(errs...)
}

// add files obj under its kind, defaulting the namespace as kubectl would. It
// reports whether the kind is one we use.
func (o *Objects) add(obj runtime.Object) bool {
	switch v := obj.(type) {
	case *networkingv1.Ingress:
		defaultNamespace(&v.Namespace)
		o.Ingresses = append(o.Ingresses, v)
	case *networkingv1.IngressClass:
		o.IngressClasses = append(o.IngressClasses, v)
	case *corev1.Service:
		defaultNamespace(&v.Namespace)
		o.Services = append(o.Services, v)
	case *discoveryv1.EndpointSlice:
		defaultNamespace(&v.Namespace)
		o.EndpointSlices = append(o.EndpointSlices, v)
	case *corev1.Secret:
		defaultNamespace(&v.Namespace)
		o.Secrets = append(o.Secrets, v)
	case *corev1.ConfigMap:
		defaultNamespace(&v.Namespace)
		o.ConfigMaps = append(o.ConfigMaps, v)
	case *corev1.List:
		// kubectl get -o yaml output: decode each item in turn.
		dec := decoder()
		for _, item := range v.Items {
			if inner, _, err := dec.Decode(item.Raw, nil, nil); err == nil {
				o.add(inner)
			}
		}
	default:
		return o.addGatewayObject(obj)
	}
	return true
}

func defaultNamespace(ns *string) {
	if *ns == "" {
		*ns = "default"
	}
}

func isOnlyComments(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}
