package kube

import (
	"context"
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// Extra names (mirror targets) are resolved and checked as ExternalName
// Services' are, each handed out as a Service of no namespace with its
// verdict and its addresses as endpoints; a name no longer listed goes.
func TestResolveNamesExtraNames(t *testing.T) {
	d := framework.StartDNS(t, 1)
	d.Set("good.mirror.test", "198.51.100.7")
	d.Set("evil.mirror.test", "198.51.100.8", "127.0.0.1")
	st := externalNameState("good.mirror.test")
	names := []string{"good.mirror.test", "evil.mirror.test.", "203.0.113.9", "169.254.169.254"}
	extra := func(*State) []string { return names }
	out := ResolveNames(context.Background(), st, DNSResolver{Server: d.Address}, AddressPolicy{}, extra)

	addresses := func(name string) []string {
		var a []string
		for _, sl := range out.EndpointSlices[NameService(name)] {
			a = append(a, sl.Ready...)
		}
		return a
	}
	for _, tc := range []struct {
		name    string
		refused bool
		addrs   []string
	}{
		{"good.mirror.test", false, []string{"198.51.100.7"}},
		{"evil.mirror.test", true, nil},
		{"203.0.113.9", false, []string{"203.0.113.9"}},
		{"169.254.169.254", true, nil},
	} {
		svc := out.Services[NameService(tc.name)]
		switch {
		case svc == nil || svc.Resolved == nil:
			t.Errorf("%s: no Service with a verdict: %+v", tc.name, svc)
		case (svc.Resolved.Refused != "") != tc.refused || svc.Resolved.Err != "":
			t.Errorf("%s: verdict %+v, want refused %v", tc.name, svc.Resolved, tc.refused)
		case !slices.Equal(addresses(tc.name), tc.addrs):
			t.Errorf("%s: endpoints %v, want %v", tc.name, addresses(tc.name), tc.addrs)
		}
	}
	// The Service an ExternalName names is resolved beside them, as before.
	if r := out.Services[extSvc].Resolved; r == nil || r.Refused != "" || r.Err != "" {
		t.Errorf("the ExternalName Service: %+v", r)
	}
	if len(st.Services) != 2 || st.Services[NameService("good.mirror.test")] != nil {
		t.Errorf("the input State was changed: %v", st.Services)
	}
}
