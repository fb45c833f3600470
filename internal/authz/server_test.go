package authz

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// startServer serves the service over real gRPC on loopback, as Envoy
// calls it, and returns a client.
func startServer(t *testing.T, o Options) (authv3.AuthorizationClient, *Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	s := NewServer(slog.New(slog.DiscardHandler), o)
	authv3.RegisterAuthorizationServer(srv, s)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return authv3.NewAuthorizationClient(conn), s
}

func checkRequest(ext map[string]string, headers map[string]string) *authv3.CheckRequest {
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request:           &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{Method: "GET", Path: "/", Headers: headers}},
		ContextExtensions: ext,
	}}
}

func basicHeader(user, password string) map[string]string {
	return map[string]string{"authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
}

func TestBasicThroughGRPC(t *testing.T) {
	client, _ := startServer(t, Options{Cache: DefaultCacheOptions()})
	hash, err := bcrypt.GenerateFromPassword([]byte("bar"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	ext := map[string]string{
		authzapi.KeyKind:    authzapi.KindBasic,
		authzapi.BasicRealm: "test auth",
		// A comment, a user of another scheme, then ours.
		authzapi.BasicUsers: "# users\nother:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\r\nfoo:" + string(hash) + ":a comment\n:{PLAIN}x\n",
	}
	ctx := context.Background()
	cases := []struct {
		name    string
		headers map[string]string
		allowed bool
	}{
		{"no credentials", nil, false},
		{"right credentials", basicHeader("foo", "bar"), true},
		{"right credentials again (cached)", basicHeader("foo", "bar"), true},
		{"wrong password", basicHeader("foo", "baz"), false},
		{"unknown user", basicHeader("nobody", "bar"), false},
		{"the other user", basicHeader("other", "secret"), true},
		{"another scheme", map[string]string{"authorization": "Bearer Zm9vOmJhcg=="}, false},
		{"scheme in lower case", map[string]string{"authorization": "basic Zm9vOmJhcg=="}, true},
		{"not base64", map[string]string{"authorization": "Basic !!!"}, false},
		{"no colon", map[string]string{"authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("foobar"))}, false},
		// nginx's ngx_http_auth_basic_user declines an empty user name
		// (no credentials), even where the file has a line for one.
		{"empty user", basicHeader("", "x"), false},
	}
	for _, c := range cases {
		resp, err := client.Check(ctx, checkRequest(ext, c.headers))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ok := resp.GetStatus().GetCode() == int32(code.Code_OK)
		if ok != c.allowed {
			t.Errorf("%s: allowed %v, want %v", c.name, ok, c.allowed)
			continue
		}
		if ok {
			if got := resp.GetOkResponse().GetHeadersToRemove(); len(got) != 1 || got[0] != "authorization" {
				t.Errorf("%s: removes %v, want the authorization header", c.name, got)
			}
			continue
		}
		d := resp.GetDeniedResponse()
		if d.GetStatus().GetCode() != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", c.name, d.GetStatus().GetCode())
		}
		var challenge string
		for _, h := range d.GetHeaders() {
			if h.GetHeader().GetKey() == "WWW-Authenticate" {
				challenge = h.GetHeader().GetValue()
			}
		}
		if challenge != `Basic realm="test auth"` {
			t.Errorf("%s: WWW-Authenticate %q", c.name, challenge)
		}
	}
}

func TestUnknownKindIsRefused(t *testing.T) {
	client, _ := startServer(t, Options{})
	for _, kind := range []string{"", "digest", "basic,nope"} {
		ext := map[string]string{authzapi.KeyKind: kind, authzapi.BasicUsers: "foo:{PLAIN}bar"}
		resp, err := client.Check(context.Background(), checkRequest(ext, basicHeader("foo", "bar")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus().GetCode() == int32(code.Code_OK) || resp.GetDeniedResponse().GetStatus().GetCode() != http.StatusInternalServerError {
			t.Errorf("kind %q: %v, want a 500 refusal", kind, resp)
		}
	}
}

func TestVerificationCache(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newVerifications(CacheOptions{Entries: 2, TTL: time.Minute, now: func() time.Time { return now }})
	a, b, d := verificationKey("h", "u", "p"), verificationKey("h", "u", "q"), verificationKey("h2", "u", "p")
	if a == b || a == d || verificationKey("hu", "", "p") == verificationKey("h", "u", "p") {
		t.Fatal("different verifications share a key")
	}
	c.remember(a)
	if !c.verified(a) || c.verified(b) || c.verified(d) {
		t.Fatal("only the remembered verification is verified")
	}
	c.remember(b)
	c.remember(d) // over the bound: one goes
	if c.len() != 2 || !c.verified(d) {
		t.Fatalf("%d entries, the newest verified %v", c.len(), c.verified(d))
	}
	now = now.Add(2 * time.Minute)
	if c.verified(d) {
		t.Fatal("an expired entry is verified")
	}
	off := newVerifications(CacheOptions{})
	off.remember(a)
	if off.verified(a) {
		t.Fatal("a cache of no entries remembers")
	}
}
