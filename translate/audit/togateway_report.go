package audit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/audit/samerouting"
	"github.com/ingress-xds/ingress-xds/translate/audit/togateway"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// GatewayReport is `ingress-xds audit --to-gateway-api`'s report: what
// each Ingress became in Gateway API, and whether the two front-ends
// route the Ingress and its Routes alike.
type GatewayReport struct {
	Ingresses []GatewayIngress `json:"ingresses"`
	// Problems are the objects' own, beyond any one Ingress (a Gateway
	// over its listeners' bound).
	Problems []string       `json:"problems,omitempty"`
	Summary  GatewaySummary `json:"summary"`
}

// GatewayIngress is one Ingress's conversion and its check.
type GatewayIngress struct {
	togateway.Ingress
	// NotAccepted are the Routes' parents that the Gateway API front-end
	// does not accept, or whose references it does not resolve, with why.
	NotAccepted []string `json:"notAccepted,omitempty"`
	// SameRouting: the Ingress front-end's routes of the Ingress and the
	// Gateway API front-end's of its Routes route alike; otherwise
	// Differences say where not.
	SameRouting bool                     `json:"sameRouting"`
	Differences []samerouting.Difference `json:"differences,omitempty"`
	// RoutesCompared counts the Ingress front-end's routes of the
	// Ingress the check compared, one per protocol and host they are
	// served on.
	RoutesCompared int `json:"routesCompared"`
}

// GatewaySummary counts what the report lists.
type GatewaySummary struct {
	Ingresses   int `json:"ingresses"`
	SameRouting int `json:"sameRouting"`
	// Annotations counts the annotations by outcome.
	Annotations map[togateway.Outcome]int `json:"annotations"`
}

// ToGatewayAPI converts the Ingresses of a State to Gateway API and
// checks the result: the Ingresses through the Ingress front-end (with
// opts, as serve would), the objects made through the Gateway API
// front-end (as serve would, beside a GatewayClass of its controller
// name), and each Ingress's routes compared with its Routes'.
func ToGatewayAPI(st *kube.State, opts ingress.Options, conv togateway.Options) (*GatewayReport, *togateway.Result) {
	gw := gatewayOptions(opts)
	res := togateway.Convert(st, conv)
	ingIR := ingress.NewBuilder(opts).Build(st)
	gwIR, status := gatewayapi.BuildWithStatus(gatewayState(st, res, conv, gw), gw)
	r := &GatewayReport{Problems: res.Problems, Summary: GatewaySummary{Annotations: map[togateway.Outcome]int{}}}
	for _, ing := range res.Ingresses {
		routes := map[string]bool{}
		for _, name := range ing.HTTPRoutes {
			routes[name] = true
		}
		g := GatewayIngress{Ingress: ing}
		g.Differences, g.RoutesCompared = samerouting.Compare(
			ingIR, func(o ir.Object) bool {
				return o.Kind == "Ingress" && o.Namespace == ing.Namespace && o.Name == ing.Name
			},
			gwIR, func(o ir.Object) bool { return o.Kind == "HTTPRoute" && o.Namespace == ing.Namespace && routes[o.Name] })
		g.SameRouting = len(g.Differences) == 0
		for _, name := range ing.HTTPRoutes {
			g.NotAccepted = append(g.NotAccepted, notAccepted(name, status.HTTPRoutes[ing.Namespace+"/"+name])...)
		}
		if g.SameRouting {
			r.Summary.SameRouting++
		}
		for _, a := range ing.Annotations {
			r.Summary.Annotations[a.Outcome]++
		}
		r.Ingresses = append(r.Ingresses, g)
	}
	r.Summary.Ingresses = len(r.Ingresses)
	return r, res
}

// gatewayOptions are the Gateway API front-end's options as serve gives
// them (translate.Translator): Envoy's ports, and the ports clients reach
// them on, which the Gateway's listeners name.
func gatewayOptions(opts ingress.Options) gatewayapi.Options {
	return gatewayapi.Options{ControllerName: opts.GatewayControllerName, HTTPPort: opts.HTTPPort, HTTPSPort: opts.HTTPSPort,
		PublishedHTTPPort: configmap.ForwardedHTTPPort, PublishedHTTPSPort: configmap.ForwardedHTTPSPort}
}

// gatewayState is the State the Gateway API front-end reads: the
// cluster's Services, EndpointSlices and Secrets, the objects made, and
// the GatewayClass they name, ours.
func gatewayState(st *kube.State, res *togateway.Result, conv togateway.Options, gw gatewayapi.Options) *kube.State {
	class := &gwapiv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: cmp.Or(conv.GatewayClassName, togateway.DefaultGatewayName)},
		Spec:       gwapiv1.GatewayClassSpec{ControllerName: gwapiv1.GatewayController(cmp.Or(gw.ControllerName, gatewayapi.DefaultControllerName))},
	}
	out := *st
	out.Ingresses = nil
	out.Gateway = &kube.GatewayObjects{
		GatewayClasses:  []*gwapiv1.GatewayClass{class},
		Gateways:        res.Gateways,
		HTTPRoutes:      res.HTTPRoutes,
		ReferenceGrants: res.ReferenceGrants,
	}
	return &out
}

// notAccepted lists a Route's parents whose Accepted or ResolvedRefs
// condition is not True.
func notAccepted(name string, s gwapiv1.HTTPRouteStatus) []string {
	var out []string
	if len(s.Parents) == 0 {
		return []string{fmt.Sprintf("HTTPRoute %s: no status from the Gateway API front-end (its Gateway is not ours)", name)}
	}
	for _, p := range s.Parents {
		for _, c := range p.Conditions {
			if (c.Type == string(gwapiv1.RouteConditionAccepted) || c.Type == string(gwapiv1.RouteConditionResolvedRefs)) && c.Status != metav1.ConditionTrue {
				out = append(out, fmt.Sprintf("HTTPRoute %s, parent %s/%s: %s %s (%s): %s", name, deref(p.ParentRef.Namespace), p.ParentRef.Name,
					c.Type, c.Status, c.Reason, c.Message))
			}
		}
	}
	return out
}

func deref[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

// Differs reports whether some Ingress routes differently through
// Gateway API: the command's exit code for CI.
func (r *GatewayReport) Differs() bool { return r.Summary.SameRouting < r.Summary.Ingresses }

// JSON is the report for scripts.
func (r *GatewayReport) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding the Gateway API audit: %w", err)
	}
	return b.Bytes(), nil
}

// Text is the report for people.
func (r *GatewayReport) Text() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "ingress-xds audit --to-gateway-api: %d Ingresses, %d route the same through Gateway API\n", r.Summary.Ingresses, r.Summary.SameRouting)
	for _, ing := range r.Ingresses {
		verdict := fmt.Sprintf("same routing (%d routes compared)", ing.RoutesCompared)
		switch {
		case ing.SameRouting && ing.RoutesCompared == 0 && len(ing.HTTPRoutes) == 0:
			verdict = "no route of its own to compare (a canary's are its mainline's, compared there)"
		case !ing.SameRouting:
			verdict = fmt.Sprintf("routes differently (%d routes compared)", ing.RoutesCompared)
		}
		fmt.Fprintf(&b, "\n%s/%s: %s\n", ing.Namespace, ing.Name, verdict)
		if len(ing.HTTPRoutes) > 0 {
			fmt.Fprintf(&b, "  HTTPRoutes: %s\n", strings.Join(ing.HTTPRoutes, ", "))
		}
		list(&b, "annotations", ing.Annotations, func(a togateway.Annotation) string {
			if a.Note == "" {
				return fmt.Sprintf("%s: %s", a.Key, a.Outcome)
			}
			return fmt.Sprintf("%s: %s (%s)", a.Key, a.Outcome, a.Note)
		})
		list(&b, "not converted", ing.Problems, func(p string) string { return p })
		list(&b, "not accepted by the Gateway API front-end", ing.NotAccepted, func(p string) string { return p })
		list(&b, "differences", ing.Differences, samerouting.Difference.String)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "\nproblem: %s\n", p)
	}
	var counts []string
	for _, o := range []togateway.Outcome{togateway.Converted, togateway.ConvertedWithDifference, togateway.NotConverted} {
		if n := r.Summary.Annotations[o]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s: %d", o, n))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(&b, "\nAnnotations: %s\n", strings.Join(counts, ", "))
	}
	return b.Bytes()
}

func list[T any](b *bytes.Buffer, title string, items []T, line func(T) string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s:\n", title)
	lines := make([]string, len(items))
	for i, it := range items {
		lines[i] = line(it)
	}
	for _, l := range slices.Clip(lines) {
		fmt.Fprintf(b, "    %s\n", l)
	}
}
