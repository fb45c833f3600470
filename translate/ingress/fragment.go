package ingress

import (
	"cmp"
	"fmt"
	"net/netip"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
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

// fragment is what one Ingress contributes, worked out from that Ingress and
// the objects it names alone (reads records which, as they were). Everything that depends on other Ingresses
// (conflicts, merging, certificates shared between hosts) happens later, in
// the merge, so a fragment can be reused for as long as its Ingress and those
// Services are unchanged.
type fragment struct {
	ingress *networkingv1.Ingress
	// serverSnippet is the server-snippet, translated (snippets.go); nil:
	// none.
	serverSnippet *snippet.Result
	// locationGzip are the gzip directives of its locations' snippets
	// (gzip.go), which a host's server-snippet gzip goes under.
	locationGzip snippet.Gzip
	aliases      []string // server-alias (alias.go)
	reads        reads
	routes       []hostRoute
	tls          []tlsRequest
	problems     []ir.Problem
	// wwwRedirects are the from-to-www redirects asked for (redirect.go).
	wwwRedirects []wwwRedirect
	// canary is set on a canary Ingress's fragment (canary.go): its routes
	// only add to mainline routes.
	canary *canaryIntent
	// appRoot is app-root's route for / of each host the Ingress routes
	// (redirect.go); nil: none.
	appRoot *ir.Route
	// errorRoutes are custom-http-errors' routes, one per host
	// (fallback.go).
	errorRoutes []hostRoute
	// clientCert is what the auth-tls keys ask of the hosts' clients
	// (clientcert.go); nil: nothing.
	clientCert *clientCertIntent
	// sslCiphers are the ssl-ciphers annotation's, for its hosts
	// (sslciphers.go); empty: none.
	sslCiphers string
	// passthrough: ssl-passthrough, with the serve flag (passthrough.go).
	passthrough bool
}

// reads are the objects a fragment looked up, as they were (nil: missing).
// A fragment stays valid for as long as each is the same object in the
// State (objects are never modified: a changed one is a new pointer).
type reads struct {
	services   map[types.NamespacedName]*kube.Service
	secrets    map[types.NamespacedName]*corev1.Secret
	configMaps map[types.NamespacedName]*corev1.ConfigMap
}

// unchanged reports whether every object read is the same in st. Parts of
// st that are the very maps of prev (the previous State) are skipped:
// nothing in them changed.
func (r *reads) unchanged(st, prev *kube.State) bool {
	return (prev != nil && sameMap(st.Services, prev.Services) || sameObjects(r.services, st.Services)) &&
		(prev != nil && sameMap(st.Secrets, prev.Secrets) || sameObjects(r.secrets, st.Secrets)) &&
		(prev != nil && sameMap(st.ConfigMaps, prev.ConfigMaps) || sameObjects(r.configMaps, st.ConfigMaps))
}

func sameObjects[V comparable](read, now map[types.NamespacedName]V) bool {
	for name, obj := range read {
		if now[name] != obj {
			return false
		}
	}
	return true
}

// hostRoute is a route for one host, before merging.
type hostRoute struct {
	host    string
	route   *ir.Route
	cluster *clusterRef // nil when the route answers directly
	where   location    // the field it comes from, for conflict messages
	ingress *networkingv1.Ingress
	nginx   nginxPath // for the host-wide regex mode (regex.go)
	// variants are routes with route's path, placed before it: a
	// configuration-snippet's branches (snippets.go).
	variants []*ir.Route
	// reselects are the rewrite ... last targets of the variants (and
	// the route), by their conditions (reselect.go).
	reselects map[string]snippet.Reselect
	// mirror is the cluster the route's policy mirrors to (mirror.go);
	// nil: none.
	mirror *clusterRef
}

// clusterRef is a cluster a route sends to: a resolved Service port with a
// cluster policy.
type clusterRef struct {
	name    string // ir.ClusterName(backend.name, policy)
	backend *backendRef
	policy  *ir.ClusterPolicy // nil: the default; an aggregate's: its first cluster's
	ir      *ir.Cluster       // made by cluster()
	// aggregate, when set, are the clusters this aggregate cluster sends
	// to by priority (fallback.go); backend is the first's.
	aggregate []*clusterRef
	// overTLS, when set, is the cluster that takes this one's requests
	// that arrived over TLS (backend-protocol AUTO_HTTP: upstream.go).
	// It is a cluster of its own, listed beside this one, and not part
	// of this one's value (sameAs).
	overTLS *clusterRef
}

// share is the ref's share of a Forward, with its cluster over TLS.
func (r *clusterRef) share(weight uint32) ir.WeightedCluster {
	wc := ir.WeightedCluster{Cluster: r.name, Weight: weight}
	if r.overTLS != nil {
		wc.TLSCluster = r.overTLS.name
	}
	return wc
}

// backendRef is a resolved Service port.
type backendRef struct {
	name         string
	service      types.NamespacedName
	port         kube.ServicePort
	externalName string // Envoy resolves it (no resolver: externalname.go)
	via          string // the ExternalName whose checked addresses are the endpoints
}

// tlsRequest is one spec.tls entry that passed the local checks.
type tlsRequest struct {
	where  string
	hosts  []string // normalized
	secret types.NamespacedName
}

// sameAs says whether two refs resolve a backend the same way.
func (r *backendRef) sameAs(o *backendRef) bool {
	return r.name == o.name && r.service == o.service && r.externalName == o.externalName && r.via == o.via && reflect.DeepEqual(r.port, o.port)
}

// sameAs says whether two refs make the same cluster.
func (r *clusterRef) sameAs(o *clusterRef) bool {
	return r.name == o.name && r.backend.sameAs(o.backend) && reflect.DeepEqual(r.policy, o.policy) && sameAggregate(r.aggregate, o.aggregate)
}

type fragmentBuilder struct {
	ing    *networkingv1.Ingress
	state  *kube.State
	opts   Options
	reg    *annotations.Registry
	frag   *fragment
	seen   map[routeKey]bool
	policy *ir.RoutePolicy // shared by every route of the Ingress; nil: none
	// globalAuth says that the policy's external authentication is the
	// ConfigMap's global-auth-url (globalauth.go).
	globalAuth bool
	// redirects are the redirects asked for beyond the policy.
	redirects redirectIntent
	rewrite   rewriteIntent
	affinity  *affinityIntent // affinity.go; nil: none
	src       *ir.Object      // see source
	// clusterPolicy is that of every cluster the Ingress's routes send
	// to; nil: the default.
	clusterPolicy *ir.ClusterPolicy
	// upstream is what the upstream keys ask per backend (upstream.go).
	upstream upstreamIntent
	fallback *fallbackIntent // fallback.go; nil: none
	mirror   *clusterRef     // mirror.go; nil: none
	// refused is set when an access control cannot be applied (refuse.go).
	refused bool
	// snippets is the configuration-snippet, translated (snippets.go);
	// nil: none. customHeaders are custom-headers', which an if block's
	// headers do not replace.
	snippets      *snippet.Result
	customHeaders []ir.Header
}

// buildFragment applies the Ingress rules that concern one Ingress alone.
func buildFragment(ing *networkingv1.Ingress, st *kube.State, opts Options, reg *annotations.Registry) *fragment {
	f := &fragmentBuilder{
		ing:   ing,
		state: st,
		opts:  opts,
		reg:   reg,
		frag:  &fragment{ingress: ing, reads: reads{services: map[types.NamespacedName]*kube.Service{}}},
		seen:  map[routeKey]bool{},
	}
	f.build()
	return f.frag
}

// maxMessage bounds a problem's message: it quotes user input, which may be
// huge, and ends up in Events and logs.
const maxMessage = 1024

func newProblem(ing *networkingv1.Ingress, reason, format string, args ...any) ir.Problem {
	msg := redactUserinfo(fmt.Sprintf(format, args...))
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "..."
	}
	return ir.Problem{
		Kind:      "Ingress",
		Namespace: ing.Namespace,
		Name:      ing.Name,
		Reason:    reason,
		Message:   msg,
	}
}

// redactUserinfo hides the user:password@ of every URL a message quotes:
// an auth-url or mirror-target holding one is refused, and the refusal,
// which quotes the value, goes to Events that anyone who can read the
// Ingress's namespace can read, and to logs.
func redactUserinfo(msg string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, "://")
		if i < 0 {
			break
		}
		b.WriteString(msg[:i+3])
		msg = msg[i+3:]
		// The authority ends at the first of these; userinfo is what
		// comes before an @ within it.
		end := strings.IndexAny(msg, "/?#\"' \t\r\n")
		if end < 0 {
			end = len(msg)
		}
		if at := strings.LastIndex(msg[:end], "@"); at >= 0 {
			b.WriteString("[redacted]")
			msg = msg[at:]
		}
	}
	b.WriteString(msg)
	return b.String()
}

// source is the routes' source: one value per Ingress, which its routes
// share.
func (f *fragmentBuilder) source() *ir.Object {
	if f.src == nil {
		f.src = &ir.Object{Kind: "Ingress", Namespace: f.ing.Namespace, Name: f.ing.Name}
	}
	return f.src
}

func (f *fragmentBuilder) problem(reason, format string, args ...any) {
	f.frag.problems = append(f.frag.problems, newProblem(f.ing, reason, format, args...))
}

// objects looks up objects in the State, recording the fragment's
// dependency on each (groups.go).
func (f *fragmentBuilder) objects() objectReads {
	return objectReads{state: f.state, reads: &f.frag.reads}
}

// secret looks up a Secret an annotation names and records the dependency.
func (f *fragmentBuilder) secret(name types.NamespacedName) *corev1.Secret {
	return f.objects().secret(name)
}

// configMap looks up a ConfigMap an annotation names and records the
// dependency.
func (f *fragmentBuilder) configMap(name types.NamespacedName) *corev1.ConfigMap {
	return f.objects().configMap(name)
}

// service looks a Service up and records the dependency.
func (f *fragmentBuilder) service(name types.NamespacedName) *kube.Service {
	return f.objects().service(name)
}

// read looks name up in objs and records in reads what it found there
// (nil too: a missing object that appears must count as a change).
func read[V any](objs map[types.NamespacedName]V, reads *map[types.NamespacedName]V, name types.NamespacedName) V {
	v := objs[name]
	if *reads == nil {
		*reads = map[types.NamespacedName]V{}
	}
	(*reads)[name] = v
	return v
}

func (f *fragmentBuilder) build() {
	ing := f.ing
	f.readAnnotations()
	// Routes are kept for as long as the Ingress is unchanged: sized once.
	n := 0
	if ing.Spec.DefaultBackend != nil {
		n++
	}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP != nil {
			n += len(rule.HTTP.Paths)
		}
	}
	f.frag.routes = make([]hostRoute, 0, min(n, MaxPathsPerIngress+1))
	if def := ing.Spec.DefaultBackend; def != nil {
		f.addRoute(ir.WildcardHost, ir.PathPrefix, "/", nil, nginxPath{raw: "/"}, def, location{label: defaultBackendField})
	}
	paths := 0
rules:
	for i, rule := range ing.Spec.Rules {
		where := fmt.Sprintf("spec.rules[%d]", i)
		host, ok := f.normalizeHost(rule.Host, where)
		if !ok || rule.HTTP == nil {
			continue
		}
		for j, p := range rule.HTTP.Paths {
			where := location{rule: int32(i), path: int32(j)}
			if paths++; paths > MaxPathsPerIngress {
				f.problem("TooManyPaths", "%s: more than %d paths in one Ingress: this and later paths ignored", where, MaxPathsPerIngress)
				break rules
			}
			backend := p.Backend
			raw := cmp.Or(p.Path, "/")
			exact := p.PathType != nil && *p.PathType == networkingv1.PathTypeExact
			if route, isRegex, ok := f.regexRoute(raw, where); isRegex {
				if ok {
					f.addRoute(host, ir.PathRegex, raw, route, nginxPath{raw: raw, exact: exact, regex: true}, &backend, where)
				}
				continue
			}
			pathType, path, ok := f.normalizePath(p, where)
			if !ok {
				continue
			}
			f.addRoute(host, pathType, path, nil, nginxPath{raw: raw, exact: exact}, &backend, where)
		}
	}
	f.applyAffinity()
	if f.refused {
		f.applyRefusal() // refuse.go: its paths answer 503, nothing else
		return
	}
	if f.frag.canary != nil {
		return // a canary adds backends, never hosts, certificates or redirects
	}
	f.addRedirects()
	f.addTLS()
}

// addRoute adds a route for a path; route, when set, is its match and
// policy already made (a regular expression path), else they are made here.
func (f *fragmentBuilder) addRoute(host string, pathType ir.PathType, path string, route *ir.Route, nginx nginxPath, backend *networkingv1.IngressBackend, where location) {
	key := routeKey{host: host, pathType: pathType, path: path}
	if f.seen[key] {
		f.problem("DuplicateRule", "%s: host %q, %s path %q is already defined earlier in this Ingress: ignored", where, host, pathType, path)
		return
	}
	f.seen[key] = true
	if route == nil {
		route = &ir.Route{
			Match:  ir.Match{PathType: pathType, Path: path},
			Policy: f.policy,
			Source: f.source(),
		}
	}
	if need := f.opts.config.logNames(); need.Any() || f.opts.RequestMetrics {
		route.Log = routeLog(f.ing, backend, need, f.opts.RequestMetrics, nginx.raw) // accesslog.go
	}
	route.Policy = f.exemptFromTLSRedirect(nginx.raw, route.Policy) // tlsexempt.go
	route.Policy = f.exemptFromGlobalAuth(nginx.raw, route.Policy)  // globalauth.go
	var cluster *clusterRef
	problemsBefore := len(f.frag.problems)
	if ref, ok := f.resolveBackend(backend, where); ok && f.upstream.denied == "" {
		cluster = f.withFallback(f.newClusterRef(ref, f.backendPolicy(ref)))
		route.Action.Forward = &ir.Forward{Clusters: []ir.WeightedCluster{cluster.share(1)}}
	} else if fb, ok := f.insteadOf(backend, route, problemsBefore); ok {
		cluster = fb
		route.Action.Forward = &ir.Forward{Clusters: []ir.WeightedCluster{cluster.share(1)}}
	} else {
		route.Action.Direct = &ir.DirectResponse{Status: 503, Body: "no healthy upstream: backend unavailable\n"}
	}
	if cluster != nil {
		f.addErrorPages(host, route, backend)
	}
	reselects := snippetReselects(route, f.snippets)                // reselect.go
	variants := snippetVariants(route, f.snippets, f.customHeaders) // snippets.go
	f.frag.routes = append(f.frag.routes, hostRoute{host: host, route: route, cluster: cluster, where: where, ingress: f.ing, nginx: nginx, mirror: f.mirror, variants: variants, reselects: reselects})
}

// normalizeHost validates a rule's host and returns the virtual host name.
func (f *fragmentBuilder) normalizeHost(host, where string) (string, bool) {
	if host == "" {
		return ir.WildcardHost, true
	}
	host = strings.ToLower(host)
	name := strings.TrimPrefix(host, "*.")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || strings.Contains(name, "*") {
		f.problem("InvalidHost", "%s: host %q is not a valid DNS name or *.wildcard: rule ignored", where, host)
		return "", false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		f.problem("InvalidHost", "%s: host %q is an IP address, which Ingress hosts may not be: rule ignored", where, host)
		return "", false
	}
	return host, true
}

// normalizePath validates a path and applies the Ingress pathType rules.
// ImplementationSpecific is treated as Prefix (segment-wise), as Contour does
// for paths without regex characters.
func (f *fragmentBuilder) normalizePath(p networkingv1.HTTPIngressPath, where location) (ir.PathType, string, bool) {
	path := p.Path
	pathType := ir.PathPrefix
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		pathType = ir.PathExact
	}
	if path == "" {
		if pathType == ir.PathExact {
			f.problem("InvalidPath", "%s: an Exact path must not be empty: path ignored", where)
			return "", "", false
		}
		path = "/"
	}
	if len(path) > MaxPathLength {
		f.problem("InvalidPath", "%s: path is %d bytes long, over the limit of %d: path ignored", where, len(path), MaxPathLength)
		return "", "", false
	}
	if !strings.HasPrefix(path, "/") {
		f.problem("InvalidPath", "%s: path %q must start with '/': path ignored", where, path)
		return "", "", false
	}
	for _, r := range path {
		// Control characters, spaces and non-ASCII never reach a valid
		// request line; ? and # would never match a path Envoy compares.
		if r < 0x21 || r > 0x7e || r == '?' || r == '#' {
			f.problem("InvalidPath", "%s: path %q contains a character not allowed in a path: path ignored", where, path)
			return "", "", false
		}
	}
	if pathType == ir.PathPrefix {
		// A Prefix's trailing slash is ignored: /foo/ matches /foo.
		path = strings.TrimRight(path, "/")
		if path == "" {
			path = "/"
		}
	}
	return pathType, path, true
}

// resolveBackend finds the Service port a backend names and returns a
// reference to it. It reports false, with a problem, when the route can only
// answer 503.
func (f *fragmentBuilder) resolveBackend(backend *networkingv1.IngressBackend, where location) (*backendRef, bool) {
	if backend.Resource != nil {
		f.problem("UnsupportedBackend", "%s: resource backends are not supported: answering 503", where)
		return nil, false
	}
	if backend.Service == nil {
		f.problem("InvalidBackend", "%s: backend names no service: answering 503", where)
		return nil, false
	}
	svcName := types.NamespacedName{Namespace: f.ing.Namespace, Name: backend.Service.Name}
	if errs := validation.IsDNS1035Label(backend.Service.Name); len(errs) > 0 {
		f.problem("InvalidBackend", "%s: %q is not a valid Service name: answering 503", where, backend.Service.Name)
		return nil, false
	}
	svc := f.service(svcName)
	if svc == nil {
		f.problem("ServiceNotFound", "%s: service %s not found: answering 503", where, svcName)
		return nil, false
	}
	port, ok := findServicePort(svc, backend.Service.Port)
	if !ok && svc.Type == corev1.ServiceTypeExternalName && len(svc.Ports) == 0 && backend.Service.Port.Number > 0 {
		// An ExternalName Service needs no ports: the name is reached on
		// the port the Ingress gives, as ingress-nginx does.
		port, ok = kube.ServicePort{Port: backend.Service.Port.Number, Protocol: corev1.ProtocolTCP}, true
	}
	if !ok {
		want := backend.Service.Port.Name
		if want == "" {
			want = fmt.Sprint(backend.Service.Port.Number)
		}
		f.problem("ServicePortNotFound", "%s: service %s has no port %s: answering 503", where, svcName, want)
		return nil, false
	}
	name := fmt.Sprintf("%s/%s/%d", svcName.Namespace, svcName.Name, port.Port)
	if svc.Type == corev1.ServiceTypeExternalName {
		return f.externalNameBackend(svc, port, name, where)
	}
	return &backendRef{name: name, service: svcName, port: port}, true
}

func findServicePort(svc *kube.Service, want networkingv1.ServiceBackendPort) (kube.ServicePort, bool) {
	for _, p := range svc.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if want.Name != "" && p.Name == want.Name || want.Name == "" && p.Port == want.Number {
			return p, true
		}
	}
	return kube.ServicePort{}, false
}

// cluster is the IR value of the cluster, made once per ref.
func (r *clusterRef) cluster() *ir.Cluster {
	if r.ir == nil && len(r.aggregate) > 0 {
		r.ir = r.aggregateCluster()
	}
	if r.ir == nil {
		r.ir = &ir.Cluster{Name: r.name, Backend: r.backend.name, Policy: r.policy}
	}
	return r.ir
}
