package ingress

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
)

// Each group of annotations (as ingress-nginx's
// internal/ingress/annotations/<group>) is parsed by a function of its
// own, parse<Group>, from the Ingress's parsed annotations (and what
// groupEnv lets it read) to a typed result of its own and the problems it
// found, with no access to the fragment being built. merge.go then
// applies every group's result to the route policy, the cluster policy
// and the fragment, in one place, where what overrides what is written
// down. policy.go (readAnnotations) calls the parsers, reports their
// problems in the groups' order, and hands the results to the merge.

// groupEnv is what a group's parser may read besides the annotations:
// the Ingress (never changed), the options (with the controller
// ConfigMap's settings), and objects by name, each read recording the
// fragment's dependency on it.
type groupEnv struct {
	ing     *networkingv1.Ingress
	opts    *Options
	objects objectReads
}

// objectReads looks up the objects annotations name in the State, and
// records each lookup (nil too: a missing object that appears must count
// as a change) in reads, the fragment's dependencies. A value, so that
// handing it to a parser allocates nothing.
type objectReads struct {
	state *kube.State
	reads *reads
}

func (o objectReads) secret(name types.NamespacedName) *corev1.Secret {
	return read(o.state.Secrets, &o.reads.secrets, name)
}

func (o objectReads) configMap(name types.NamespacedName) *corev1.ConfigMap {
	return read(o.state.ConfigMaps, &o.reads.configMaps, name)
}

func (o objectReads) service(name types.NamespacedName) *kube.Service {
	return read(o.state.Services, &o.reads.services, name)
}

// problem is what a group reports: a problem of the Ingress, which
// refuses it (refuse.go) when refuses is set.
type problem struct {
	reason, message string
	refuses         bool
	// ignorable: the refusal is of a key ingress-xds does not apply as
	// written, which the operator may serve without
	// (Options.IgnoreRefusals).
	ignorable bool
	key, why  string
}

func problemf(reason, format string, args ...any) problem {
	return problem{reason: reason, message: fmt.Sprintf(format, args...)}
}

// refusal refuses the Ingress: key (the annotation as written) guards
// access and cannot be applied as written, for the reason given. It
// refuses whatever --unsupported-annotations says.
func refusal(key, format string, args ...any) problem {
	return problem{reason: "AnnotationRefused", refuses: true,
		message: fmt.Sprintf("%s: %s: the Ingress is not served (each of its paths answers 503)", key, fmt.Sprintf(format, args...))}
}

// unsupported refuses the Ingress for a key not applied as written,
// unless the operator serves such Ingresses without it.
func unsupported(key, why string) problem {
	return problem{refuses: true, ignorable: true, key: key, why: why}
}

// report reports a group's problems, in order.
func (f *fragmentBuilder) report(problems []problem) {
	for _, p := range problems {
		if p.ignorable {
			f.refuseUnsupported(p.key, p.why)
			continue
		}
		if p.refuses {
			f.refused = true
		}
		f.problem(p.reason, "%s", p.message)
	}
}
