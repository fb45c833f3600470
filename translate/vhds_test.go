package translate_test

import (
	"fmt"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// TestTranslatorMatchesFreshTranslationWithVHDS is the random series of
// TestTranslatorMatchesFreshTranslation with the virtual hosts sent over
// VHDS (serve --vhds): the renderer's caches must not show in that form
// either (its output, virtual hosts included, is byte for byte a fresh
// translation's), and every step publishes as a consistent, valid
// snapshot, as the xDS layer publishes it.
func TestTranslatorMatchesFreshTranslationWithVHDS(t *testing.T) {
	opts := goldenOptions
	opts.VirtualHostDiscovery = true
	randomSeriesAsFresh(t, opts, func(at string, got *translate.Result) {
		if len(got.Resources.VirtualHosts) == 0 {
			t.Fatalf("%s: no virtual host sent over VHDS", at)
		}
		for _, rc := range got.Resources.Routes {
			if rc.GetName() == "ingress_http" && (len(rc.GetVirtualHosts()) != 0 || rc.GetVhds() == nil) {
				t.Fatalf("%s: the HTTP route configuration holds %d virtual hosts, VHDS %v", at, len(rc.GetVirtualHosts()), rc.GetVhds())
			}
		}
	})
}

// randomSeriesAsFresh runs the random series of
// TestTranslatorMatchesFreshTranslation with opts: after the first
// translation and every step, the output is byte for byte a fresh
// translation's, publishes as a consistent, valid snapshot, and passes
// check.
func randomSeriesAsFresh(t *testing.T, opts translate.Options, check func(at string, got *translate.Result)) {
	t.Helper()
	st := mergedGoldenState(t)
	tr := translate.NewTranslator(opts)
	rng := rand.New(rand.NewSource(2))
	first, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	check("the first translation", first)
	for step := 0; step < 200; step++ {
		desc := mutate(rng, st)
		var got *translate.Result
		if svc, ok := endpointChange(desc); ok && step%2 == 0 {
			var fast bool
			got, fast = tr.UpdateEndpoints(map[types.NamespacedName][]*kube.EndpointSlice{svc: st.EndpointSlices[svc]})
			if !fast {
				t.Fatalf("step %d: no fast path after a full translation", step)
			}
		} else {
			if got, err = tr.Translate(st); err != nil {
				t.Fatal(err)
			}
		}
		at := fmt.Sprintf("step %d (%s)", step, desc)
		sameAsFresh(t, got, st, opts, at)
		check(at, got)
		if err := xds.Validate(got.Resources); err != nil {
			t.Fatalf("%s: invalid: %v", at, err)
		}
		if _, err := xds.NewSnapshot(got.Resources); err != nil {
			t.Fatalf("%s: not a consistent snapshot: %v", at, err)
		}
	}
}
