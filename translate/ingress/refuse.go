package ingress

import (
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A refused Ingress is one that asks for an access control ingress-xds does
// not apply (annotations/refusal.go says which keys guard access), or asks
// for one in a way that cannot be applied (a value that does not parse, a
// Secret that cannot be used: whatever its group's code finds). Serving it
// without would open what its author closed, so it is not served:
//
//   - each of its paths still claims its place in the merge (the oldest
//     Ingress wins a path, as always) and answers 503 there. Leaving the
//     paths out instead would let a request for a refused /admin fall
//     through to another Ingress's / on the same host: the one outcome that
//     must never happen. ingress-nginx answers 503 in the same way for a
//     location whose annotations it denies (its template's "Location
//     denied"), so clients see what they would see there;
//   - nothing else of it is programmed: no backend, no policy, no
//     certificate, redirect, alias, canary, error page or app-root. A
//     refused canary adds nothing, and its mainline is served as it is;
//   - the other Ingresses, those sharing its hosts included, are served as
//     they would be without it (their paths keep working beside its 503s);
//   - a Warning (AnnotationRefused) names the key and why, and the
//     Ingress's status gets no address (kube.StatusWriter.Refused), so that
//     tools which read it (external-dns, Argo CD's health) see that it is
//     not served.
//
// An operator who has audited the Ingresses that carry keys ingress-xds
// does not apply (snippets, ModSecurity, keys it cannot honour) serves them
// without those keys (serve --unsupported-annotations=ignore,
// Options.IgnoreRefusals), with a Warning (AnnotationIgnored) per key. That
// never covers an access control ingress-xds does apply but cannot apply as
// written (a range that does not parse, a Secret missing or of another
// namespace): serving it without would open the door its author meant to
// close, by mistake rather than by an audited choice, so it is refused
// whatever the flag.

// refusedBody is the body of a refused path's 503: it names no key, which
// only the Ingress's owner should read (in its Events).
const refusedBody = "not served: this path's Ingress is refused by the ingress controller\n"

// refuse refuses the Ingress: key (the annotation as written) guards
// access and cannot be applied as written, for the reason given. A group's
// parser returns the same as data (refusal, groups.go) instead of ignoring
// such a key (a value it cannot use, a Secret it cannot read). It refuses
// whatever --unsupported-annotations says.
func (f *fragmentBuilder) refuse(key, format string, args ...any) {
	f.report([]problem{refusal(key, format, args...)})
}

// refuseUnsupported refuses the Ingress for a key ingress-xds does not
// apply at all, unless the operator serves such Ingresses without those keys.
func (f *fragmentBuilder) refuseUnsupported(key, why string) {
	if f.opts.IgnoreRefusals {
		f.problem("AnnotationIgnored", "%s: %s: ignored, as --unsupported-annotations=ignore asks: the Ingress is served without it", key, why)
		return
	}
	f.refused = true
	f.problem("AnnotationRefused", "%s: %s: the Ingress is not served (each of its paths answers 503; --unsupported-annotations=ignore would serve it without the annotation)", key, why)
}

// refuseIssue refuses the Ingress for an issue the registry found: a key
// not applied at all (which the operator may have ignored), or a value of
// an access control that does not parse (which is refused always).
func (f *fragmentBuilder) refuseIssue(is annotations.Issue) {
	why := fmt.Sprintf("%s, and %s", is.Message, is.Refusal)
	if is.Reason == annotations.ReasonUnsupportedAccess {
		f.refuseUnsupported(is.Key, why)
		return
	}
	f.refuse(is.Key, "%s", why)
}

// applyRefusal makes the fragment of a refused Ingress what the comment
// above says: its paths answering 503, and nothing else.
func (f *fragmentBuilder) applyRefusal() {
	fr := f.frag
	if fr.canary != nil {
		fr.canary, fr.routes = nil, nil
	}
	for i := range fr.routes {
		hr := &fr.routes[i]
		hr.route.Policy = nil
		hr.route.Action = ir.Action{Direct: &ir.DirectResponse{Status: 503, Body: refusedBody}}
		hr.cluster, hr.variants, hr.reselects = nil, nil, nil
	}
	fr.aliases, fr.tls, fr.wwwRedirects, fr.appRoot, fr.errorRoutes = nil, nil, nil, nil, nil
	fr.serverSnippet = nil
	fr.locationGzip = locationGzip(nil)
}

// RefusedWith says, for the status writer, whether an Ingress is refused by
// its annotations, alone or as the controller ConfigMap's rules on them
// have it (keys not applied count only when opts do not serve such
// Ingresses without them). An Ingress a group refuses for what it found
// elsewhere (a Secret missing or unusable) keeps its status, as one whose
// Service is missing does: that refusal lasts only until the object is
// fixed, and a status that comes and goes would churn what reads it (DNS
// records).
//
// The ConfigMap (serve --configmap) is the status writer's copy of it,
// nil while it is missing. Its rules refuse as they do in ingress-nginx,
// whose store never lists such an Ingress, so that it gets no status
// either (store.go syncIngress): a word of annotation-value-word-blocklist
// in a value, or a key riskier than annotations-risk-level, whatever
// --unsupported-annotations says; a snippet annotation below the Critical
// annotations-risk-level. A snippet not translated whole refuses it too
// (snippets.go), as the front-end finds. The ConfigMaps its keys name
// (add-headers, proxy-set-headers) are not read: they refuse nothing.
//
// It is safe to call from several goroutines.
func RefusedWith(reg *annotations.Registry, opts Options) func(*networkingv1.Ingress, *corev1.ConfigMap) bool {
	var mu sync.Mutex
	m := newMemo(reg) // its controller ConfigMap, parsed once per version
	return func(ing *networkingv1.Ingress, cm *corev1.ConfigMap) bool {
		mu.Lock()
		defer mu.Unlock()
		values, issues := reg.Parse(ing.Annotations)
		for _, is := range issues {
			if is.Refusal != "" && !(opts.IgnoreRefusals && is.Reason == annotations.ReasonUnsupportedAccess) {
				return true
			}
		}
		translating := opts
		st := &kube.State{ConfigMaps: map[types.NamespacedName]*corev1.ConfigMap{}}
		if cm != nil && opts.ConfigMap.Name != "" {
			st.ConfigMaps[opts.ConfigMap] = cm
		}
		translating.config = m.controllerConfig(st, opts.ConfigMap, opts.NginxDefaults)
		if key, _ := blockedWord(reg, ing, translating.config.blockedWords()); key != "" {
			return true
		}
		if key, _, _ := riskyAnnotation(reg, ing, &translating); key != "" {
			return true
		}
		if opts.IgnoreRefusals {
			return false
		}
		_, problems := parseSnippets(values, ing, &translating)
		return slices.ContainsFunc(problems, func(p problem) bool { return p.refuses })
	}
}
