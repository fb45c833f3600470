package translate

import (
	"fmt"

	"github.com/ingress-xds/ingress-xds/kube"
)

// Result is everything one translation produces.
type Result struct {
	Resources *Resources
	Problems  []Problem
}

// Translate runs both steps: Ingress semantics, then Envoy rendering.
func Translate(st *kube.State, opts Options) (*Result, error) {
	return NewTranslator(opts).Translate(st)
}

// Translator translates state after state, redoing only the work whose
// inputs changed: an Ingress, a Service, an EndpointSlice or a Secret. Its
// results are always identical to Translate's on the same state. It is not
// safe for concurrent use.
type Translator struct {
	opts  Options
	memo  *memo
	envoy *envoyCache
}

// NewTranslator returns a Translator with nothing remembered yet.
func NewTranslator(opts Options) *Translator {
	return &Translator{opts: opts, memo: newMemo(), envoy: newEnvoyCache()}
}

// Translate translates one state.
func (t *Translator) Translate(st *kube.State) (*Result, error) {
	m := t.memo.buildModel(st, t.opts)
	res, err := t.envoy.render(m, t.opts)
	if err != nil {
		return nil, fmt.Errorf("rendering envoy resources: %w", err)
	}
	return &Result{Resources: res, Problems: m.Problems}, nil
}
