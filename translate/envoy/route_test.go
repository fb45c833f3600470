package envoy

import (
	"reflect"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A share's header changes come after its route's: folded into one list
// that Envoy applies at once, what the share sets or removes drops the
// route's sets and additions of that header, and the rest is kept in
// order, the route's first.
func TestFoldHeaders(t *testing.T) {
	route := &ir.HeaderChanges{
		Remove: []string{"x-r"},
		Set:    []ir.Header{{Name: "Backend", Value: "rule"}, {Name: "x-rule", Value: "rule"}, {Name: "x-gone", Value: "rule"}},
		Add:    []ir.Header{{Name: "x-both", Value: "rule"}, {Name: "backend", Value: "rule-add"}},
	}
	share := &ir.HeaderChanges{
		Remove: []string{"X-Gone"},
		Set:    []ir.Header{{Name: "backend", Value: "alpha"}},
		Add:    []ir.Header{{Name: "x-both", Value: "alpha"}},
	}
	want := &ir.HeaderChanges{
		Remove: []string{"x-r", "X-Gone"},
		Set:    []ir.Header{{Name: "x-rule", Value: "rule"}, {Name: "backend", Value: "alpha"}},
		Add:    []ir.Header{{Name: "x-both", Value: "rule"}, {Name: "x-both", Value: "alpha"}},
	}
	if got := foldHeaders(route, share); !reflect.DeepEqual(got, want) {
		t.Errorf("folded:\n%+v\nwant\n%+v", got, want)
	}
	if got := foldHeaders(nil, share); got != share {
		t.Errorf("no route changes: %+v, want the share's", got)
	}
	if got := foldHeaders(route, nil); got != route {
		t.Errorf("no share changes: %+v, want the route's", got)
	}
	if len(route.Remove) != 1 || len(route.Set) != 3 {
		t.Errorf("the route's changes were modified: %+v", route)
	}
}
