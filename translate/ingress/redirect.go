package ingress

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The redirect annotations, in the order ingress-nginx applies them to a
// request: app-root (a server-level rewrite, before any location), then a
// location's permanent or temporal redirect (nginx's return, in the rewrite
// phase), then its redirect to HTTPS (Lua, at the end of that phase); a
// from-to-www redirect is a server of its own.

// httpRedirectCode is ingress-nginx's http-redirect-code default: the
// status of its redirects to HTTPS and between www and not.
const httpRedirectCode = 308

// redirectIntent is what the Ingress's redirect annotations ask for, beyond
// the route policy.
type redirectIntent struct {
	// every answers every path of the Ingress; nil: none.
	every *ir.Redirect
	// appRoot is the path / is redirected to; empty: none.
	appRoot   string
	fromToWWW bool
}

// wwwRedirect is a from-to-www redirect the Ingress asks for: requests for
// from are redirected by route, unless an Ingress routes from itself.
type wwwRedirect struct {
	from, to string
	where    string
	route    *ir.Route
}

// redirectConfig is what the redirect keys ask: the redirects beyond the
// route policy, and the route policy's redirect to HTTPS.
type redirectConfig struct {
	intent redirectIntent
	https  *ir.HTTPSRedirect
}

// parseRedirect reads the redirect keys.
func parseRedirect(values *annotations.Values, opts *Options) redirectConfig {
	c := redirectConfig{intent: redirectIntent{every: everyRedirect(values, opts.config.relativeRedirects())}, https: httpsRedirect(values, *opts)}
	c.intent.appRoot, _ = annotations.AppRoot.Get(values)
	c.intent.fromToWWW, _ = annotations.FromToWWWRedirect.Get(values)
	return c
}

// everyRedirect is permanent-redirect's or temporal-redirect's redirect
// (temporal first, as ingress-nginx reads them); relativeAll is the
// ConfigMap's relative-redirects, nginx's absolute_redirect off at the
// http level, which an Ingress's "false" does not undo (nginx.tmpl writes
// the location's only when "true").
func everyRedirect(values *annotations.Values, relativeAll bool) *ir.Redirect {
	target, temporal := annotations.TemporalRedirect.Get(values)
	code, _ := annotations.TemporalRedirectCode.Get(values)
	code = cmp.Or(code, 302)
	if !temporal {
		var ok bool
		if target, ok = annotations.PermanentRedirect.Get(values); !ok {
			return nil
		}
		code, _ = annotations.PermanentRedirectCode.Get(values)
		code = cmp.Or(code, 301)
	}
	if relative, _ := annotations.RelativeRedirects.Get(values); strings.HasPrefix(target, "/") && !relative && !relativeAll {
		// nginx's absolute_redirect: the request's scheme and host, and
		// not its query (return never appends it).
		return &ir.Redirect{Path: target, StripQuery: true, Code: code}
	}
	return &ir.Redirect{Location: target, Code: code}
}

// httpsRedirect is force-ssl-redirect's or ssl-redirect's redirect to
// HTTPS, as ingress-nginx's Lua sends it.
func httpsRedirect(values *annotations.Values, opts Options) *ir.HTTPSRedirect {
	force, _ := annotations.ForceSSLRedirect.Get(values)
	ssl, _ := annotations.SSLRedirect.Get(values)
	// ssl-redirect is for a host served over HTTPS: with no HTTPS
	// listener (--https-port 0) there is none.
	if !force && (!ssl || opts.HTTPSPort == 0) {
		return nil
	}
	preserve, _ := annotations.PreserveTrailingSlash.Get(values)
	h := &ir.HTTPSRedirect{Code: opts.config.redirectCode(), StripTrailingSlash: !preserve, OnlyWithCertificate: !force}
	if usePort, _ := annotations.UsePortInRedirects.Get(values); usePort {
		h.Port = cmp.Or(opts.HTTPSPort, 443)
	}
	return h
}

// addRedirects applies the redirects to the Ingress's routes, once they
// are all made: every path's redirect, then app-root's route (put first on
// each host in the merge), then the from-to-www redirects.
func (f *fragmentBuilder) addRedirects() {
	r := f.redirects
	if r.every != nil {
		for i := range f.frag.routes {
			hr := &f.frag.routes[i]
			route := *hr.route
			route.Action = ir.Action{Redirect: r.every}
			hr.route, hr.cluster = &route, nil
		}
	}
	var hosts []string
	seen := map[string]bool{}
	for _, hr := range f.frag.routes {
		if !seen[hr.host] {
			seen[hr.host] = true
			hosts = append(hosts, hr.host)
		}
	}
	if r.appRoot != "" && len(hosts) > 0 {
		f.frag.appRoot = f.appRootRoute()
	}
	if r.fromToWWW {
		for _, host := range hosts {
			f.addWWWRedirect(host)
		}
	}
}

// appRootRoute is app-root's route: exactly / redirected to the path.
func (f *fragmentBuilder) appRootRoute() *ir.Route {
	return &ir.Route{
		Match: ir.Match{PathType: ir.PathExact, Path: "/"},
		// $scheme://$http_host<app-root>: the request's scheme and host;
		// nginx's $uri = / holds whatever the query.
		Action: ir.Action{Redirect: &ir.Redirect{Path: f.redirects.appRoot, StripQuery: true, Code: 302}},
		Source: f.source(),
	}
}

// mergeAppRoot puts the app-root route of the oldest fragment that routes
// host and asks for one first among host's routes: in nginx it is a rewrite
// of the server, before any location (of any Ingress, regular expressions
// or not) is chosen. Another app-root for the host is reported.
func (out *hostMerge) mergeAppRoot(host string, frags []*fragment) {
	var first *fragment
	for _, f := range frags {
		if f.appRoot == nil || !slices.ContainsFunc(f.routes, func(hr hostRoute) bool { return hr.host == host }) {
			continue
		}
		if first == nil {
			first = f
			continue
		}
		if f.appRoot.Action.Redirect.Path != first.appRoot.Action.Redirect.Path {
			out.problems = append(out.problems, newProblem(f.ingress, "RedirectConflict",
				"annotation app-root: host %q already has the app-root %q of the older Ingress %s/%s: ignored",
				host, first.appRoot.Action.Redirect.Path, first.ingress.Namespace, first.ingress.Name))
		}
	}
	if first == nil {
		return
	}
	if out.vhost == nil {
		out.vhost = &ir.VirtualHost{Host: host}
		if out.cert != nil {
			out.vhost.Certificate = out.cert.Name
		}
	}
	out.vhost.Routes = append([]*ir.Route{first.appRoot}, out.vhost.Routes...)
}

// addWWWRedirect asks for the redirect between host and its www name: from
// www.<host>, or to it when host is the www one.
func (f *fragmentBuilder) addWWWRedirect(host string) {
	if strings.HasPrefix(host, "*") {
		return // www.*.example.com is no name
	}
	from, ok := strings.CutPrefix(host, "www.")
	if !ok {
		from = "www." + host
	}
	if len(validation.IsDNS1123Subdomain(from)) > 0 {
		return // www. made the name too long
	}
	f.frag.wwwRedirects = append(f.frag.wwwRedirects, wwwRedirect{
		from: from, to: host, where: "annotation from-to-www-redirect",
		route: &ir.Route{
			Match: ir.Match{PathType: ir.PathPrefix, Path: "/"},
			// ngx_srv_redirect.lua: $scheme://<to>:$server_port$request_uri,
			// one trailing slash dropped.
			Action: ir.Action{Redirect: &ir.Redirect{Host: host, ListenerPort: true, StripTrailingSlash: true, Code: httpRedirectCode}},
			Source: f.source(),
		},
	})
}

// mergeWWWRedirect gives host the from-to-www redirect the oldest of its
// fragments asks for, unless an Ingress routes host itself (then, as
// ingress-nginx does, there is no redirect, and each asking is told).
func (out *hostMerge) mergeWWWRedirect(host string, frags []*fragment) {
	var first *wwwRedirect
	for _, f := range frags {
		for i, w := range f.wwwRedirects {
			if w.from != host {
				continue
			}
			if out.vhost != nil {
				out.problems = append(out.problems, newProblem(f.ingress, "RedirectConflict",
					"%s: host %q is routed by an Ingress: no redirect from it to %q", w.where, host, w.to))
				continue
			}
			if first == nil {
				first = &f.wwwRedirects[i]
			}
		}
	}
	if first != nil && out.vhost == nil {
		out.vhost = &ir.VirtualHost{Host: host, Routes: []*ir.Route{first.route}}
	}
}

// wwwHosts adds the hosts a fragment's from-to-www redirects come from.
func wwwHosts(f *fragment, hosts map[string]bool) {
	for _, w := range f.wwwRedirects {
		hosts[w.from] = true
	}
}
