// Package togateway turns Ingresses into the Gateway API objects
// (gateway.networking.k8s.io/v1) that express them: an HTTPRoute for each
// host of an Ingress, the Gateway they attach to (an HTTP listener on port
// 80, an HTTPS listener on 443 for each TLS host, its certificate the
// Ingress's Secret), and the ReferenceGrants a Gateway in another
// namespace needs for those Secrets.
//
// It converts what has the same meaning in both APIs, with ingress-nginx's
// semantics read from the annotation registry (translate/ingress/
// annotations) and nothing else, and lists every other annotation with
// why it is not converted. It never decides whether the result routes the
// same: translate/audit runs both front-ends on the input and the output
// and compares what they route (translate/audit/samerouting), so that a
// rule here that is wrong shows up as a difference, not as a claim.
//
// It is pure: Kubernetes objects in, Kubernetes objects out, the same for
// the same State.
package togateway

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// DefaultGatewayName is the Gateway's name when Options.GatewayName is
// empty; the GatewayClass's too when Options.GatewayClassName is.
const DefaultGatewayName = "ingress-xds"

// The listeners' names and ports on the Gateway: Envoy is reached on 80
// and 443 (the DaemonSet's host ports), which the Gateway API front-end
// programs.
const (
	HTTPListener = "http"
	HTTPPort     = 80
	HTTPSPort    = 443
)

// Options say where the objects go.
type Options struct {
	// AnnotationsPrefix is ingress-nginx's annotation prefix
	// (annotations.NginxPrefix when empty), as serve's.
	AnnotationsPrefix string
	// GatewayName names the Gateway every HTTPRoute attaches to;
	// DefaultGatewayName when empty.
	GatewayName string
	// GatewayNamespace is the Gateway's namespace; empty: one Gateway in
	// each Ingress's namespace. A Gateway of its own namespace takes
	// Routes from every namespace and needs ReferenceGrants for the TLS
	// Secrets of others.
	GatewayNamespace string
	// GatewayClassName is the Gateway's class; DefaultGatewayName when
	// empty.
	GatewayClassName string
	// SSLRedirectByDefault is ssl-redirect's value when an Ingress does
	// not set it: true where serve runs with ingress-nginx's defaults
	// (--nginx-defaults) or a ConfigMap that says so.
	SSLRedirectByDefault bool
}

// Outcome is what became of one annotation.
type Outcome string

const (
	// Converted: a standard field or filter with the same meaning.
	Converted Outcome = "converted"
	// ConvertedWithDifference: converted, but for the difference the
	// note states (which the routing check then shows).
	ConvertedWithDifference Outcome = "converted, with a difference"
	// NotConverted: no standard form; the note says why.
	NotConverted Outcome = "not converted"
)

// Annotation is one annotation of an Ingress and what became of it.
type Annotation struct {
	Key     string  `json:"key"`
	Outcome Outcome `json:"outcome"`
	Note    string  `json:"note,omitempty"`
}

// Ingress is what became of one Ingress.
type Ingress struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// HTTPRoutes are the names of the Routes made of it, in its
	// namespace; a canary's are its mainline's.
	HTTPRoutes  []string     `json:"httpRoutes,omitempty"`
	Annotations []Annotation `json:"annotations,omitempty"`
	// Problems are what could not be converted outside annotations (a
	// backend that names no Service port, a TLS entry without hosts).
	Problems []string `json:"problems,omitempty"`
}

// Result is the objects and what became of each Ingress.
type Result struct {
	Gateways        []*gwapiv1.Gateway        `json:"-"`
	HTTPRoutes      []*gwapiv1.HTTPRoute      `json:"-"`
	ReferenceGrants []*gwapiv1.ReferenceGrant `json:"-"`
	// Ingresses are by namespace and name.
	Ingresses []Ingress `json:"ingresses"`
	// Problems are the objects' own, beyond any one Ingress.
	Problems []string `json:"problems,omitempty"`
}

// MaxListeners is how many listeners a Gateway may have (the CRD's
// bound).
const MaxListeners = 64

// converter is one conversion's working state.
type converter struct {
	st   *kube.State
	opts Options
	reg  *annotations.Registry
	// gateways are the Gateways made, by namespace/name; grants the
	// Secrets another namespace's Gateway refers to, by the Secret's
	// namespace.
	gateways map[string]*gwapiv1.Gateway
	grants   map[string][]string
	// canaries are the canary Ingresses by the mainline host and path
	// they join (canary.go).
	canaries map[string][]*canary
	out      *Result
}

// Convert converts every Ingress of the State (those of the class: the
// caller's source chose them).
func Convert(st *kube.State, opts Options) *Result {
	opts.GatewayName = cmp.Or(opts.GatewayName, DefaultGatewayName)
	opts.GatewayClassName = cmp.Or(opts.GatewayClassName, DefaultGatewayName)
	c := &converter{st: st, opts: opts, reg: annotations.New(opts.AnnotationsPrefix),
		gateways: map[string]*gwapiv1.Gateway{}, grants: map[string][]string{}, out: &Result{}}
	ings := slices.Clone(st.Ingresses)
	slices.SortFunc(ings, func(a, b *networkingv1.Ingress) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	c.canaries = c.findCanaries(ings)
	for _, ing := range ings {
		c.out.Ingresses = append(c.out.Ingresses, c.ingress(ing))
	}
	for _, key := range slices.Sorted(maps.Keys(c.gateways)) {
		gw := c.gateways[key]
		slices.SortFunc(gw.Spec.Listeners[1:], func(a, b gwapiv1.Listener) int { return strings.Compare(string(a.Name), string(b.Name)) })
		if n := len(gw.Spec.Listeners); n > MaxListeners {
			c.out.Problems = append(c.out.Problems, fmt.Sprintf("Gateway %s has %d listeners (one per TLS host), over Gateway API's %d: "+
				"the API server refuses it; convert fewer Ingresses at a time, with a Gateway each (--gateway-name)", key, n, MaxListeners))
		}
		c.out.Gateways = append(c.out.Gateways, gw)
	}
	c.out.ReferenceGrants = c.referenceGrants()
	slices.SortFunc(c.out.HTTPRoutes, func(a, b *gwapiv1.HTTPRoute) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return c.out
}

// gateway is the Gateway an Ingress of namespace ns attaches to, made on
// first use with its HTTP listener.
func (c *converter) gateway(ns string) *gwapiv1.Gateway {
	key := types.NamespacedName{Namespace: cmp.Or(c.opts.GatewayNamespace, ns), Name: c.opts.GatewayName}
	if gw := c.gateways[key.String()]; gw != nil {
		return gw
	}
	var allowed *gwapiv1.AllowedRoutes
	if c.opts.GatewayNamespace != "" {
		// The Routes stay beside their Ingresses, in every namespace.
		allowed = &gwapiv1.AllowedRoutes{Namespaces: &gwapiv1.RouteNamespaces{From: ptr(gwapiv1.NamespacesFromAll)}}
	}
	gw := &gwapiv1.Gateway{
		TypeMeta:   metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: gwapiv1.GatewaySpec{
			GatewayClassName: gwapiv1.ObjectName(c.opts.GatewayClassName),
			Listeners:        []gwapiv1.Listener{{Name: HTTPListener, Port: HTTPPort, Protocol: gwapiv1.HTTPProtocolType, AllowedRoutes: allowed}},
		},
	}
	c.gateways[key.String()] = gw
	return gw
}

// httpsListener is the name of the HTTPS listener for host with the
// Secret of namespace ns, added to the Gateway when first asked. A host
// is served with one certificate (the first Ingress's, by namespace and
// name, as the Ingress front-end chooses); false when another Secret
// already serves it.
func (c *converter) httpsListener(gw *gwapiv1.Gateway, host string, secret types.NamespacedName) (gwapiv1.SectionName, bool) {
	name := gwapiv1.SectionName("https-" + slug(host))
	for _, l := range gw.Spec.Listeners {
		if l.Name != name {
			continue
		}
		ref := l.TLS.CertificateRefs[0]
		return name, string(ref.Name) == secret.Name && string(deref(ref.Namespace, gwapiv1.Namespace(gw.Namespace))) == secret.Namespace
	}
	ref := gwapiv1.SecretObjectReference{Name: gwapiv1.ObjectName(secret.Name)}
	if secret.Namespace != gw.Namespace {
		ref.Namespace = ptr(gwapiv1.Namespace(secret.Namespace))
		c.grants[secret.Namespace] = append(c.grants[secret.Namespace], secret.Name)
	}
	gw.Spec.Listeners = append(gw.Spec.Listeners, gwapiv1.Listener{
		Name: name, Hostname: ptr(gwapiv1.Hostname(host)), Port: HTTPSPort, Protocol: gwapiv1.HTTPSProtocolType,
		TLS:           &gwapiv1.ListenerTLSConfig{Mode: ptr(gwapiv1.TLSModeTerminate), CertificateRefs: []gwapiv1.SecretObjectReference{ref}},
		AllowedRoutes: gw.Spec.Listeners[0].AllowedRoutes,
	})
	return name, true
}

// referenceGrants lets the Gateway's namespace read the Secrets of each
// other namespace its listeners name, one grant per namespace, each
// Secret by name.
func (c *converter) referenceGrants() []*gwapiv1.ReferenceGrant {
	var out []*gwapiv1.ReferenceGrant
	for _, ns := range slices.Sorted(maps.Keys(c.grants)) {
		names := slices.Compact(slices.Sorted(slices.Values(c.grants[ns])))
		g := &gwapiv1.ReferenceGrant{
			TypeMeta:   metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: "ReferenceGrant"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.opts.GatewayName + "-tls"},
			Spec: gwapiv1.ReferenceGrantSpec{
				From: []gwapiv1.ReferenceGrantFrom{{Group: gwapiv1.GroupName, Kind: "Gateway", Namespace: gwapiv1.Namespace(c.opts.GatewayNamespace)}},
			},
		}
		for _, n := range names {
			g.Spec.To = append(g.Spec.To, gwapiv1.ReferenceGrantTo{Group: "", Kind: "Secret", Name: ptr(gwapiv1.ObjectName(n))})
		}
		out = append(out, g)
	}
	return out
}

// slug makes a host a name's part: lower-case letters, digits and "-"
// ("*" is "wildcard", a hostless rule "default").
func slug(host string) string {
	if host == "" {
		return "default"
	}
	s := strings.NewReplacer("*", "wildcard", ".", "-").Replace(strings.ToLower(host))
	return strings.Trim(s, "-")
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
