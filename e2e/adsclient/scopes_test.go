package adsclient

import (
	"context"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/translate"
)

// Both clients against the real xds.Server publishing the plain-HTTP
// routes in scopes (serve --route-scopes): each subscribes to the scopes
// when the listener says so, as Envoy does, then to the route
// configurations they name, and follows a host added and removed.
func TestClientRouteScopes(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: "sotw", true: "delta"}[delta], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			server := serve(t, ctx)
			const scopes = 4
			publish := publisher(t, server, translate.Options{HTTPPort: 8080, RouteScopes: scopes}, func(*translate.Result) {})
			followHostAddedAndRemoved(t, ctx, server, publish, delta, func(snap *Snapshot) {
				if len(snap.Scopes) != scopes || len(snap.Routes) != scopes {
					t.Errorf("%d scopes and %d route configurations, want %d of each", len(snap.Scopes), len(snap.Routes), scopes)
				}
			})
		})
	}
}
