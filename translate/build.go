package translate

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/kube"
)

// Limits that keep one Ingress from hurting everyone else's configuration.
const (
	// MaxPathsPerIngress caps the paths (over all rules) taken from one
	// Ingress; the rest are ignored and reported.
	MaxPathsPerIngress = 1000
	// MaxPathLength caps a path's length; Envoy rejects request headers over
	// 60 KiB anyway, and no real route needs more.
	MaxPathLength = 4096
)

// Annotations we read.
const (
	AnnotationForceSSLRedirect       = "ingress-xds.io/force-ssl-redirect"
	AnnotationForceSSLRedirectLegacy = "ingress.kubernetes.io/force-ssl-redirect"
)

// BuildModel applies Ingress semantics to the state. Every Ingress in the
// state is taken as ours (kube has already filtered by class).
func BuildModel(st *kube.State, opts Options) *Model {
	b := &builder{
		state:    st,
		opts:     opts,
		vhosts:   map[string]*VirtualHost{},
		seen:     map[routeKey]types.NamespacedName{},
		backends: map[string]*Backend{},
		tls:      map[string]tlsHost{},
		certs:    map[types.NamespacedName]certResult{},
	}
	// Conflicts go to the oldest Ingress, as with peers; ties by name. An
	// Ingress with no creation time (from a file) counts as the newest.
	ingresses := append([]*networkingv1.Ingress(nil), st.Ingresses...)
	sort.SliceStable(ingresses, func(i, j int) bool {
		a, c := ingresses[i], ingresses[j]
		if az, cz := a.CreationTimestamp.IsZero(), c.CreationTimestamp.IsZero(); az != cz {
			return cz
		}
		if !a.CreationTimestamp.Equal(&c.CreationTimestamp) {
			return a.CreationTimestamp.Before(&c.CreationTimestamp)
		}
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		return a.Name < c.Name
	})
	for _, ing := range ingresses {
		b.addIngress(ing)
	}
	return b.model()
}

type routeKey struct {
	host     string
	pathType PathType
	path     string
}

type builder struct {
	state    *kube.State
	opts     Options
	vhosts   map[string]*VirtualHost
	seen     map[routeKey]types.NamespacedName
	backends map[string]*Backend
	problems []Problem
	// tls maps a host to the certificate that serves it (first, oldest
	// Ingress wins); certs caches Secret validation.
	tls   map[string]tlsHost
	certs map[types.NamespacedName]certResult
}

// maxMessage bounds a problem's message: it quotes user input, which may be
// huge, and ends up in Events and logs.
const maxMessage = 1024

func (b *builder) problem(ing *networkingv1.Ingress, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "..."
	}
	b.problems = append(b.problems, Problem{
		Kind:      "Ingress",
		Namespace: ing.Namespace,
		Name:      ing.Name,
		Reason:    reason,
		Message:   msg,
	})
}

func (b *builder) addIngress(ing *networkingv1.Ingress) {
	redirect := forceSSLRedirect(ing)
	if def := ing.Spec.DefaultBackend; def != nil {
		b.addRoute(ing, WildcardHost, PathPrefix, "/", def, "spec.defaultBackend", redirect)
	}
	paths := 0
	for i, rule := range ing.Spec.Rules {
		where := fmt.Sprintf("spec.rules[%d]", i)
		host, ok := b.normalizeHost(ing, rule.Host, where)
		if !ok {
			continue
		}
		if rule.HTTP == nil {
			continue
		}
		for j, p := range rule.HTTP.Paths {
			where := fmt.Sprintf("%s.http.paths[%d]", where, j)
			if paths++; paths > MaxPathsPerIngress {
				b.problem(ing, "TooManyPaths", "%s: more than %d paths in one Ingress: this and later paths ignored", where, MaxPathsPerIngress)
				b.addTLS(ing)
				return
			}
			pathType, path, ok := b.normalizePath(ing, p, where)
			if !ok {
				continue
			}
			backend := p.Backend
			b.addRoute(ing, host, pathType, path, &backend, where, redirect)
		}
	}
	b.addTLS(ing)
}

func forceSSLRedirect(ing *networkingv1.Ingress) bool {
	for _, key := range []string{AnnotationForceSSLRedirect, AnnotationForceSSLRedirectLegacy} {
		if strings.EqualFold(strings.TrimSpace(ing.Annotations[key]), "true") {
			return true
		}
	}
	return false
}

// normalizeHost validates a rule's host and returns the virtual host name.
func (b *builder) normalizeHost(ing *networkingv1.Ingress, host, where string) (string, bool) {
	if host == "" {
		return WildcardHost, true
	}
	host = strings.ToLower(host)
	name := strings.TrimPrefix(host, "*.")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || strings.Contains(name, "*") {
		b.problem(ing, "InvalidHost", "%s: host %q is not a valid DNS name or *.wildcard: rule ignored", where, host)
		return "", false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		b.problem(ing, "InvalidHost", "%s: host %q is an IP address, which Ingress hosts may not be: rule ignored", where, host)
		return "", false
	}
	return host, true
}

// normalizePath validates a path and applies the Ingress pathType rules.
// ImplementationSpecific is treated as Prefix (segment-wise), as Contour does
// for paths without regex characters.
func (b *builder) normalizePath(ing *networkingv1.Ingress, p networkingv1.HTTPIngressPath, where string) (PathType, string, bool) {
	path := p.Path
	pathType := PathPrefix
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		pathType = PathExact
	}
	if path == "" {
		if pathType == PathExact {
			b.problem(ing, "InvalidPath", "%s: an Exact path must not be empty: path ignored", where)
			return "", "", false
		}
		path = "/"
	}
	if len(path) > MaxPathLength {
		b.problem(ing, "InvalidPath", "%s: path is %d bytes long, over the limit of %d: path ignored", where, len(path), MaxPathLength)
		return "", "", false
	}
	if !strings.HasPrefix(path, "/") {
		b.problem(ing, "InvalidPath", "%s: path %q must start with '/': path ignored", where, path)
		return "", "", false
	}
	for _, r := range path {
		// Control characters, spaces and non-ASCII never reach a valid
		// request line; ? and # would never match a path Envoy compares.
		if r < 0x21 || r > 0x7e || r == '?' || r == '#' {
			b.problem(ing, "InvalidPath", "%s: path %q contains a character not allowed in a path: path ignored", where, path)
			return "", "", false
		}
	}
	if pathType == PathPrefix {
		// A Prefix's trailing slash is ignored: /foo/ matches /foo.
		path = strings.TrimRight(path, "/")
		if path == "" {
			path = "/"
		}
	}
	return pathType, path, true
}

func (b *builder) addRoute(ing *networkingv1.Ingress, host string, pathType PathType, path string, backend *networkingv1.IngressBackend, where string, redirect bool) {
	ingName := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
	key := routeKey{host: host, pathType: pathType, path: path}
	if owner, dup := b.seen[key]; dup {
		if owner == ingName {
			b.problem(ing, "DuplicateRule", "%s: host %q, %s path %q is already defined earlier in this Ingress: ignored", where, host, pathType, path)
		} else {
			b.problem(ing, "RuleConflict", "%s: host %q, %s path %q is already served by the older Ingress %s: ignored", where, host, pathType, path, owner)
		}
		return
	}
	b.seen[key] = ingName
	route := &Route{PathType: pathType, Path: path, Ingress: ingName, RedirectToHTTPS: redirect}
	if name, ok := b.resolveBackend(ing, backend, where); ok {
		route.Backend = name
	} else {
		route.Direct = &DirectResponse{Status: 503, Body: "no healthy upstream: backend unavailable\n"}
	}
	vh := b.vhosts[host]
	if vh == nil {
		vh = &VirtualHost{Host: host}
		b.vhosts[host] = vh
	}
	vh.Routes = append(vh.Routes, route)
}

// resolveBackend finds the Service port a backend names and registers the
// Backend for it. It reports false, with a problem, when the route can only
// answer 503.
func (b *builder) resolveBackend(ing *networkingv1.Ingress, backend *networkingv1.IngressBackend, where string) (string, bool) {
	if backend.Resource != nil {
		b.problem(ing, "UnsupportedBackend", "%s: resource backends are not supported: answering 503", where)
		return "", false
	}
	if backend.Service == nil {
		b.problem(ing, "InvalidBackend", "%s: backend names no service: answering 503", where)
		return "", false
	}
	svcName := types.NamespacedName{Namespace: ing.Namespace, Name: backend.Service.Name}
	if errs := validation.IsDNS1035Label(backend.Service.Name); len(errs) > 0 {
		b.problem(ing, "InvalidBackend", "%s: %q is not a valid Service name: answering 503", where, backend.Service.Name)
		return "", false
	}
	svc := b.state.Services[svcName]
	if svc == nil {
		b.problem(ing, "ServiceNotFound", "%s: service %s not found: answering 503", where, svcName)
		return "", false
	}
	port, ok := findServicePort(svc, backend.Service.Port)
	if !ok {
		want := backend.Service.Port.Name
		if want == "" {
			want = fmt.Sprint(backend.Service.Port.Number)
		}
		b.problem(ing, "ServicePortNotFound", "%s: service %s has no port %s: answering 503", where, svcName, want)
		return "", false
	}
	name := fmt.Sprintf("%s/%s/%d", svcName.Namespace, svcName.Name, port.Port)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return b.externalNameBackend(ing, svc, port, name, where)
	}
	if _, ok := b.backends[name]; !ok {
		b.backends[name] = &Backend{
			Name:      name,
			Service:   svcName,
			Port:      port.Port,
			Endpoints: readyEndpoints(b.state.EndpointSlices[svcName], port),
		}
	}
	return name, true
}

// externalNameBackend serves an ExternalName Service, which only an operator
// may allow: it lets any namespace send traffic to any DNS name, a known hole
// in peers. Loopback is refused even then, so an Ingress can never reach the
// proxy's own admin interface.
func (b *builder) externalNameBackend(ing *networkingv1.Ingress, svc *corev1.Service, port corev1.ServicePort, name, where string) (string, bool) {
	svcName := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	if !b.opts.EnableExternalName {
		b.problem(ing, "ExternalNameRefused", "%s: service %s is of type ExternalName, which is disabled (--enable-external-name): answering 503", where, svcName)
		return "", false
	}
	target := strings.ToLower(strings.TrimSuffix(svc.Spec.ExternalName, "."))
	if isLocalName(target) {
		b.problem(ing, "ExternalNameRefused", "%s: service %s points at %q, a local address: answering 503", where, svcName, svc.Spec.ExternalName)
		return "", false
	}
	if _, err := netip.ParseAddr(target); err != nil && len(validation.IsDNS1123Subdomain(target)) > 0 {
		b.problem(ing, "ExternalNameRefused", "%s: service %s has an invalid externalName %q: answering 503", where, svcName, svc.Spec.ExternalName)
		return "", false
	}
	if port.Port < 1 || port.Port > 65535 {
		b.problem(ing, "ServicePortNotFound", "%s: service %s port %d is not a valid port: answering 503", where, svcName, port.Port)
		return "", false
	}
	if _, ok := b.backends[name]; !ok {
		b.backends[name] = &Backend{Name: name, Service: svcName, Port: port.Port, ExternalName: target}
	}
	return name, true
}

// isLocalName reports whether a name or address refers to this machine.
func isLocalName(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && (ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast())
}

func findServicePort(svc *corev1.Service, want networkingv1.ServiceBackendPort) (corev1.ServicePort, bool) {
	for _, p := range svc.Spec.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if want.Name != "" && p.Name == want.Name || want.Name == "" && p.Port == want.Number {
			return p, true
		}
	}
	return corev1.ServicePort{}, false
}

// readyEndpoints collects the ready addresses serving a Service port from
// all of the Service's EndpointSlices. EndpointSlice ports carry the Service
// port's name, with the target port already resolved to a number.
func readyEndpoints(slices []*discoveryv1.EndpointSlice, svcPort corev1.ServicePort) []Endpoint {
	seen := map[Endpoint]bool{}
	var out []Endpoint
	for _, slice := range slices {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 && slice.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		var port int32
		found := false
		for _, p := range slice.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name != svcPort.Name || p.Port == nil {
				continue
			}
			if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
				continue
			}
			port, found = *p.Port, true
			break
		}
		if !found || port < 1 || port > 65535 {
			continue
		}
		for _, ep := range slice.Endpoints {
			// A nil ready condition means ready (API contract); terminating
			// endpoints report ready=false and are drained by leaving them out.
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, addr := range ep.Addresses {
				ip, err := netip.ParseAddr(addr)
				if err != nil || ip.Zone() != "" {
					continue
				}
				e := Endpoint{Address: ip.String(), Port: port}
				if !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Address != out[j].Address {
			return out[i].Address < out[j].Address
		}
		return out[i].Port < out[j].Port
	})
	return out
}

func (b *builder) model() *Model {
	m := &Model{Problems: b.problems}
	used := map[string]bool{}
	for _, vh := range b.vhosts {
		sortRoutes(vh.Routes)
		if t, ok := b.tls[vh.Host]; ok {
			vh.Certificate = t.cert
			used[t.cert] = true
		}
		m.VirtualHosts = append(m.VirtualHosts, vh)
	}
	for _, c := range b.certs {
		if c.cert != nil && used[c.cert.Name] {
			m.Certificates = append(m.Certificates, c.cert)
		}
	}
	sort.Slice(m.Certificates, func(i, j int) bool { return m.Certificates[i].Name < m.Certificates[j].Name })
	sort.Slice(m.VirtualHosts, func(i, j int) bool { return m.VirtualHosts[i].Host < m.VirtualHosts[j].Host })
	for _, be := range b.backends {
		m.Backends = append(m.Backends, be)
	}
	sort.Slice(m.Backends, func(i, j int) bool { return m.Backends[i].Name < m.Backends[j].Name })
	sort.SliceStable(m.Problems, func(i, j int) bool {
		a, c := m.Problems[i], m.Problems[j]
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		if a.Name != c.Name {
			return a.Name < c.Name
		}
		return a.Message < c.Message
	})
	return m
}

// sortRoutes puts routes in Envoy match order (first match wins): every
// Exact route before any Prefix (Exact beats Prefix), and longer prefixes
// before shorter ones (the longest prefix wins).
func sortRoutes(routes []*Route) {
	sort.Slice(routes, func(i, j int) bool {
		a, b := routes[i], routes[j]
		if a.PathType != b.PathType {
			return a.PathType == PathExact
		}
		if len(a.Path) != len(b.Path) {
			return len(a.Path) > len(b.Path)
		}
		return a.Path < b.Path
	})
}
