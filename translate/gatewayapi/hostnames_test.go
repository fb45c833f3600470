package gatewayapi

import (
	"slices"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestHostnames holds the intersection to the specification's examples.
func TestHostnames(t *testing.T) {
	for _, c := range []struct {
		listener string
		route    []gwapiv1.Hostname
		want     []string
	}{
		{"", nil, []string{"*"}},
		{"", []gwapiv1.Hostname{"A.example.com", "*.example.com"}, []string{"a.example.com", "*.example.com"}},
		{"foo.example.com", nil, []string{"foo.example.com"}},
		{"*.example.com", nil, []string{"*.example.com"}},
		// A wildcard covers one label or more, never its suffix alone.
		{"*.example.com", []gwapiv1.Hostname{"foo.example.com", "a.b.example.com", "example.com", "foo.example.org"}, []string{"foo.example.com", "a.b.example.com"}},
		// Of two wildcards, the narrower is served.
		{"*.example.com", []gwapiv1.Hostname{"*.a.example.com", "*.com", "*.example.com"}, []string{"*.a.example.com", "*.example.com", "*.example.com"}},
		{"foo.example.com", []gwapiv1.Hostname{"*.example.com", "*.foo.example.com", "bar.example.com"}, []string{"foo.example.com"}},
		{"foo.example.com", []gwapiv1.Hostname{"*.com"}, []string{"foo.example.com"}},
		{"*.example.com", []gwapiv1.Hostname{"xexample.com", "*.xexample.com"}, nil},
	} {
		if got := hostnames(c.listener, c.route); !slices.Equal(got, c.want) {
			t.Errorf("hostnames(%q, %q) = %q, want %q", c.listener, c.route, got, c.want)
		}
	}
}

func pathPrefix(value string) gwapiv1.HTTPRouteMatch {
	t := gwapiv1.PathMatchPathPrefix
	return gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: &t, Value: &value}}
}
