package togateway

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
)

// hostPaths are the paths of one host of an Ingress, in the Ingress's
// order ("" is the rules without a host, and the default backend).
type hostPaths struct {
	host  string
	paths []networkingv1.HTTPIngressPath
}

// hostsOf groups an Ingress's paths by host, in the order the hosts
// first appear; the default backend is a "/" prefix of the hostless
// rules, as the Ingress front-end serves it, unless one of them has "/"
// already.
func hostsOf(ing *networkingv1.Ingress) []hostPaths {
	var out []hostPaths
	index := map[string]int{}
	add := func(host string, p networkingv1.HTTPIngressPath) {
		i, ok := index[host]
		if !ok {
			i = len(out)
			index[host] = i
			out = append(out, hostPaths{host: host})
		}
		out[i].paths = append(out[i].paths, p)
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			add(r.Host, p)
		}
	}
	if b := ing.Spec.DefaultBackend; b != nil {
		i, ok := index[""]
		if !ok || !slices.ContainsFunc(out[i].paths, func(p networkingv1.HTTPIngressPath) bool {
			return cmp.Or(p.Path, "/") == "/" && (p.PathType == nil || *p.PathType != networkingv1.PathTypeExact)
		}) {
			add("", networkingv1.HTTPIngressPath{Path: "/", PathType: ptr(networkingv1.PathTypePrefix), Backend: *b})
		}
	}
	return out
}

// routeName names the HTTPRoute of one host of an Ingress: the Ingress's
// own name when it has one host, else with the host's slug.
func routeName(ing *networkingv1.Ingress, host string) string {
	if len(hostsOf(ing)) == 1 {
		return ing.Name
	}
	return ing.Name + "-" + slug(host)
}

// tlsSecret is the Secret an Ingress's spec.tls gives host, if any.
func tlsSecret(ing *networkingv1.Ingress, host string) (types.NamespacedName, bool) {
	if host == "" {
		return types.NamespacedName{}, false
	}
	for _, t := range ing.Spec.TLS {
		if t.SecretName != "" && slices.Contains(t.Hosts, host) {
			return types.NamespacedName{Namespace: ing.Namespace, Name: t.SecretName}, true
		}
	}
	return types.NamespacedName{}, false
}

// host makes the HTTPRoutes of one host of an Ingress: the Route that
// serves its paths (over HTTPS when the host has a certificate, and over
// plain HTTP unless it is redirected), and the Route that redirects them
// to HTTPS over plain HTTP.
func (c *converter) host(ing *networkingv1.Ingress, hp hostPaths, in *intent, out *Ingress) {
	gw := c.gateway(ing.Namespace)
	parent := func(section gwapiv1.SectionName) gwapiv1.ParentReference {
		ref := gwapiv1.ParentReference{Name: gwapiv1.ObjectName(gw.Name), SectionName: ptr(section)}
		if gw.Namespace != ing.Namespace {
			ref.Namespace = ptr(gwapiv1.Namespace(gw.Namespace))
		}
		return ref
	}
	name := routeName(ing, hp.host)
	var parents []gwapiv1.ParentReference
	secret, hasTLS := tlsSecret(ing, hp.host)
	if hasTLS {
		section, own := c.httpsListener(gw, hp.host, secret)
		if !own {
			out.Problems = append(out.Problems, fmt.Sprintf("host %q: its listener serves another Ingress's certificate (one per host); %s is not used", hp.host, secret))
		}
		parents = append(parents, parent(section))
	}
	redirect := in.forceSSLRedirect || in.sslRedirect && hasTLS
	if !redirect {
		parents = append(parents, parent(HTTPListener))
	}
	var hostnames []gwapiv1.Hostname
	if hp.host != "" {
		hostnames = []gwapiv1.Hostname{gwapiv1.Hostname(hp.host)}
	} else {
		out.Problems = append(out.Problems, "the rules without a host and the default backend: a Route without hostnames serves every host of the HTTP listener, "+
			"after the host's own Routes, where ingress-nginx serves them only for the hosts no Ingress names")
	}
	var rules []gwapiv1.HTTPRouteRule
	if in.appRoot != "" {
		rules = append(rules, redirectRule(exactMatch("/"), &gwapiv1.HTTPRequestRedirectFilter{
			Path:       &gwapiv1.HTTPPathModifier{Type: gwapiv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr(in.appRoot)},
			StatusCode: ptr(302),
		}))
	}
	var matches []gwapiv1.HTTPRouteMatch
	for _, p := range hp.paths {
		m := in.match(p)
		matches = append(matches, m)
		if in.redirect != nil {
			rules = append(rules, redirectRule(m, in.redirect))
			continue
		}
		rule := gwapiv1.HTTPRouteRule{Matches: []gwapiv1.HTTPRouteMatch{m}, Filters: in.filters()}
		where := fmt.Sprintf("host %q, path %q", hp.host, cmp.Or(p.Path, "/"))
		if ref, ok := c.backendRef(ing, p.Backend, where, out); ok {
			rule.BackendRefs = append(rule.BackendRefs, ref)
			rules = append(rules, c.addCanaries(&rule, ing, hp.host, p, where, out)...) // canary.go
		}
		rules = append(rules, rule)
	}
	if len(parents) > 0 {
		c.addRoute(ing, name, hostnames, parents, rules, out)
	}
	if redirect {
		var redirects []gwapiv1.HTTPRouteRule
		if in.appRoot != "" {
			redirects = append(redirects, rules[0]) // nginx's app-root comes first, on plain HTTP too
		}
		to := &gwapiv1.HTTPRequestRedirectFilter{Scheme: ptr("https"), StatusCode: ptr(308)}
		for _, m := range matches {
			redirects = append(redirects, redirectRule(m, to))
		}
		c.addRoute(ing, name+"-redirect", hostnames, []gwapiv1.ParentReference{parent(HTTPListener)}, redirects, out)
	}
}

func (c *converter) addRoute(ing *networkingv1.Ingress, name string, hostnames []gwapiv1.Hostname, parents []gwapiv1.ParentReference, rules []gwapiv1.HTTPRouteRule, out *Ingress) {
	c.out.HTTPRoutes = append(c.out.HTTPRoutes, &gwapiv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ing.Namespace, Name: name},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: parents},
			Hostnames:       hostnames,
			Rules:           rules,
		},
	})
	out.HTTPRoutes = append(out.HTTPRoutes, name)
}

func redirectRule(m gwapiv1.HTTPRouteMatch, f *gwapiv1.HTTPRequestRedirectFilter) gwapiv1.HTTPRouteRule {
	return gwapiv1.HTTPRouteRule{
		Matches: []gwapiv1.HTTPRouteMatch{m},
		Filters: []gwapiv1.HTTPRouteFilter{{Type: gwapiv1.HTTPRouteFilterRequestRedirect, RequestRedirect: f}},
	}
}

func exactMatch(path string) gwapiv1.HTTPRouteMatch {
	return gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: ptr(gwapiv1.PathMatchExact), Value: ptr(path)}}
}

// match is a path's match. Prefix and ImplementationSpecific are a
// PathPrefix (the Ingress front-end serves ImplementationSpecific as a
// segment prefix, as Contour does); with use-regex or a rewrite, every
// path of the Ingress is ingress-nginx's `~* "^<path>"`: a regular
// expression, case-insensitive, anchored at the start only, which is the
// RE2 below over the whole path.
func (in *intent) match(p networkingv1.HTTPIngressPath) gwapiv1.HTTPRouteMatch {
	path := cmp.Or(p.Path, "/")
	switch {
	case in.prefixIdiom:
		return gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: ptr(gwapiv1.PathMatchPathPrefix), Value: ptr(strings.TrimSuffix(path, idiomTail))}}
	case in.regex:
		return gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: ptr(gwapiv1.PathMatchRegularExpression), Value: ptr("(?i)(?:" + path + ").*")}}
	case p.PathType != nil && *p.PathType == networkingv1.PathTypeExact:
		return exactMatch(path)
	}
	return gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: ptr(gwapiv1.PathMatchPathPrefix), Value: ptr(path)}}
}

// backendRef is an Ingress backend's Service port as a backendRef, its
// port by number (a port name is resolved through the Service, which a
// backendRef cannot name). False, with a problem, when it names no
// Service port.
func (c *converter) backendRef(ing *networkingv1.Ingress, b networkingv1.IngressBackend, where string, out *Ingress) (gwapiv1.HTTPBackendRef, bool) {
	if b.Service == nil {
		out.Problems = append(out.Problems, fmt.Sprintf("%s: a resource backend has no Gateway API form: the rule has no backend (Gateway API answers it 500)", where))
		return gwapiv1.HTTPBackendRef{}, false
	}
	port := b.Service.Port.Number
	svc := c.st.Services[types.NamespacedName{Namespace: ing.Namespace, Name: b.Service.Name}]
	if b.Service.Port.Name != "" {
		port = 0
		if svc != nil {
			port = portNamed(svc, b.Service.Port.Name)
		}
		if port == 0 {
			out.Problems = append(out.Problems, fmt.Sprintf("%s: Service %s has no port named %q to give the backendRef's number: the rule has no backend (Gateway API answers it 500)", where, b.Service.Name, b.Service.Port.Name))
			return gwapiv1.HTTPBackendRef{}, false
		}
	} else if svc == nil {
		out.Problems = append(out.Problems, fmt.Sprintf("%s: Service %s not found: the backendRef names it all the same (Gateway API answers 500 where ingress-nginx answers 503)", where, b.Service.Name))
	}
	return gwapiv1.HTTPBackendRef{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{
		Name: gwapiv1.ObjectName(b.Service.Name), Port: ptr(port),
	}}}, true
}

// portNamed is the number of the Service's TCP port of that name; 0: none.
func portNamed(svc *kube.Service, name string) int32 {
	for _, p := range svc.Ports {
		if p.Name == name && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return p.Port
		}
	}
	return 0
}
