package envoy_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// TestPasswordHashesNeverShown: basic authentication's user file is sent to
// Envoy in the routes as the Secret holds it (the authorisation service
// reads it from each check), and replaced wherever resources are shown
// (translate -f, the Inspector), without touching the message that is sent.
func TestPasswordHashesNeverShown(t *testing.T) {
	m := readIR(t, "../ingress/testdata/basicauth.json")
	var users string
	for _, vh := range m.VirtualHosts {
		for _, r := range vh.Routes {
			if r.Policy != nil && r.Policy.Auth != nil && r.Policy.Auth.Basic != nil {
				users = r.Policy.Auth.Basic.Users
			}
		}
	}
	if users == "" {
		t.Fatal("the basicauth case has no route with a user file")
	}
	hash := []byte("$apr1$saltsalt$qYpLAVWkBvXFyDme7.oc1/")
	res, err := envoy.NewRenderer().Render(m)
	if err != nil {
		t.Fatal(err)
	}
	det := proto.MarshalOptions{Deterministic: true}
	sent, shown := 0, 0
	for _, rc := range res.Routes {
		raw, err := det.Marshal(rc)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, hash) {
			sent++
		}
		red := envoy.RedactRoute(rc)
		redRaw, err := det.Marshal(red)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(redRaw, hash) {
			shown++
		}
		if !bytes.Contains(raw, hash) && red != rc {
			t.Errorf("route configuration %s has no user file, and was copied", rc.GetName())
		}
		if again, _ := det.Marshal(rc); !bytes.Equal(again, raw) {
			t.Errorf("redacting changed the route configuration %s that is sent", rc.GetName())
		}
	}
	if sent == 0 {
		t.Fatal("no route configuration sends the user file to Envoy")
	}
	if shown != 0 {
		t.Errorf("%d route configurations still show a hash once redacted", shown)
	}
	out, err := envoy.RenderJSON(res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, hash) || !bytes.Contains(out, []byte(envoy.Redacted)) {
		t.Error("translate's output shows a password hash, or no redaction")
	}
}
