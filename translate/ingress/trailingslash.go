package ingress

import (
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// addSlashRedirects gives the host nginx's redirect for a location that
// ends in a slash (ngx_http_core_module's auto_redirect of a location that
// proxies): a request for the path without its trailing slash gets a 301
// to the path with it, query kept, when no location of the host is named
// that path. ingress-nginx's locations are the Ingress paths as written
// (a Prefix path without a trailing slash also gets an exact location of
// its own, so /foo serves /foo), and the redirect is decided when the
// location is chosen, before any rewrite or access check: the route has
// no policy. Never in the host's regex mode (its locations are regular
// expressions). Only with a controller ConfigMap or --nginx-defaults, when
// ingress-xds takes ingress-nginx's defaults; otherwise a Prefix path's
// trailing slash is ignored, as Kubernetes defines Prefix.
//
// Every path of the host's Ingresses names a location, those the merge
// ignored as conflicts too (their Ingress meant the path to be served).
func (out *hostMerge) addSlashRedirects(host string, frags []*fragment, kept []hostRoute) {
	if out.vhost == nil {
		return
	}
	named := make(map[string]bool, len(kept))
	for _, f := range frags {
		for _, hr := range f.routes {
			if hr.host == host {
				named[hr.nginx.raw] = true
			}
		}
	}
	for _, hr := range kept {
		raw := hr.nginx.raw
		if hr.nginx.regex || raw == "/" || !strings.HasSuffix(raw, "/") || strings.HasSuffix(raw, "//") {
			continue
		}
		without := strings.TrimSuffix(raw, "/")
		if named[without] {
			continue
		}
		named[without] = true // one redirect per path
		out.vhost.Routes = append(out.vhost.Routes, &ir.Route{
			Match:  ir.Match{PathType: ir.PathExact, Path: without},
			Action: ir.Action{Redirect: &ir.Redirect{Path: raw, Code: 301}},
			Source: hr.route.Source,
		})
	}
}
