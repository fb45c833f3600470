package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// translateFlags registers the flags that shape translation, shared by
// serve and translate so that translate prints exactly what serve publishes.
type translateFlags struct {
	httpPort           uint
	listenAddress      string
	httpsPort          uint
	enableExternalName bool
	annotationsPrefix  string
	// allowedResponseHeaders are the names custom-headers may set, as
	// ingress-nginx's global-allowed-response-headers.
	allowedResponseHeaders string
	authzAddress           string
	// unsupportedAnnotations is what becomes of an Ingress carrying an
	// access control that cannot be applied: refuse or ignore.
	unsupportedAnnotations string
	// enableSSLPassthrough honours ssl-passthrough, as ingress-nginx's
	// --enable-ssl-passthrough.
	enableSSLPassthrough bool
	// trustedForwardedHops is how many proxies in front of Envoy are
	// trusted to append the client's address to X-Forwarded-For.
	trustedForwardedHops uint
	// escapedSlashes is what Envoy does with a path holding %2F.
	escapedSlashes string
	// externalName is how ExternalName Services are resolved
	// (externalname.go).
	externalName externalNameFlags
	// configMap is ingress-nginx's controller ConfigMap, NAMESPACE/NAME.
	configMap string
	// nginxDefaults gives every Ingress ingress-nginx's defaults.
	nginxDefaults bool
	// vhds sends the plain-HTTP virtual hosts over VHDS.
	vhds bool
	// deltaVHDS sends them over VHDS to delta Envoys alone.
	deltaVHDS bool
	// onDemandClusters has Envoy fetch a route's cluster on its first request.
	onDemandClusters bool
	// requestMetrics has each Envoy send its requests' figures to the
	// authorisation service beside it, which counts ingress-nginx's
	// request metrics.
	requestMetrics bool
	// routeScopes splits the plain-HTTP route configuration in that many,
	// or as many as the hosts ask for.
	routeScopes routeScopesFlag
	// gatewayController is the GatewayClass controllerName served.
	gatewayController string
	// gatewayOwnAddresses gives each Gateway Envoy ports of its own.
	gatewayOwnAddresses bool
}

func (t *translateFlags) register(fs *flag.FlagSet) {
	fs.UintVar(&t.httpPort, "http-port", 8080, "port of Envoy's HTTP listener")
	fs.StringVar(&t.listenAddress, "listen-address", "0.0.0.0", "address Envoy's listeners bind: 0.0.0.0 takes IPv4 clients; :: takes IPv4 and IPv6 clients on one socket, for dual-stack and IPv6 clusters, where every Envoy's node has IPv6 (a node without cannot bind it; the ConfigMap's disable-ipv6 true makes it 0.0.0.0)")
	fs.UintVar(&t.httpsPort, "https-port", 8443, "port of Envoy's HTTPS listener (0 disables TLS)")
	fs.BoolVar(&t.enableSSLPassthrough, "enable-ssl-passthrough", false, "honour ssl-passthrough: a host's TLS connections go, by SNI, to its backend as they are (as ingress-nginx's flag); without it the annotation is reported and ignored")
	fs.BoolVar(&t.enableExternalName, "enable-external-name", false, "allow ExternalName Services as backends, and mirror-target (any namespace can then reach any DNS name)")
	t.externalName.register(fs)
	fs.StringVar(&t.unsupportedAnnotations, "unsupported-annotations", "refuse", "what becomes of an Ingress carrying an annotation ingress-xds does not apply that may hold an access rule (a snippet, ModSecurity, an access control it cannot honour): refuse (its paths answer 503) or ignore (it is served without the annotation; for operators who have audited them). An access control it does apply but cannot apply as written (a value that does not parse, a Secret missing) refuses either way")
	fs.UintVar(&t.trustedForwardedHops, "trusted-forwarded-hops", 0, "how many proxies in front of Envoy (load balancers) append the client's address to X-Forwarded-For and are trusted to: the client address that source ranges and rate limits see is the one that many hops from the header's right. 0: the connection's peer, whatever the header says, and the backend's X-Forwarded-Host, -Port and -Proto are the request's (as ingress-nginx's use-forwarded-headers: false); above 0 the X-Forwarded-* headers those proxies set are kept. Set it only when every client comes through those proxies, or clients can choose their address and the headers backends build links from")
	fs.StringVar(&t.escapedSlashes, "escaped-slashes", "redirect", "what Envoy does with a request whose path holds an escaped slash (%2F, %5C): redirect (to the decoded path, which is then routed and checked as any other), forward (route and forward it decoded), reject (400), or keep (route and forward it as sent, as ingress-nginx forwards it, for backends that need %2F; a path-scoped access control such as a source range or authentication on /admin can then be passed by with /admin%2Fx reaching another Ingress's /)")
	fs.StringVar(&t.annotationsPrefix, "annotations-prefix", annotations.NginxPrefix, "the prefix of ingress-nginx's annotations (its --annotations-prefix)")
	fs.StringVar(&t.allowedResponseHeaders, "global-allowed-response-headers", "", "comma-separated header names the custom-headers annotation may set (as ingress-nginx's global-allowed-response-headers; none by default: an Ingress setting any other answers 503)")
	fs.StringVar(&t.configMap, "configmap", "", "NAMESPACE/NAME of ingress-nginx's controller ConfigMap (its --configmap): its keys are every Ingress's defaults, an Ingress's annotations override them, and a change applies without a restart (docs/configmap.md); with -f, the ConfigMap is one of the manifests")
	fs.BoolVar(&t.nginxDefaults, "nginx-defaults", false, "give every Ingress ingress-nginx's defaults where they differ from Envoy's, under --configmap's keys (on by default with --controller-class k8s.io/ingress-nginx): a 1m body limit, a 5 s connect timeout, 60 s between reads and sends, ssl-redirect for TLS hosts (with the 308), HSTS on HTTPS, an access log of every request on Envoy's standard output in ingress-nginx's format, request headers named with an underscore dropped, 60 s to send a request's headers, 128 HTTP/2 streams a connection, no TLS session tickets and 10 m sessions (docs/configmap.md)")
	fs.StringVar(&t.authzAddress, "authz-address", envoy.DefaultAuthzAddress, "ip:port where each Envoy calls the authorisation service beside it (ingress-xds authz --listen)")
	fs.BoolVar(&t.vhds, "vhds", false, "send the HTTP listener's virtual hosts over VHDS, each a resource of its own, so that an Ingress change sends Envoy the one virtual host it touched rather than a route configuration of every host; every Envoy must use delta xDS (bootstrap --delta), which VHDS requires (docs/benchmarks.md, issue 18)")
	fs.BoolVar(&t.deltaVHDS, "delta-vhds", true, "while the HTTP listener has no route scopes (--route-scopes), send Envoys on delta xDS (bootstrap's default) its virtual hosts over VHDS, each a resource of its own, so that an Ingress change sends each the one virtual host it touched rather than a route configuration of every host; SotW Envoys get the route configuration whole, as VHDS needs delta xDS (docs/benchmarks.md, issue 31)")
	fs.BoolVar(&t.requestMetrics, "request-metrics", false, "have each Envoy send every request's figures over its gRPC access log to the authorisation service beside it (--authz-address), which counts them as ingress-nginx's request metrics (nginx_ingress_controller_requests, ...) and serves them on its own --metrics-address (docs/observability.md)")
	fs.BoolVar(&t.onDemandClusters, "on-demand-clusters", true, "have each Envoy on delta xDS (bootstrap's default) fetch a route's cluster when a request first needs it (on-demand CDS), rather than hold every cluster: an Envoy then holds the clusters its traffic uses, and the first request to a cluster waits for it to come (docs/benchmarks.md, issue 18); SotW Envoys still get every cluster")
	fs.StringVar(&t.gatewayController, "gateway-controller-name", gatewayapi.DefaultControllerName, "the spec.controllerName of the GatewayClasses whose Gateways and HTTPRoutes are served (docs/gateway-api.md)")
	fs.BoolVar(&t.gatewayOwnAddresses, "gateway-own-addresses", false, "serve each Gateway's listener ports on Envoy ports of its own, apart from every other Gateway's and Ingress's, rather than on --http-port and --https-port beside them; the leader makes a Service per Gateway in --envoy-namespace, selecting the --envoy-selector pods (--gateway-service-type), whose address is the Gateway's (docs/gateway-api.md, \"How a Gateway maps onto the Envoy fleet\")")
	t.routeScopes = routeScopesFlag{auto: true}
	fs.Var(&t.routeScopes, "route-scopes", "split the HTTP listener's routes into this many route configurations (Envoy's scoped routes), each host in the one its name hashes to, so that an Ingress change has each Envoy rebuild that one rather than a table of every host; SotW and delta Envoys alike; a power of two, each of whose log2 bits costs each request two regular expressions over its Host to pick its scope. auto: none below "+strconv.Itoa(envoy.AutoRouteScopesFrom)+" hosts, above it one per "+strconv.Itoa(envoy.HostsPerAutoRouteScope)+" or so (off with --vhds); 0: one route configuration (docs/benchmarks.md, issues 18 and 31)")
}

// nginxDefaultsByClass turns --nginx-defaults on when the Ingresses served
// are ingress-nginx's (controllerClass k8s.io/ingress-nginx) and the flag
// is not given: they were written against ingress-nginx's defaults (a 1m
// body limit, the buffered request body, ssl-redirect for TLS hosts, ...),
// and a cluster taking them over must not drop those silently. An
// explicit --nginx-defaults=false wins. Called once fs is parsed.
func (t *translateFlags) nginxDefaultsByClass(fs *flag.FlagSet, controllerClass string) {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "nginx-defaults" })
	if !given && controllerClass == kube.NginxControllerName {
		t.nginxDefaults = true
	}
}

func (t *translateFlags) validate() error {
	if t.httpPort == 0 || t.httpPort > 65535 {
		return fmt.Errorf("--http-port %d is not a port", t.httpPort)
	}
	if t.httpsPort > 65535 || t.httpsPort == t.httpPort {
		return fmt.Errorf("--https-port %d is not a port distinct from --http-port", t.httpsPort)
	}
	if _, err := netip.ParseAddr(t.listenAddress); err != nil {
		return fmt.Errorf("--listen-address %q is not an IP address", t.listenAddress)
	}
	if errs := validation.IsDNS1123Subdomain(t.annotationsPrefix); len(errs) > 0 || t.annotationsPrefix == annotations.OwnPrefix {
		return fmt.Errorf("--annotations-prefix %q is not a DNS name other than %s", t.annotationsPrefix, annotations.OwnPrefix)
	}
	if ap, err := netip.ParseAddrPort(t.authzAddress); err != nil || ap.Port() == 0 {
		return fmt.Errorf("--authz-address %q is not an ip:port", t.authzAddress)
	}
	if err := t.externalName.validate(); err != nil {
		return err
	}
	if _, err := responseHeaderNames(t.allowedResponseHeaders); err != nil {
		return err
	}
	if t.unsupportedAnnotations != "refuse" && t.unsupportedAnnotations != "ignore" {
		return fmt.Errorf("--unsupported-annotations %q is neither refuse nor ignore", t.unsupportedAnnotations)
	}
	if _, err := escapedSlashes(t.escapedSlashes); err != nil {
		return err
	}
	if _, err := configMapName(t.configMap); err != nil {
		return err
	}
	if t.routeScopes.n > 0 && t.vhds {
		return fmt.Errorf("--route-scopes and --vhds cannot be combined: each splits the HTTP listener's routes its own way")
	}
	if t.trustedForwardedHops > 64 {
		return fmt.Errorf("--trusted-forwarded-hops %d: at most 64", t.trustedForwardedHops)
	}
	return nil
}

func (t *translateFlags) options() translate.Options {
	return translate.Options{
		HTTPPort:           uint32(t.httpPort),
		HTTPSPort:          uint32(t.httpsPort),
		ListenAddress:      t.listenAddress,
		EnableExternalName: t.enableExternalName,
		ResolveNames:       t.enableExternalName, // resolving, resolveOnce
		AnnotationsPrefix:  t.annotationsPrefix,
		AuthzAddress:       t.authzAddress,
		IgnoreRefusals:     t.unsupportedAnnotations == "ignore",

		AllowedResponseHeaders: must(responseHeaderNames(t.allowedResponseHeaders)), // validate checked them

		EnableSSLPassthrough: t.enableSSLPassthrough,

		TrustedForwardedHops: uint32(t.trustedForwardedHops),
		EscapedSlashes:       must(escapedSlashes(t.escapedSlashes)), // validate checked it

		ConfigMap:     must(configMapName(t.configMap)), // validate checked it
		NginxDefaults: t.nginxDefaults,

		VirtualHostDiscovery:      t.vhds,
		DeltaVirtualHostDiscovery: t.deltaVHDS,
		OnDemandClusters:          t.onDemandClusters,
		RouteScopes:               int(t.routeScopes.n),
		AutoRouteScopes:           t.routeScopes.auto,
		RequestMetrics:            t.requestMetrics,

		GatewayControllerName: t.gatewayController,
		GatewayOwnAddresses:   t.gatewayOwnAddresses,
	}
}

// configMapName reads --configmap: empty, or NAMESPACE/NAME.
func configMapName(v string) (types.NamespacedName, error) {
	if v == "" {
		return types.NamespacedName{}, nil
	}
	ns, name, ok := strings.Cut(v, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return types.NamespacedName{}, fmt.Errorf("--configmap %q is not NAMESPACE/NAME", v)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// escapedSlashes reads --escaped-slashes.
func escapedSlashes(v string) (ir.EscapedSlashes, error) {
	switch v {
	case "redirect":
		return ir.EscapedSlashesRedirect, nil
	case "forward":
		return ir.EscapedSlashesForward, nil
	case "reject":
		return ir.EscapedSlashesReject, nil
	case "keep":
		return ir.EscapedSlashesKeep, nil
	}
	return "", fmt.Errorf("--escaped-slashes %q is none of redirect, forward, reject, keep", v)
}

// routeScopesFlag is --route-scopes: auto, or a number of scopes.
type routeScopesFlag struct {
	auto bool
	n    uint
}

func (f *routeScopesFlag) String() string {
	if f.auto {
		return "auto"
	}
	return strconv.FormatUint(uint64(f.n), 10)
}

func (f *routeScopesFlag) Set(v string) error {
	if v == "auto" {
		*f = routeScopesFlag{auto: true}
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || !envoy.ValidRouteScopes(int(n)) {
		return fmt.Errorf("auto, 0, or a power of two up to %d", envoy.MaxRouteScopes)
	}
	*f = routeScopesFlag{n: uint(n)}
	return nil
}
