package ingress

import "fmt"

// defaultBackendField is where spec.defaultBackend's route comes from.
const defaultBackendField = "spec.defaultBackend"

// location is the field of an Ingress a route comes from, made text only
// when a problem quotes it: a string per path, held by every route, would
// be a large part of what the front-end keeps.
type location struct {
	rule, path int32
	// label, when set, is the field itself, for a route not from a
	// rule's path.
	label string
}

func (l location) String() string {
	if l.label != "" {
		return l.label
	}
	return fmt.Sprintf("spec.rules[%d].http.paths[%d]", l.rule, l.path)
}
