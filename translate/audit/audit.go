// Package audit says, before a switch from ingress-nginx, what ingress-xds
// would make of a cluster's Ingresses: each annotation's verdict, the
// problems with values, the Ingresses that would not be served and why,
// and which of ingress-nginx's surprising behaviours (the Kubernetes blog's
// "Before You Migrate: Five Surprising Ingress-NGINX Behaviors") apply to
// them, with what ingress-xds does for each.
//
// It holds no rules of its own: it runs the real front-end
// (translate/ingress) on the state and reads its output (the IR's routes
// and problems), and asks the annotation registry for each key's verdict.
// Data still flows one way: the audit reads what the front-end produced.
package audit

import (
	"cmp"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Report is the audit of one state.
type Report struct {
	// Ingresses are those of the chosen class, by namespace and name.
	Ingresses []Ingress `json:"ingresses"`
	// EveryIngress are the behaviours that apply to every Ingress alike.
	EveryIngress []Behaviour `json:"everyIngress"`
	// ConfigMap says whether the controller ConfigMap (--configmap) is
	// read; ConfigMapKeys are its keys, each with its verdict.
	ConfigMap     string         `json:"configMap"`
	ConfigMapKeys []ConfigMapKey `json:"configMapKeys,omitempty"`
	Summary       Summary        `json:"summary"`
}

// Summary counts what the report lists.
type Summary struct {
	Ingresses int `json:"ingresses"`
	// Refused counts the Ingresses that would not be served.
	Refused int `json:"refused"`
	// Annotations counts the annotations read, by verdict.
	Annotations map[annotations.Verdict]int `json:"annotations"`
}

// Ingress is the audit of one Ingress.
type Ingress struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Served is false when the Ingress is refused: its paths answer 503.
	Served bool `json:"served"`
	// Refusals say why it is not served (the front-end's AnnotationRefused
	// problems).
	Refusals    []string     `json:"refusals,omitempty"`
	Annotations []Annotation `json:"annotations,omitempty"`
	// Problems are everything the front-end reports on the Ingress (the
	// Warning Events serve would write), refusals included.
	Problems   []Problem   `json:"problems,omitempty"`
	Behaviours []Behaviour `json:"behaviours,omitempty"`
}

// Annotation is one annotation under a prefix ingress-xds reads; values
// are not repeated (a problem quotes one where it matters).
type Annotation struct {
	Key     string              `json:"key"`
	Verdict annotations.Verdict `json:"verdict"`
	Note    string              `json:"note,omitempty"`
	// Directives are a snippet's directives, each with its verdict (up
	// to the one that refuses it).
	Directives []snippet.Verdict `json:"directives,omitempty"`
}

// Problem is one of the front-end's problems on the Ingress.
type Problem struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// refusedReason is the reason of the front-end's problem for a refused
// Ingress (translate/ingress/refuse.go).
const refusedReason = "AnnotationRefused"

// Run audits a state: the Ingresses in it are those of the chosen class
// (the caller's source filtered them, as serve's would).
func Run(st *kube.State, opts ingress.Options) *Report {
	reg := annotations.New(opts.AnnotationsPrefix)
	m := ingress.NewBuilder(opts).Build(st)
	problems := map[ir.Object][]Problem{}
	for _, p := range m.Problems {
		o := ir.Object{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
		problems[o] = append(problems[o], Problem{Reason: p.Reason, Message: p.Message})
	}
	routes := routesBySource(m)
	r := &Report{EveryIngress: everyIngress(), Summary: Summary{Annotations: map[annotations.Verdict]int{}}}
	r.ConfigMap, r.ConfigMapKeys = configMapAudit(st, opts, reg, problems) // audit_configmap.go
	ings := slices.Clone(st.Ingresses)
	slices.SortFunc(ings, func(a, b *networkingv1.Ingress) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	intents := make(map[ir.Object]regexIntent, len(ings))
	for _, ing := range ings {
		intents[ir.Object{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}] = intentOf(reg, ing)
	}
	for _, ing := range ings {
		o := ir.Object{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
		a := Ingress{Namespace: ing.Namespace, Name: ing.Name, Served: true, Problems: problems[o]}
		for _, p := range a.Problems {
			if p.Reason == refusedReason {
				a.Served = false
				a.Refusals = append(a.Refusals, p.Message)
			}
		}
		a.Annotations = annotationsOf(reg, ing)
		for _, an := range a.Annotations {
			r.Summary.Annotations[an.Verdict]++
		}
		a.Behaviours = behaviours(ing, o, routes, intents)
		if !a.Served {
			r.Summary.Refused++
		}
		r.Ingresses = append(r.Ingresses, a)
	}
	r.Summary.Ingresses = len(r.Ingresses)
	return r
}

// Refused reports whether some Ingress would not be served: the audit's
// exit code for CI.
func (r *Report) Refused() bool { return r.Summary.Refused > 0 }

// snippetContext is where the snippet annotation key lands in nginx.conf.
func snippetContext(key string) (snippet.Context, bool) {
	switch {
	case strings.HasSuffix(key, "/configuration-snippet"):
		return snippet.LocationContext, true
	case strings.HasSuffix(key, "/server-snippet"):
		return snippet.ServerContext, true
	}
	return 0, false
}

// annotationsOf lists an Ingress's annotations under the prefixes read,
// by key, each with the registry's verdict.
func annotationsOf(reg *annotations.Registry, ing *networkingv1.Ingress) []Annotation {
	var out []Annotation
	values, _ := reg.Parse(ing.Annotations)
	for key := range ing.Annotations {
		v, ok := reg.VerdictOf(key)
		if !ok {
			continue
		}
		a := Annotation{Key: key, Verdict: v.Verdict, Note: v.Note}
		if ctx, ok := snippetContext(key); ok {
			res, _ := snippet.Translate(ctx, ing.Annotations[key], ingress.SnippetOptions(values, ing))
			a.Directives = res.Verdicts
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Annotation) int { return strings.Compare(a.Key, b.Key) })
	return out
}
