package togateway

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// intent is what an Ingress's converted annotations ask of its Routes.
type intent struct {
	sslRedirect, forceSSLRedirect bool
	// redirect answers every path (permanent-redirect, temporal-redirect).
	redirect *gwapiv1.HTTPRequestRedirectFilter
	appRoot  string
	// regex: use-regex or rewrite-target make every path a regular
	// expression.
	regex bool
	// prefixIdiom: every path is ingress-nginx's prefix idiom,
	// "<prefix>(/|$)(.*)", converted as a PathPrefix of <prefix>.
	prefixIdiom     bool
	rewrite         *gwapiv1.HTTPURLRewriteFilter
	requestHeaders  *gwapiv1.HTTPHeaderFilter
	responseHeaders *gwapiv1.HTTPHeaderFilter
	cors            *gwapiv1.HTTPCORSFilter
}

// filters are the filters of a rule that forwards.
func (in *intent) filters() []gwapiv1.HTTPRouteFilter {
	var out []gwapiv1.HTTPRouteFilter
	if in.rewrite != nil {
		out = append(out, gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterURLRewrite, URLRewrite: in.rewrite})
	}
	if in.requestHeaders != nil {
		out = append(out, gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: in.requestHeaders})
	}
	if in.responseHeaders != nil {
		out = append(out, gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: in.responseHeaders})
	}
	if in.cors != nil {
		out = append(out, gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterCORS, CORS: in.cors})
	}
	return out
}

// outcomes records what became of each annotation, by its name without
// prefix; what is not recorded is listed as not converted (notConverted).
type outcomes map[string]Annotation

func (o outcomes) set(name string, outcome Outcome, note string, args ...any) {
	o[name] = Annotation{Outcome: outcome, Note: fmt.Sprintf(note, args...)}
}

// ingress converts one Ingress.
func (c *converter) ingress(ing *networkingv1.Ingress) Ingress {
	out := Ingress{Namespace: ing.Namespace, Name: ing.Name}
	values, issues := c.reg.Parse(ing.Annotations)
	done := outcomes{}
	for _, is := range issues {
		_, name, _ := strings.Cut(is.Key, "/")
		done.set(name, NotConverted, "%s: %s (the Ingress front-end does not apply it either)", is.Reason, is.Message)
	}
	if isCanary, _ := annotations.Canary.Get(values); isCanary {
		c.canaryOutcomes(ing, values, done) // canary.go: its backends join its mainline's rules
	} else {
		in := c.intentOf(ing, values, done)
		for _, hp := range hostsOf(ing) {
			c.host(ing, hp, in, &out)
		}
		if len(ing.Spec.TLS) > 0 {
			for _, t := range ing.Spec.TLS {
				if len(t.Hosts) == 0 {
					out.Problems = append(out.Problems, fmt.Sprintf("spec.tls entry of Secret %s has no hosts: ingress-nginx's default certificate has no Gateway API form (a listener has a hostname, or serves every name)", t.SecretName))
				}
			}
		}
	}
	for key := range ing.Annotations {
		if _, ok := c.reg.VerdictOf(key); !ok {
			continue // not under a prefix ingress-xds reads
		}
		_, name, _ := strings.Cut(key, "/")
		a, ok := done[name]
		if !ok {
			a = Annotation{Outcome: NotConverted, Note: notConverted(name)}
		}
		a.Key = key
		out.Annotations = append(out.Annotations, a)
	}
	slices.SortFunc(out.Annotations, func(a, b Annotation) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// intentOf reads the annotations that convert, recording each outcome.
func (c *converter) intentOf(ing *networkingv1.Ingress, values *annotations.Values, done outcomes) *intent {
	in := &intent{}
	c.sslRedirects(values, in, done)
	c.redirects(values, in, done)
	if root, ok := annotations.AppRoot.Get(values); ok {
		in.appRoot = root
		done.set(annotations.AppRoot.Name(), ConvertedWithDifference, `a rule matching "/" exactly, redirecting (302) to %s; nginx's return drops the request's query, RequestRedirect keeps it`, root)
	}
	target, rewrites := annotations.RewriteTarget.Get(values)
	useRegex, _ := annotations.UseRegex.Get(values)
	in.regex = useRegex || rewrites
	if useRegex {
		done.set(annotations.UseRegex.Name(), Converted, "paths as RegularExpression matches, case-insensitive and anchored at the start only, as nginx's ~* location")
	}
	if rewrites {
		converted := true
		switch replacement, idiom := prefixIdiom(ing, target); {
		case idiom:
			in.regex, in.prefixIdiom = false, true
			if useRegex {
				done.set(annotations.UseRegex.Name(), ConvertedWithDifference, "the paths of rewrite-target's idiom are PathPrefix matches, case-sensitive where nginx's are not")
			}
			in.rewrite = &gwapiv1.HTTPURLRewriteFilter{Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr(replacement)}}
			done.set(annotations.RewriteTarget.Name(), ConvertedWithDifference, "the idiom path(/|$)(.*) with a target ending in /$2: a PathPrefix of the path with "+
				"URLRewrite ReplacePrefixMatch; nginx matches the path case-insensitively, a PathPrefix as written (and /path alone becomes the target with its /)")
		case strings.Contains(target, "$"):
			converted = false
			done.set(annotations.RewriteTarget.Name(), NotConverted, "no standard form: URLRewrite replaces the whole path or a prefix, never with the captures ($1...) of a regular expression (the paths are converted as regular expressions all the same)")
		default:
			in.rewrite = &gwapiv1.HTTPURLRewriteFilter{Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(target)}}
			done.set(annotations.RewriteTarget.Name(), Converted, "URLRewrite ReplaceFullPath: nginx's rewrite replaces the whole path with a target without captures; the paths become regular expressions")
		}
		if prefix, ok := annotations.XForwardedPrefix.Get(values); ok && converted {
			in.requestHeaders = &gwapiv1.HTTPHeaderFilter{Set: []gwapiv1.HTTPHeader{{Name: "X-Forwarded-Prefix", Value: prefix}}}
			done.set(annotations.XForwardedPrefix.Name(), Converted, "RequestHeaderModifier set")
		}
	}
	if host, ok := annotations.UpstreamVhost.Get(values); ok {
		if in.rewrite == nil {
			in.rewrite = &gwapiv1.HTTPURLRewriteFilter{}
		}
		in.rewrite.Hostname = ptr(gwapiv1.PreciseHostname(host))
		done.set(annotations.UpstreamVhost.Name(), Converted, "URLRewrite hostname")
	}
	c.customHeaders(ing, values, in, done)
	corsOf(values, in, done)
	return in
}

// idiomTail ends every path of ingress-nginx's documented idiom for
// stripping a prefix: path "/menu(/|$)(.*)" with rewrite-target "/$2".
const idiomTail = "(/|$)(.*)"

// prefixIdiom reports whether every path of the Ingress is the idiom of a
// literal prefix and the target keeps the second group after a literal
// prefix, and returns ReplacePrefixMatch's replacement: "/" for "/$2",
// "/api" for "/api/$2".
func prefixIdiom(ing *networkingv1.Ingress, target string) (string, bool) {
	head, ok := strings.CutSuffix(target, "/$2")
	if !ok || strings.Contains(head, "$") || head != "" && !strings.HasPrefix(head, "/") {
		return "", false
	}
	paths := 0
	for _, hp := range hostsOf(ing) {
		for _, p := range hp.paths {
			prefix, ok := strings.CutSuffix(p.Path, idiomTail)
			if !ok || !strings.HasPrefix(prefix, "/") || regexp.QuoteMeta(prefix) != prefix {
				return "", false
			}
			paths++
		}
	}
	return cmp.Or(head, "/"), paths > 0
}

// sslRedirects are ssl-redirect and force-ssl-redirect: a Route of the
// plain-HTTP listener redirecting the paths to HTTPS (308, ingress-nginx's
// code), where the Route that forwards is attached to the HTTPS listeners
// only.
func (c *converter) sslRedirects(values *annotations.Values, in *intent, done outcomes) {
	ssl, set := annotations.SSLRedirect.Get(values)
	in.sslRedirect = ssl || !set && c.opts.SSLRedirectByDefault
	in.forceSSLRedirect, _ = annotations.ForceSSLRedirect.Get(values)
	keep, _ := annotations.PreserveTrailingSlash.Get(values)
	outcome, difference := Converted, ""
	if !keep {
		outcome, difference = ConvertedWithDifference, "; nginx drops a trailing / from the redirect's URL (unless preserve-trailing-slash), RequestRedirect keeps the path"
	}
	const redirects = "a Route of the HTTP listener redirecting the Ingress's paths to https (308)"
	switch {
	case set && ssl:
		done.set(annotations.SSLRedirect.Name(), outcome, "%s for its hosts with TLS%s", redirects, difference)
	case set:
		done.set(annotations.SSLRedirect.Name(), Converted, "false: the HTTP listener's Route forwards")
	}
	if in.forceSSLRedirect {
		done.set(annotations.ForceSSLRedirect.Name(), outcome, "%s for every host%s", redirects, difference)
	}
	if _, ok := annotations.PreserveTrailingSlash.Get(values); ok {
		done.set(annotations.PreserveTrailingSlash.Name(), Converted, "a RequestRedirect keeps the path as it is")
	}
}

// redirects are permanent-redirect and temporal-redirect (temporal first,
// as ingress-nginx reads them): every path answers a RequestRedirect.
func (c *converter) redirects(values *annotations.Values, in *intent, done outcomes) {
	name, code := annotations.TemporalRedirect.Name(), uint32(302)
	target, ok := annotations.TemporalRedirect.Get(values)
	if ok {
		if v, set := annotations.TemporalRedirectCode.Get(values); set {
			code = v
			done.set(annotations.TemporalRedirectCode.Name(), Converted, "the RequestRedirect's statusCode")
		}
	} else if target, ok = annotations.PermanentRedirect.Get(values); ok {
		name, code = annotations.PermanentRedirect.Name(), 301
		if v, set := annotations.PermanentRedirectCode.Get(values); set {
			code = v
			done.set(annotations.PermanentRedirectCode.Name(), Converted, "the RequestRedirect's statusCode")
		}
	}
	if !ok {
		return
	}
	if relative, _ := annotations.RelativeRedirects.Get(values); relative && strings.HasPrefix(target, "/") {
		done.set(name, NotConverted, "no standard form: a relative Location (relative-redirects); RequestRedirect writes an absolute URL")
		return
	}
	f, err := redirectFilter(target, int(code))
	if err != nil {
		done.set(name, NotConverted, "no standard form: %v", err)
		return
	}
	in.redirect = f
	done.set(name, ConvertedWithDifference, "RequestRedirect to the URL's scheme, host, port and path; nginx's return drops the request's query, RequestRedirect keeps it (it cannot drop it)")
}

// redirectFilter is a RequestRedirect to a URL (or an absolute path, on
// the request's scheme and host).
func redirectFilter(target string, code int) (*gwapiv1.HTTPRequestRedirectFilter, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("%q is no URL: %w", target, err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("a redirect URL with a query, fragment or user (RequestRedirect writes a scheme, host, port and path)")
	}
	f := &gwapiv1.HTTPRequestRedirectFilter{StatusCode: ptr(code),
		Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(cmp.Or(u.Path, "/"))}}
	if u.Scheme != "" {
		f.Scheme = ptr(u.Scheme)
		f.Hostname = ptr(gwapiv1.PreciseHostname(u.Hostname()))
		if p := u.Port(); p != "" {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("port %q: %w", p, err)
			}
			f.Port = ptr(int32(n))
		}
	}
	return f, nil
}

// customHeaders is custom-headers: its ConfigMap's entries set on every
// response (nginx's more_set_headers replaces the backend's).
func (c *converter) customHeaders(ing *networkingv1.Ingress, values *annotations.Values, in *intent, done outcomes) {
	ref, ok := annotations.CustomHeaders.Get(values)
	if !ok {
		return
	}
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		ns, name = ing.Namespace, ref
	}
	cm := c.st.ConfigMaps[types.NamespacedName{Namespace: ns, Name: name}]
	if cm == nil {
		done.set(annotations.CustomHeaders.Name(), NotConverted, "ConfigMap %s/%s not found: its headers are not known", ns, name)
		return
	}
	f := &gwapiv1.HTTPHeaderFilter{}
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		f.Set = append(f.Set, gwapiv1.HTTPHeader{Name: gwapiv1.HTTPHeaderName(k), Value: cm.Data[k]})
	}
	in.responseHeaders = f
	done.set(annotations.CustomHeaders.Name(), Converted, "ResponseHeaderModifier set, from ConfigMap %s/%s as it is now", ns, name)
}

// corsOf is enable-cors and its keys as the CORS filter, with
// ingress-nginx's defaults written out.
func corsOf(values *annotations.Values, in *intent, done outcomes) {
	if on, _ := annotations.EnableCORS.Get(values); !on {
		return
	}
	f := &gwapiv1.HTTPCORSFilter{AllowCredentials: ptr(true), MaxAge: annotations.DefaultCORSMaxAge}
	methods, headers := annotations.DefaultCORSMethods, annotations.DefaultCORSHeaders
	origins, set := annotations.CORSAllowOrigin.Get(values)
	if !set || origins.Any {
		f.AllowOrigins = []gwapiv1.CORSOrigin{"*"}
	} else {
		for _, o := range origins.Origins {
			f.AllowOrigins = append(f.AllowOrigins, gwapiv1.CORSOrigin(o))
		}
	}
	if v, ok := annotations.CORSAllowMethods.Get(values); ok {
		methods = v
	}
	if v, ok := annotations.CORSAllowHeaders.Get(values); ok {
		headers = v
	}
	for _, m := range splitList(methods) {
		f.AllowMethods = append(f.AllowMethods, gwapiv1.HTTPMethodWithWildcard(strings.ToUpper(m)))
	}
	for _, h := range splitList(headers) {
		f.AllowHeaders = append(f.AllowHeaders, gwapiv1.HTTPHeaderName(h))
	}
	if v, ok := annotations.CORSExposeHeaders.Get(values); ok {
		for _, h := range splitList(v) {
			f.ExposeHeaders = append(f.ExposeHeaders, gwapiv1.HTTPHeaderName(h))
		}
	}
	if v, ok := annotations.CORSAllowCredentials.Get(values); ok {
		f.AllowCredentials = ptr(v)
	}
	if v, ok := annotations.CORSMaxAge.Get(values); ok {
		f.MaxAge = int32(v)
	}
	in.cors = f
	note := "the CORS filter; ingress-nginx answers every OPTIONS request 204 itself, the filter only preflights, and sends * for any origin where the filter echoes it with credentials"
	done.set(annotations.EnableCORS.Name(), ConvertedWithDifference, "%s", note)
	for _, k := range []string{annotations.CORSAllowOrigin.Name(), annotations.CORSAllowMethods.Name(), annotations.CORSAllowHeaders.Name(),
		annotations.CORSExposeHeaders.Name(), annotations.CORSAllowCredentials.Name(), annotations.CORSMaxAge.Name()} {
		done.set(k, Converted, "a field of the CORS filter")
	}
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
