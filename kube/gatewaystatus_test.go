package kube

import (
	"maps"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const ourController = "ingress-xds.io/gateway-controller"

var past = metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))

func cond(t string, status metav1.ConditionStatus, reason string, gen int64, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, ObservedGeneration: gen, LastTransitionTime: at}
}

func parent(name, controller string, conds ...metav1.Condition) gwapiv1.RouteParentStatus {
	return gwapiv1.RouteParentStatus{ParentRef: gwapiv1.ParentReference{Name: gwapiv1.ObjectName(name)},
		ControllerName: gwapiv1.GatewayController(controller), Conditions: conds}
}

// Another controller's parent entries are kept, as and where they are;
// ours are replaced by what the front-end computed, each condition whose
// status did not change keeping its transition time, one that changed
// taking a new one.
func TestMergeParentsKeepsOthersAndTransitionTimes(t *testing.T) {
	theirs := parent("their-gw", "example.com/other", cond("Accepted", metav1.ConditionFalse, "Whatever", 7, past))
	current := []gwapiv1.RouteParentStatus{
		theirs,
		parent("web", ourController,
			cond("Accepted", metav1.ConditionTrue, "Accepted", 1, past),
			cond("ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs", 1, past)),
		parent("gone", ourController, cond("Accepted", metav1.ConditionTrue, "Accepted", 1, past)),
	}
	want := []gwapiv1.RouteParentStatus{
		parent("web", ourController,
			cond("Accepted", metav1.ConditionTrue, "Accepted", 2, metav1.Time{}),
			cond("ResolvedRefs", metav1.ConditionFalse, "BackendNotFound", 2, metav1.Time{})),
	}
	before := time.Now().Add(-time.Second)
	got, changed := mergeParents(current, want, ourController, "app")
	if !changed {
		t.Fatal("not changed")
	}
	if len(got) != 2 {
		t.Fatalf("parents = %+v, want theirs and one of ours", got)
	}
	if got[0].ControllerName != theirs.ControllerName || !sameConditions(got[0].Conditions, theirs.Conditions) || !got[0].Conditions[0].LastTransitionTime.Equal(&past) {
		t.Errorf("their entry = %+v, want it as it was", got[0])
	}
	ours := got[1]
	if ours.ParentRef.Group == nil || *ours.ParentRef.Group != gwapiv1.GroupName || ours.ParentRef.Kind == nil || *ours.ParentRef.Kind != "Gateway" {
		t.Errorf("our parentRef = %+v, want the group and kind defaulted", ours.ParentRef)
	}
	accepted, resolved := ours.Conditions[0], ours.Conditions[1]
	if accepted.ObservedGeneration != 2 || !accepted.LastTransitionTime.Equal(&past) {
		t.Errorf("Accepted = %+v, want generation 2 and the old transition time", accepted)
	}
	if resolved.Status != metav1.ConditionFalse || resolved.Reason != "BackendNotFound" || resolved.LastTransitionTime.Time.Before(before) {
		t.Errorf("ResolvedRefs = %+v, want False BackendNotFound, transitioned now", resolved)
	}

	// Written and read back, the same computation changes nothing.
	again, changed := mergeParents(got, want, ourController, "app")
	if changed || len(again) != 2 {
		t.Errorf("merging again changed %+v", again)
	}
	// Nothing of ours any more: only theirs is left.
	none, changed := mergeParents(got, nil, ourController, "app")
	if !changed || len(none) != 1 || none[0].ControllerName != theirs.ControllerName {
		t.Errorf("without our parents = %+v, %v; want theirs alone", none, changed)
	}
	// Nothing of anyone's: an empty list, since the CRDs refuse null.
	if empty, changed := mergeParents(got[1:], nil, ourController, "app"); !changed || empty == nil || len(empty) != 0 {
		t.Errorf("without any parents = %#v, %v; want an empty list, not nil", empty, changed)
	}
	// A Route with no entry of ours and nothing computed is left alone.
	if _, changed := mergeParents([]gwapiv1.RouteParentStatus{theirs}, nil, ourController, "app"); changed {
		t.Error("a Route of another controller changed")
	}
}

// A parentRef matches our earlier entry whatever the defaults: the
// namespace left out is the Route's.
func TestSameParentDefaults(t *testing.T) {
	ns := gwapiv1.Namespace("app")
	a := gwapiv1.ParentReference{Name: "web"}
	b := defaultedParentRef(gwapiv1.ParentReference{Name: "web", Namespace: &ns})
	if !sameParent(a, b, "app") {
		t.Error("web and app/web of a Route in app differ")
	}
	other := gwapiv1.Namespace("other")
	if sameParent(a, gwapiv1.ParentReference{Name: "web", Namespace: &other}, "app") {
		t.Error("web and other/web of a Route in app are the same")
	}
	section := gwapiv1.SectionName("http")
	if sameParent(a, gwapiv1.ParentReference{Name: "web", SectionName: &section}, "app") {
		t.Error("a parentRef with a section is the same as one without")
	}
}

// Conditions of types we do not set are kept in place, and a condition
// observed at a newer generation than ours is not overwritten.
func TestSetConditions(t *testing.T) {
	conds := []metav1.Condition{
		cond("example.com/Special", metav1.ConditionTrue, "Theirs", 1, past),
		cond("Accepted", metav1.ConditionUnknown, "Pending", 0, past),
		cond("Programmed", metav1.ConditionTrue, "Programmed", 5, past),
	}
	changed := setConditions(&conds, []metav1.Condition{
		cond("Accepted", metav1.ConditionTrue, "Accepted", 4, metav1.Time{}),
		cond("Programmed", metav1.ConditionFalse, "Invalid", 4, metav1.Time{}),
	})
	if !changed {
		t.Fatal("not changed")
	}
	if len(conds) != 3 || conds[0].Type != "example.com/Special" || conds[0].Reason != "Theirs" {
		t.Errorf("conditions = %+v, want the foreign one first, as it was", conds)
	}
	if conds[1].Status != metav1.ConditionTrue || conds[1].ObservedGeneration != 4 || conds[1].LastTransitionTime.Equal(&past) {
		t.Errorf("Accepted = %+v, want True at 4, transitioned now", conds[1])
	}
	if conds[2].Status != metav1.ConditionTrue || conds[2].ObservedGeneration != 5 {
		t.Errorf("Programmed = %+v, want the newer generation's kept", conds[2])
	}
	if setConditions(&conds, []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 4, metav1.Time{})}) {
		t.Error("the same condition again is a change")
	}
}

// A Gateway's listeners keep their conditions' transition times, the
// addresses are the Envoys', and the same status merged again is no change.
func TestMergeGatewayStatus(t *testing.T) {
	group := gwapiv1.Group(gwapiv1.GroupName)
	kinds := []gwapiv1.RouteGroupKind{{Group: &group, Kind: "HTTPRoute"}}
	current := gwapiv1.GatewayStatus{
		Conditions: []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 1, past)},
		Listeners: []gwapiv1.ListenerStatus{{Name: "http", SupportedKinds: kinds, AttachedRoutes: 1,
			Conditions: []metav1.Condition{cond("Programmed", metav1.ConditionTrue, "Programmed", 1, past)}}},
	}
	want := gwapiv1.GatewayStatus{
		Conditions: []metav1.Condition{cond("Accepted", metav1.ConditionTrue, "Accepted", 1, metav1.Time{})},
		Listeners: []gwapiv1.ListenerStatus{{Name: "http", SupportedKinds: kinds, AttachedRoutes: 2,
			Conditions: []metav1.Condition{cond("Programmed", metav1.ConditionTrue, "Programmed", 1, metav1.Time{})}}},
	}
	addrs, err := NewStaticAddresses([]string{"192.0.2.1", "lb.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	got, changed := mergeGatewayStatus(current, want, gatewayAddresses(addrs))
	if !changed {
		t.Fatal("attachedRoutes and addresses changed, but not the status")
	}
	if l := got.Listeners[0]; l.AttachedRoutes != 2 || !l.Conditions[0].LastTransitionTime.Equal(&past) {
		t.Errorf("listener = %+v, want 2 Routes and the old transition time", l)
	}
	if !got.Conditions[0].LastTransitionTime.Equal(&past) {
		t.Errorf("Accepted = %+v, want the old transition time", got.Conditions[0])
	}
	if a := got.Addresses; len(a) != 2 || *a[0].Type != gwapiv1.IPAddressType || a[0].Value != "192.0.2.1" ||
		*a[1].Type != gwapiv1.HostnameAddressType || a[1].Value != "lb.example.com" {
		t.Errorf("addresses = %+v", a)
	}
	if _, changed := mergeGatewayStatus(got, want, gatewayAddresses(addrs)); changed {
		t.Error("the same status merged again is a change")
	}

	// InsecureFrontendValidationMode is written while it holds and taken
	// off once the front-end no longer writes it; another controller's
	// condition type stays.
	insecure := cond("InsecureFrontendValidationMode", metav1.ConditionTrue, "ConfigurationChanged", 1, metav1.Time{})
	foreign := cond("SomeoneElses", metav1.ConditionTrue, "Theirs", 1, past)
	got.Conditions = append(got.Conditions, foreign)
	withInsecure := *want.DeepCopy()
	withInsecure.Conditions = append(withInsecure.Conditions, insecure)
	got, changed = mergeGatewayStatus(got, withInsecure, gatewayAddresses(addrs))
	if !changed || meta.FindStatusCondition(got.Conditions, "InsecureFrontendValidationMode") == nil {
		t.Fatalf("InsecureFrontendValidationMode not written: %+v", got.Conditions)
	}
	got, changed = mergeGatewayStatus(got, want, gatewayAddresses(addrs))
	if !changed || meta.FindStatusCondition(got.Conditions, "InsecureFrontendValidationMode") != nil {
		t.Errorf("InsecureFrontendValidationMode not taken off: %+v", got.Conditions)
	}
	if meta.FindStatusCondition(got.Conditions, "SomeoneElses") == nil {
		t.Errorf("another controller's condition was taken off: %+v", got.Conditions)
	}
}

// TestMergeAncestorsAsParents: a BackendTLSPolicy's ancestors merge as a
// Route's parents do: another controller's entry stays, ours is
// replaced, and merging the result again changes nothing.
func TestMergeAncestorsAsParents(t *testing.T) {
	asAncestor := func(p gwapiv1.RouteParentStatus) gwapiv1.PolicyAncestorStatus {
		return gwapiv1.PolicyAncestorStatus{AncestorRef: p.ParentRef, ControllerName: p.ControllerName, Conditions: p.Conditions}
	}
	theirs := asAncestor(parent("their-gw", "example.com/other", cond("Accepted", metav1.ConditionTrue, "Accepted", 1, past)))
	current := []gwapiv1.PolicyAncestorStatus{theirs, asAncestor(parent("gone", ourController, cond("Accepted", metav1.ConditionTrue, "Accepted", 1, past)))}
	want := []gwapiv1.PolicyAncestorStatus{asAncestor(parent("web", ourController, cond("Accepted", metav1.ConditionFalse, "NoValidCACertificate", 2, metav1.Time{})))}
	got, changed := mergeAncestors(current, want, ourController, "app")
	if !changed || len(got) != 2 || got[0].ControllerName != theirs.ControllerName || got[1].AncestorRef.Name != "web" ||
		got[1].Conditions[0].Reason != "NoValidCACertificate" || got[1].AncestorRef.Kind == nil {
		t.Fatalf("ancestors = %+v, changed %v; want theirs, then ours for web", got, changed)
	}
	if again, changed := mergeAncestors(got, want, ourController, "app"); changed || len(again) != 2 {
		t.Errorf("merging again changed %+v", again)
	}
}

// TestStaticAddresses: a Gateway's spec.addresses of a value must be the
// Envoys' (conformance tests/gateway-static-addresses.go of
// sigs.k8s.io/gateway-api): one that is not leaves the Gateway not
// Programmed (AddressNotUsable) and out of status.addresses; once every
// one is, status.addresses are those asked for, not every Envoy's. An
// address of a type without a value (GatewayAddressEmpty) or none at all
// gets the Envoys'.
func TestStaticAddresses(t *testing.T) {
	source, err := NewStaticAddresses([]string{"192.0.2.1", "192.0.2.2", "lb.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	envoys := gatewayAddresses(source)
	ip, host := gwapiv1.IPAddressType, gwapiv1.HostnameAddressType
	want := gwapiv1.GatewayStatus{Conditions: []metav1.Condition{
		cond("Accepted", metav1.ConditionTrue, "Accepted", 3, metav1.Time{}),
		cond("Programmed", metav1.ConditionTrue, "Programmed", 3, metav1.Time{}),
	}}
	values := func(a []gwapiv1.GatewayStatusAddress) []string {
		var out []string
		for _, x := range a {
			out = append(out, string(*x.Type)+" "+x.Value)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		spec       []gwapiv1.GatewaySpecAddress
		addresses  []string
		programmed metav1.ConditionStatus
		reason     string
	}{
		{"none asked", nil, []string{"IPAddress 192.0.2.1", "IPAddress 192.0.2.2", "Hostname lb.example.com"}, metav1.ConditionTrue, "Programmed"},
		{"a type without a value", []gwapiv1.GatewaySpecAddress{{Type: &ip}}, []string{"IPAddress 192.0.2.1", "IPAddress 192.0.2.2", "Hostname lb.example.com"}, metav1.ConditionTrue, "Programmed"},
		{"one of the Envoys'", []gwapiv1.GatewaySpecAddress{{Type: &ip, Value: "192.0.2.2"}}, []string{"IPAddress 192.0.2.2"}, metav1.ConditionTrue, "Programmed"},
		{"a type left to its default", []gwapiv1.GatewaySpecAddress{{Value: "192.0.2.1"}}, []string{"IPAddress 192.0.2.1"}, metav1.ConditionTrue, "Programmed"},
		{"a hostname, any case", []gwapiv1.GatewaySpecAddress{{Type: &host, Value: "LB.example.com"}}, []string{"Hostname LB.example.com"}, metav1.ConditionTrue, "Programmed"},
		{"one not the Envoys'", []gwapiv1.GatewaySpecAddress{{Type: &ip, Value: "198.51.100.7"}, {Type: &ip, Value: "192.0.2.1"}}, []string{"IPAddress 192.0.2.1"}, metav1.ConditionFalse, "AddressNotUsable"},
		{"an IP address named as a hostname", []gwapiv1.GatewaySpecAddress{{Type: &host, Value: "192.0.2.1"}}, nil, metav1.ConditionFalse, "AddressNotUsable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, status := staticAddresses(tc.spec, envoys, want)
			if !slices.Equal(values(got), tc.addresses) {
				t.Errorf("addresses = %v, want %v", values(got), tc.addresses)
			}
			p := meta.FindStatusCondition(status.Conditions, "Programmed")
			if p == nil || p.Status != tc.programmed || p.Reason != tc.reason || p.ObservedGeneration != 3 {
				t.Errorf("Programmed = %+v, want %s %s at generation 3", p, tc.programmed, tc.reason)
			}
			if w := meta.FindStatusCondition(want.Conditions, "Programmed"); w.Status != metav1.ConditionTrue {
				t.Error("the front-end's status was changed in place")
			}
		})
	}
}

// A status made from the map the writer holds, with the Routes whose
// entries may differ, has those alone queued; made from another map (a
// build the writer was not handed), every entry is compared again.
func TestEnqueueChangedFollowsTheAccount(t *testing.T) {
	accepted := func(gen int64) gwapiv1.HTTPRouteStatus {
		return gwapiv1.HTTPRouteStatus{RouteStatus: gwapiv1.RouteStatus{Parents: []gwapiv1.RouteParentStatus{
			parent("web", ourController, cond("Accepted", metav1.ConditionTrue, "Accepted", gen, metav1.Time{}))}}}
	}
	old := map[string]gwapiv1.HTTPRouteStatus{"ns/a": accepted(1), "ns/b": accepted(1), "ns/c": accepted(1)}
	next := maps.Clone(old)
	next["ns/b"] = accepted(2)
	next["ns/d"] = accepted(1)
	queued := func(since map[string]gwapiv1.HTTPRouteStatus, changed []string) []string {
		queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[gatewayStatusKey]())
		defer queue.ShutDown()
		enqueueChanged(queue, kindHTTPRoute, old, next, since, changed)
		var out []string
		for queue.Len() > 0 {
			key, _ := queue.Get()
			out = append(out, key.name.String())
			queue.Done(key)
		}
		slices.Sort(out)
		return out
	}
	if got, want := queued(old, []string{"ns/b", "ns/d"}), []string{"ns/b", "ns/d"}; !slices.Equal(got, want) {
		t.Errorf("with the account: queued %v, want %v", got, want)
	}
	// An account against another map is not taken: all compared, both
	// differences found although the account names one.
	if got, want := queued(maps.Clone(old), []string{"ns/b"}), []string{"ns/b", "ns/d"}; !slices.Equal(got, want) {
		t.Errorf("with an account against another map: queued %v, want %v", got, want)
	}
	if got, want := queued(nil, nil), []string{"ns/b", "ns/d"}; !slices.Equal(got, want) {
		t.Errorf("without an account: queued %v, want %v", got, want)
	}
}
