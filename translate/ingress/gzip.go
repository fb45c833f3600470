package ingress

import (
	"reflect"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Compression follows nginx's inheritance of the gzip directives
// (ngx_http_gzip_merge_conf): each is inherited on its own from the http
// block (the ConfigMap's use-gzip keys, which nginx.tmpl writes there)
// into each server (a host's server-snippet, the oldest Ingress's, and
// the ConfigMap's server-snippet) and from the server into each location
// (an Ingress's configuration-snippet, with the ConfigMap's
// location-snippet), an inner level's directive overriding the outer's.
// The fragment resolves its locations under the http level alone
// (locationCompression); the host's merge resolves them again under a
// server-snippet with gzip directives (mergeServerGzip), which only it
// knows.

// locationGzip is the location snippets' gzip directives; zero: none.
func locationGzip(loc *snippet.Result) snippet.Gzip {
	if loc == nil {
		return snippet.Gzip{}
	}
	return loc.Gzip
}

// locationCompression is the compression of the Ingress's locations,
// under the http level; the http level's own value, shared by every
// Ingress, where the locations set nothing.
func locationCompression(s snippetsConfig) *ir.Compression {
	loc := locationGzip(s.location)
	if loc.IsZero() {
		return s.compression
	}
	return loc.Under(s.gzip).Compression()
}

// mergeServerGzip resolves the compression of the host's routes again
// where its server-snippets have gzip directives: the annotation's (the
// oldest Ingress's) over the ConfigMap's (nginx refuses a directive twice
// in one server; the annotation's comes first in the template), under the
// http level, with each route's Ingress's location directives over them.
// A route that is no Ingress's (a server-snippet's answer) takes the
// server's.
func (out *hostMerge) mergeServerGzip(server snippet.Gzip, frags []*fragment, http snippet.Gzip) {
	if out.vhost == nil || server.IsZero() {
		return
	}
	serverOnly := server.Under(http).Compression()
	byIngress := map[types.NamespacedName]*ir.Compression{}
	for _, f := range frags {
		c := serverOnly
		if !f.locationGzip.IsZero() {
			c = f.locationGzip.Under(server).Under(http).Compression()
		}
		byIngress[types.NamespacedName{Namespace: f.ingress.Namespace, Name: f.ingress.Name}] = c
	}
	type pair struct {
		policy *ir.RoutePolicy
		c      *ir.Compression
	}
	made := map[pair]*ir.RoutePolicy{}
	for i, r := range out.vhost.Routes {
		want := serverOnly
		if src := r.Source; src != nil && src.Kind == "Ingress" {
			if c, ok := byIngress[types.NamespacedName{Namespace: src.Namespace, Name: src.Name}]; ok {
				want = c
			}
		}
		var had *ir.Compression
		if r.Policy != nil {
			had = r.Policy.Compression
		}
		if had == want || had != nil && want != nil && reflect.DeepEqual(*had, *want) {
			continue
		}
		k := pair{r.Policy, want}
		p, ok := made[k]
		if !ok {
			var c ir.RoutePolicy
			if r.Policy != nil {
				c = *r.Policy
			}
			c.Compression = want
			if !reflectZero(&c) {
				p = &c
			}
			made[k] = p
		}
		route := *r
		route.Policy = p
		out.vhost.Routes[i] = &route
	}
}
