package main

import (
	"bytes"
	"strings"
	"testing"
)

// --gateway-controller-name chooses the GatewayClasses served: translate
// -f serves the HTTPRoutes of the golden case's class under its default
// name, and none of them under another.
func TestGatewayControllerName(t *testing.T) {
	translated := func(args ...string) string {
		var out bytes.Buffer
		if err := runTranslate(append([]string{"-f", "../../translate/testdata/gateway-api.yaml"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := translated(); !strings.Contains(got, `"modern.example.com"`) {
		t.Errorf("with the default controller name, the HTTPRoute's host is not served:\n%s", got)
	}
	got := translated("--gateway-controller-name", "example.com/another-controller")
	if strings.Contains(got, `"modern.example.com"`) {
		t.Errorf("under another controller name, the HTTPRoute's host is served:\n%s", got)
	}
	if !strings.Contains(got, `"legacy.example.com"`) {
		t.Errorf("under another controller name, the Ingress is not served:\n%s", got)
	}
}
