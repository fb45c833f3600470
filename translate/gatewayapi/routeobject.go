package gatewayapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeObject is what attachment, precedence, references and status read
// of a Route, whatever its kind: its rules are read by its kind's own
// code (rules.go for HTTPRoute).
type routeObject struct {
	kind            string
	namespace, name string
	created         metav1.Time
	generation      int64
	parentRefs      []gwapiv1.ParentReference
	hostnames       []gwapiv1.Hostname
	// object is the Route itself, whose identity says it did not change
	// (memo.go).
	object any
}

func httpRouteObject(r *gwapiv1.HTTPRoute) *routeObject {
	return &routeObject{kind: kindHTTPRoute, namespace: r.Namespace, name: r.Name, created: r.CreationTimestamp,
		generation: r.Generation, parentRefs: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
}

// key names the Route among every kind's.
func (r *routeObject) key() string { return r.kind + " " + r.namespace + "/" + r.name }

// problem reports something wrong with the Route.
func (b *build) problem(r *routeObject, reason, format string, args ...any) {
	b.problems.add(r.kind, r.namespace, r.name, reason, format, args...)
}
