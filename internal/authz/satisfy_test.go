package authz

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

func fromAddress(req *authv3.CheckRequest, ip string) *authv3.CheckRequest {
	req.Attributes.Source = &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
		SocketAddress: &corev3.SocketAddress{Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 4000}}}}}
	return req
}

// satisfy any, as nginx's access phase with it
// (annotations/satisfy.go's cases among them): an allowed address or
// either kind lets the request in, clearing what authentication would;
// refused by all, a 401 (auth-signin's redirect when set) beats a 403; an
// auth service's 500 ends the checks.
func TestSatisfyAny(t *testing.T) {
	// The service itself refuses loopback auth URLs: its checkers, with
	// the external one allowed to reach the test's.
	s := NewServer(slog.New(slog.DiscardHandler), Options{Cache: DefaultCacheOptions()})
	s.checkers[authzapi.KindExternal] = newExternalChecker(externalOptions{allowAnyAddress: true})
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			w.Header().Set("X-User", "ext-user")
			w.WriteHeader(http.StatusOK)
		case "Bearer broken":
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="ext"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(auth.Close)
	base := func(kinds string, extra map[string]string) map[string]string {
		ext := map[string]string{
			authzapi.KeyKind: kinds, authzapi.KeySatisfy: authzapi.SatisfyAny,
			authzapi.BasicRealm: "test", authzapi.BasicUsers: "uname:{PLAIN}pwd",
			authzapi.ExternalURL: auth.URL, authzapi.ExternalResponseHeaders: "X-User",
		}
		for k, v := range extra {
			ext[k] = v
		}
		return ext
	}
	ranges := map[string]string{authzapi.AddressAllow: "10.0.0.0/8", authzapi.AddressDeny: "10.9.0.0/16"}
	signin := map[string]string{authzapi.ExternalSignin: "http://auth.example.com/start"}
	for _, c := range []struct {
		name    string
		ext     map[string]string
		ip      string
		headers map[string]string
		status  int // 0: allowed
		removed []string
		set     string // a header the request gets
	}{
		{"an allowed address needs no credentials", base("basic", ranges), "10.1.2.3", nil, 0, []string{"authorization"}, ""},
		{"another address, good credentials", base("basic", ranges), "192.0.2.1", basicHeader("uname", "pwd"), 0, []string{"authorization"}, ""},
		{"another address, none: basic's 401", base("basic", ranges), "192.0.2.1", nil, http.StatusUnauthorized, nil, ""},
		{"a denied address, good credentials", base("basic", ranges), "10.9.0.1", basicHeader("uname", "pwd"), 0, []string{"authorization"}, ""},
		{"a denied address, none", base("basic", ranges), "10.9.0.1", nil, http.StatusUnauthorized, nil, ""},
		{"basic passes, the external headers cleared", base("basic,external", nil), "192.0.2.1", basicHeader("uname", "pwd"), 0, []string{"authorization", "x-user"}, ""},
		{"external passes, Authorization cleared", base("basic,external", nil), "192.0.2.1", map[string]string{"authorization": "Bearer good"}, 0, []string{"authorization"}, "X-User"},
		{"neither, with auth-signin: the redirect", base("basic,external", signin), "192.0.2.1", nil, http.StatusFound, nil, ""},
		{"neither, without: 401", base("basic,external", nil), "192.0.2.1", nil, http.StatusUnauthorized, nil, ""},
		{"an auth service error ends it", base("basic,external", nil), "192.0.2.1", map[string]string{"authorization": "Bearer broken"}, http.StatusInternalServerError, nil, ""},
		{"an allowed address, external", base("external", ranges), "10.1.2.3", nil, 0, []string{"x-user"}, ""},
		{"an address that cannot be read", base("basic", ranges), "", nil, http.StatusUnauthorized, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := s.Check(context.Background(), fromAddress(checkRequest(c.ext, c.headers), c.ip))
			if err != nil {
				t.Fatal(err)
			}
			if c.status == 0 {
				ok := resp.GetOkResponse()
				if resp.GetStatus().GetCode() != int32(code.Code_OK) || ok == nil {
					t.Fatalf("denied: %v", resp)
				}
				for _, h := range c.removed {
					if !slices.Contains(ok.GetHeadersToRemove(), h) {
						t.Errorf("%s not removed: %v", h, ok.GetHeadersToRemove())
					}
				}
				if c.set != "" && !slices.ContainsFunc(ok.GetHeaders(), func(h *corev3.HeaderValueOption) bool { return h.GetHeader().GetKey() == c.set }) {
					t.Errorf("%s not set: %v", c.set, ok.GetHeaders())
				}
				return
			}
			if got := resp.GetDeniedResponse().GetStatus().GetCode(); int(got) != c.status {
				t.Errorf("status %d, want %d (%v)", got, c.status, resp)
			}
		})
	}
}
