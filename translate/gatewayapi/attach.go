package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// attachment is a Route attached to one of our listeners, with the hosts
// it serves there.
type attachment struct {
	listener *listener
	hosts    []string
	// parent is the index of the parentRef's outcome in the Route's
	// facts (status.go).
	parent int
}

// attach finds the listeners of our Gateways a Route's parentRefs attach
// it to, and records each parentRef's outcome for the Route's status and
// each listener's count of attached Routes. A parentRef naming a Gateway
// that is not ours is not ours to judge and is skipped in silence; one
// naming ours that no listener accepts is reported on the Route.
func (b *build) attach(r *routeObject) []attachment {
	var out []attachment
	routeHostnames, ok := b.routeHostnames(r)
	if !ok {
		return nil
	}
	for i, ref := range r.parentRefs {
		if g, k := deref(ref.Group, gwapiv1.GroupName), deref(ref.Kind, kindGateway); g != gwapiv1.GroupName || k != kindGateway {
			continue // ListenerSets and other parents: not served yet
		}
		gw := types.NamespacedName{Namespace: string(deref(ref.Namespace, gwapiv1.Namespace(r.namespace))), Name: string(ref.Name)}
		listeners, ours := b.byGateway[gw]
		if !ours {
			continue
		}
		where := fmt.Sprintf("parentRefs[%d] (Gateway %s)", i, gw)
		var reasons []string
		var selected []*listener // by the parentRef and allowedRoutes
		n := len(out)
		outcome := parentOutcome{ref: ref, reason: string(gwapiv1.RouteReasonNoMatchingParent)}
		for _, l := range listeners {
			if ref.SectionName != nil && string(*ref.SectionName) != l.name {
				continue
			}
			if ref.Port != nil && uint32(*ref.Port) != l.port {
				continue
			}
			if why := l.refuses(r, b.objs.NamespaceLabels); why != "" {
				reasons = append(reasons, why)
				outcome.reason = string(gwapiv1.RouteReasonNotAllowedByListeners)
				continue
			}
			hosts := hostnames(l.hostname, routeHostnames)
			if len(hosts) == 0 {
				reasons = append(reasons, fmt.Sprintf("%s: no hostname of the Route matches %q", l.where(), l.hostname))
				outcome.reason = string(gwapiv1.RouteReasonNoMatchingListenerHostname)
				continue
			}
			selected = append(selected, l)
			if !l.programmed {
				reasons = append(reasons, fmt.Sprintf("%s is not programmed", l.where()))
				continue
			}
			out = append(out, attachment{listener: l, hosts: hosts, parent: len(b.routeFacts(r).parents)})
		}
		if len(out) == n {
			msg := "no listener matches"
			if len(reasons) > 0 {
				msg = fmt.Sprint(reasons)
			}
			outcome.message = "not attached: " + msg
			b.problem(r, "NotAttached", "%s: not attached: %s", where, msg)
		} else {
			outcome.accepted = true
		}
		// Every listener the parentRef, allowedRoutes and the hostnames
		// select counts the Route, programmed or not: attachedRoutes
		// tells what a listener would serve (the conformance suite's
		// GatewayWithAttachedRoutes and HTTPRouteHostnameIntersection).
		for _, l := range selected {
			l.status.count(r)
		}
		b.outcome(r, outcome)
	}
	return out
}

// refuses says why a listener does not take a Route by its allowedRoutes
// ("" when it takes it): the Route's kind and namespace, the namespace's
// labels (of namespaces, by name) for a selector.
func (l *listener) refuses(r *routeObject, namespaces map[string]map[string]string) string {
	a := l.allowed
	if a != nil && len(a.Kinds) > 0 {
		ok := false
		for _, k := range a.Kinds {
			if deref(k.Group, gwapiv1.GroupName) == gwapiv1.GroupName && string(k.Kind) == r.kind {
				ok = true
			}
		}
		if !ok {
			return fmt.Sprintf("%s: allowedRoutes.kinds has no %s", l.where(), r.kind)
		}
	}
	if !slices.ContainsFunc(l.status.kinds, func(k gwapiv1.RouteGroupKind) bool { return string(k.Kind) == r.kind }) {
		return fmt.Sprintf("%s: takes no %s (its kinds: %s)", l.where(), r.kind, kindNames(l.status.kinds))
	}
	from := gwapiv1.NamespacesFromSame
	if a != nil && a.Namespaces != nil && a.Namespaces.From != nil {
		from = *a.Namespaces.From
	}
	switch from {
	case gwapiv1.NamespacesFromAll:
		return ""
	case gwapiv1.NamespacesFromSame:
		if r.namespace == l.gateway.Namespace {
			return ""
		}
		return fmt.Sprintf("%s: allows Routes of namespace %s only", l.where(), l.gateway.Namespace)
	case gwapiv1.NamespacesFromSelector:
		if a.Namespaces.Selector == nil {
			return fmt.Sprintf("%s: allowedRoutes.namespaces.from is Selector without a selector", l.where())
		}
		sel, err := metav1.LabelSelectorAsSelector(a.Namespaces.Selector)
		if err != nil {
			return fmt.Sprintf("%s: allowedRoutes.namespaces.selector: %v", l.where(), err)
		}
		if sel.Matches(labels.Set(namespaces[r.namespace])) {
			return ""
		}
		return fmt.Sprintf("%s: namespace %s does not match allowedRoutes.namespaces.selector %s", l.where(), r.namespace, sel)
	}
	return fmt.Sprintf("%s: allows no Routes (from %s)", l.where(), from)
}

// routeHostnames are a Route's hostnames that can be served, each that
// cannot reported; false when it named some and none can (then it
// serves nothing, rather than every host).
func (b *build) routeHostnames(r *routeObject) ([]gwapiv1.Hostname, bool) {
	var out []gwapiv1.Hostname
	for i, h := range r.hostnames {
		if why := validHostname(strings.ToLower(string(h))); why != "" {
			b.problem(r, "InvalidHostname", "hostnames[%d] %s: ignored", i, why)
			continue
		}
		out = append(out, h)
	}
	return out, len(out) > 0 || len(r.hostnames) == 0
}

// kindNames lists kinds for a message.
func kindNames(kinds []gwapiv1.RouteGroupKind) string {
	if len(kinds) == 0 {
		return "none"
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k.Kind)
	}
	return strings.Join(names, ", ")
}
