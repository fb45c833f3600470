package translate_test

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// TestTranslatorMatchesFreshTranslationWithRouteScopes is the random
// series of TestTranslatorMatchesFreshTranslation with the plain-HTTP
// routes split into scopes (serve --route-scopes): the renderer's reuse of
// unchanged scopes must not show (the output is byte for byte a fresh
// translation's), every step publishes as a consistent, valid snapshot,
// and the one route configuration is never sent beside its scopes.
func TestTranslatorMatchesFreshTranslationWithRouteScopes(t *testing.T) {
	const n = 4
	opts := goldenOptions
	opts.RouteScopes = n
	randomSeriesAsFresh(t, opts, func(at string, got *translate.Result) {
		scopes := 0
		for _, rc := range got.Resources.Routes {
			switch name := rc.GetName(); {
			case name == "ingress_http":
				t.Fatalf("%s: the unscoped HTTP route configuration is sent", at)
			case strings.HasPrefix(name, "ingress_http/"):
				if name != envoy.ScopeRouteName("ingress_http", scopes) {
					t.Fatalf("%s: route configuration %s where scope %d's was due", at, name, scopes)
				}
				scopes++
			}
		}
		if scopes != n {
			t.Fatalf("%s: %d scopes, want %d", at, scopes, n)
		}
	})
}
