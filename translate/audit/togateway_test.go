package audit

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/audit/togateway"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// convOptions are the conversion cases' options: serve's ports, and the
// names custom-headers may set.
var convOptions = ingress.Options{HTTPPort: 8080, HTTPSPort: 8443, AllowedResponseHeaders: []string{"X-Frame-Options"}}

// convCases are testdata/togateway's inputs (the outputs end in
// .gateway.yaml).
func convCases(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("testdata/togateway/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inputs := slices.DeleteFunc(all, func(p string) bool { return strings.HasSuffix(p, ".gateway.yaml") })
	if len(inputs) == 0 {
		t.Fatal("no cases in testdata/togateway")
	}
	return inputs
}

func convert(t *testing.T, input string) (*GatewayReport, *togateway.Result, *kube.State) {
	t.Helper()
	st := load(t, input)
	r, res := ToGatewayAPI(st, convOptions, togateway.Options{})
	return r, res, st
}

// TestGoldenToGatewayAPI: each testdata/togateway case's objects
// (<case>.gateway.yaml) and report (<case>.txt, <case>.json),
// regenerated with -update.
func TestGoldenToGatewayAPI(t *testing.T) {
	for _, input := range convCases(t) {
		t.Run(filepath.Base(input), func(t *testing.T) {
			r, res, _ := convert(t, input)
			base := strings.TrimSuffix(input, ".yaml")
			objs, err := res.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, base+".gateway.yaml", objs)
			golden.Check(t, base+".txt", r.Text())
			out, err := r.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, base+".json", out)
		})
	}
}

// The check says "same routing" for what converts without a difference,
// and names the differences of the rest: the Ingresses below, each
// converted annotation of theirs stating its difference in its note.
func TestSameRoutingWhereConverted(t *testing.T) {
	differs := map[string]bool{
		"forced":   true, // nginx drops the trailing / from the redirect's URL
		"moved":    true, // nginx's return drops the query
		"captures": true, // rewrite-target with captures is not converted
		"idiom":    true, // nginx's regular expression is case-insensitive
		"cors":     true, // ingress-nginx answers every OPTIONS itself
		"catalog":  true, // the host is in regex mode through another Ingress
		"approot":  true, // nginx's return drops the query
		"fallback": true, // a Route without hostnames serves every host
		"guarded":  true, // its rate limit and address rule are dropped
	}
	seen := 0
	for _, input := range convCases(t) {
		r, _, _ := convert(t, input)
		for _, ing := range r.Ingresses {
			seen++
			if ing.SameRouting == differs[ing.Name] {
				t.Errorf("%s: %s/%s: same routing %v, want %v; differences: %v", filepath.Base(input), ing.Namespace, ing.Name, ing.SameRouting, !differs[ing.Name], ing.Differences)
			}
			if ing.RoutesCompared == 0 && !strings.HasSuffix(ing.Name, "-canary") {
				t.Errorf("%s/%s: no route compared", ing.Namespace, ing.Name)
			}
			if !ing.SameRouting && len(ing.Problems) == 0 && !slices.ContainsFunc(ing.Annotations, func(a togateway.Annotation) bool { return a.Outcome != togateway.Converted }) && ing.Name != "catalog" {
				t.Errorf("%s/%s routes differently but no annotation says why", ing.Namespace, ing.Name)
			}
		}
	}
	if seen < 10 {
		t.Errorf("checked %d Ingresses: the cases hold more", seen)
	}
}

// The case built to differ: the difference is the one the case's
// comment states, a PathPrefix of Gateway API where ingress-nginx's host
// is in regex mode.
func TestCheckReportsTheDifference(t *testing.T) {
	r, _, _ := convert(t, "testdata/togateway/differs.yaml")
	i := slices.IndexFunc(r.Ingresses, func(g GatewayIngress) bool { return g.Name == "catalog" })
	if i < 0 {
		t.Fatal("no catalog Ingress in the report")
	}
	found := false
	for _, d := range r.Ingresses[i].Differences {
		if strings.Contains(d.Where, "store.example.com") && (strings.Contains(d.Where, "Prefix /catalog") || strings.Contains(d.Where, "Regex")) {
			found = true
		}
	}
	if !found || !r.Differs() {
		t.Errorf("differences %v (Differs %v): want the regex match against the prefix", r.Ingresses[i].Differences, r.Differs())
	}
}

// Every object made is accepted by the Gateway API front-end: the
// Gateways and their listeners Accepted and Programmed, every Route's
// parents Accepted with their references resolved.
func TestConvertedObjectsAccepted(t *testing.T) {
	for _, input := range convCases(t) {
		t.Run(filepath.Base(input), func(t *testing.T) {
			_, res, st := convert(t, input)
			gw := gatewayOptions(convOptions)
			_, status := gatewayapi.BuildWithStatus(gatewayState(st, res, togateway.Options{}, gw), gw)
			if len(res.Gateways) == 0 || len(res.HTTPRoutes) == 0 {
				t.Fatalf("made %d Gateways and %d HTTPRoutes", len(res.Gateways), len(res.HTTPRoutes))
			}
			for _, gw := range res.Gateways {
				s, ok := status.Gateways[gw.Namespace+"/"+gw.Name]
				if !ok {
					t.Fatalf("no status for Gateway %s/%s", gw.Namespace, gw.Name)
				}
				checkTrue(t, "Gateway "+gw.Name, s.Conditions, "Accepted", "Programmed")
				if len(s.Listeners) != len(gw.Spec.Listeners) {
					t.Errorf("Gateway %s: %d listeners in status, %d in spec", gw.Name, len(s.Listeners), len(gw.Spec.Listeners))
				}
				for _, l := range s.Listeners {
					checkTrue(t, fmt.Sprintf("Gateway %s listener %s", gw.Name, l.Name), l.Conditions, "Accepted", "Programmed", "ResolvedRefs")
				}
			}
			for _, hr := range res.HTTPRoutes {
				s, ok := status.HTTPRoutes[hr.Namespace+"/"+hr.Name]
				if !ok || len(s.Parents) != len(hr.Spec.ParentRefs) {
					t.Errorf("HTTPRoute %s/%s: status %+v for %d parentRefs", hr.Namespace, hr.Name, s, len(hr.Spec.ParentRefs))
					continue
				}
				for _, p := range s.Parents {
					checkTrue(t, fmt.Sprintf("HTTPRoute %s parent %s", hr.Name, deref(p.ParentRef.SectionName)), p.Conditions, "Accepted", "ResolvedRefs")
				}
			}
		})
	}
}

func checkTrue(t *testing.T, what string, conds []metav1.Condition, types ...string) {
	t.Helper()
	for _, typ := range types {
		i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == typ })
		if i < 0 || conds[i].Status != metav1.ConditionTrue {
			t.Errorf("%s: %s is not True: %+v", what, typ, conds)
		}
	}
}
