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
	m := BuildModel(st, opts)
	res, err := ToEnvoy(m, opts)
	if err != nil {
		return nil, fmt.Errorf("rendering envoy resources: %w", err)
	}
	return &Result{Resources: res, Problems: m.Problems}, nil
}
