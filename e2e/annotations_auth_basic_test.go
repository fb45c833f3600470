package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestBasicAuth checks ingress-nginx's basic authentication (auth-type,
// auth-secret, auth-secret-type, auth-realm) through a real Envoy and the
// real authorisation service beside it (ingress-xds authz), which verifies
// the passwords. Each scenario names the test of ingress-nginx's
// test/e2e/annotations/auth.go it mirrors, or nginx's auth_basic
// documentation (https://nginx.org/en/docs/http/ngx_http_auth_basic_module.html)
// for the hash schemes that file does not try.
func TestBasicAuth(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	// ingress-nginx's buildSecret hashes with bcrypt (cost 14 there; the
	// default cost here, to spare the shared machine: the same scheme).
	bcryptHash := func(password string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	fooBar := bcryptHash("bar")
	secrets := strings.Join([]string{
		basicSecret("test", map[string]string{"auth": "foo:" + fooBar + "\n"}),
		basicSecret("map", map[string]string{"foo": fooBar}),
		basicSecret("invalid", map[string]string{"auth": "foo:"}),
		// Hashes made by openssl passwd -apr1 and -6, htpasswd -s's
		// {SHA}, {SSHA}, and traditional DES crypt by perl's crypt()
		// (the C library's): crypt("pass", "ab") and crypt("password",
		// "ab"), and BSDi's extended DES crypt("123456789", "_1...XyZ.");
		// a user without a hash, whom nobody can log in as.
		basicSecret("schemes", map[string]string{"auth": strings.Join([]string{
			"apr:$apr1$saltsalt$qYpLAVWkBvXFyDme7.oc1/",
			"sha512:$6$saltsalt$cc1KsgmlKYtCcnNH8.sv7Fe8mca8fAso5fHlNrb1VZa5WYQ.L3ChTcx06ID.LoaXZAf9CZNraK43XCp7LxKHl1",
			"sha:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=",
			"ssha:{SSHA}TTHJCQxvDArxbE718yQusN+sPxpOYUNsMTIzNA==",
			"des:abccBcrPOxnLU",
			"des8:abJnggxhB/yWI",
			"nohash:",
			":{PLAIN}x",
			"bsdi:_1...XyZ.i79ScER2e.g",
		}, "\n") + "\n"}),
		basicSecret("rotating", map[string]string{"auth": "foo:" + fooBar + "\n"}),
		// musl's crypt("password", "\x80x"): a salt byte that is not
		// UTF-8, which the route's configuration cannot carry.
		basicSecret("latin", map[string]string{"auth": "foo:\x80xF6NQoyblqO6\n"}),
	}, "")
	basic := func(secret string, extra map[string]string) map[string]string {
		a := map[string]string{"auth-type": "basic", "auth-secret": secret, "auth-realm": "test auth"}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	ingresses := strings.Join([]string{
		basicIngress("open", "open.basic.example", nil),
		basicIngress("missing", "missing.basic.example", basic("something", nil)),
		basicIngress("file", "file.basic.example", basic("test", nil)),
		basicIngress("map", "map.basic.example", basic("default/map", map[string]string{"auth-secret-type": "auth-map"})),
		basicIngress("invalid", "invalid.basic.example", basic("invalid", nil)),
		basicIngress("schemes", "schemes.basic.example", basic("schemes", nil)),
		basicIngress("rotating", "rotating.basic.example", basic("rotating", nil)),
		basicIngress("digest", "digest.basic.example", map[string]string{"auth-type": "digest", "auth-secret": "test"}),
		basicIngress("other-namespace", "other.basic.example", basic("kube-system/test", nil)),
		basicIngress("cors", "cors.basic.example", basic("test", map[string]string{"enable-cors": "true"})),
		basicIngress("latin", "latin.basic.example", basic("latin", nil)),
	}, "---\n")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"secrets.yaml", secrets},
		manifest{"ingresses.yaml", ingresses})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		if r := basicGet(envoy, "open.basic.example", ""); r.status != http.StatusOK {
			return fmt.Errorf("open host: %s", r)
		}
		if r := basicGet(envoy, "file.basic.example", "foo:bar"); r.status != http.StatusOK {
			return fmt.Errorf("file host with credentials: %s", r)
		}
		return nil
	})

	// auth.go "should return status code 200 when no authentication is
	// configured".
	t.Run("without authentication the backend answers", func(t *testing.T) {
		if r := basicGet(envoy, "open.basic.example", ""); r.status != http.StatusOK || r.backend != "alpha" {
			t.Errorf("open host: %s, want 200 from alpha", r)
		}
	})

	// auth.go "should return status code 503 when authentication is
	// configured with an invalid secret"; and the same denial for a
	// Secret of another namespace (ingress-nginx's "cross namespace
	// usage of secrets is not allowed"), and digest, which is refused.
	// The user file that is not UTF-8 is ingress-xds's own refusal (nginx
	// would read it; docs/bad-input.md, auth-secret-unusable): its paths
	// alone answer 503, every other host here is served.
	t.Run("a Secret that cannot be used, or digest, answers 503 and never the backend", func(t *testing.T) {
		for _, host := range []string{"missing.basic.example", "other.basic.example", "digest.basic.example", "latin.basic.example"} {
			for _, creds := range []string{"", "foo:bar"} {
				if r := basicGet(envoy, host, creds); r.status != http.StatusServiceUnavailable || r.backend != "" {
					t.Errorf("%s (credentials %q): %s, want 503 without the backend", host, creds, r)
				}
			}
		}
	})

	// auth.go "should return status code 401 when authentication is
	// configured but Authorization header is not configured" and "... is
	// sent with invalid credentials": 401, nginx's page, and the challenge
	// with the realm (auth_basic's "string").
	t.Run("no credentials, or wrong ones, get 401 with the challenge", func(t *testing.T) {
		for _, creds := range []string{"", "foo:baz", "nobody:bar", "foo:"} {
			r := basicGet(envoy, "file.basic.example", creds)
			if r.status != http.StatusUnauthorized || r.backend != "" {
				t.Errorf("credentials %q: %s, want 401 without the backend", creds, r)
			}
			if got := r.header.Get("WWW-Authenticate"); got != `Basic realm="test auth"` {
				t.Errorf("credentials %q: WWW-Authenticate %q", creds, got)
			}
			if !strings.Contains(r.body, "401 Authorization Required") {
				t.Errorf("credentials %q: body %q, want nginx's 401 page", creds, r.body)
			}
		}
		// Another scheme than Basic is no credentials.
		if r := basicGetHeader(envoy, "file.basic.example", "Bearer "+base64.StdEncoding.EncodeToString([]byte("foo:bar"))); r.status != http.StatusUnauthorized {
			t.Errorf("a Bearer token: %s, want 401", r)
		}
	})

	// auth.go "should return status code 401 and cors headers when
	// authentication and cors is configured but Authorization header is not
	// configured": the CORS headers are on the 401 too; cors.go's
	// preflight answer comes before the password check.
	t.Run("a 401 carries the CORS headers", func(t *testing.T) {
		r := basicGet(envoy, "cors.basic.example", "")
		if r.status != http.StatusUnauthorized || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("without credentials: %s, Access-Control-Allow-Origin %q; want 401 with *", r, r.header.Get("Access-Control-Allow-Origin"))
		}
		if r := basicGet(envoy, "cors.basic.example", "foo:bar"); r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("with credentials: %s, Access-Control-Allow-Origin %q; want 200 with *", r, r.header.Get("Access-Control-Allow-Origin"))
		}
		// ingress-nginx answers a preflight in nginx's rewrite phase,
		// before auth_basic's access phase: 204, without credentials.
		req, err := http.NewRequest(http.MethodOptions, "http://"+envoy.HTTPAddress+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "cors.basic.example"
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := (&http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("X-Backend") != "" {
			t.Errorf("a preflight without credentials: %d (backend %q), want 204 from the proxy", resp.StatusCode, resp.Header.Get("X-Backend"))
		}
	})

	// auth.go "should return status code 200 when authentication is
	// configured and Authorization header is sent", and the template's
	// proxy_set_header Authorization "": the backend does not see the
	// credentials.
	t.Run("the right credentials reach the backend, without them", func(t *testing.T) {
		r := basicGet(envoy, "file.basic.example", "foo:bar")
		if r.status != http.StatusOK || r.backend != "alpha" {
			t.Fatalf("with credentials: %s, want 200 from alpha", r)
		}
		if got := r.reply.Header.Get("Authorization"); got != "" {
			t.Errorf("the backend received Authorization %q", got)
		}
	})

	// auth.go "should return status code 200 when authentication is
	// configured with a map and Authorization header is sent".
	t.Run("auth-map", func(t *testing.T) {
		if r := basicGet(envoy, "map.basic.example", "foo:bar"); r.status != http.StatusOK || r.backend != "alpha" {
			t.Errorf("with credentials: %s, want 200 from alpha", r)
		}
		if r := basicGet(envoy, "map.basic.example", "foo:baz"); r.status != http.StatusUnauthorized {
			t.Errorf("with a wrong password: %s, want 401", r)
		}
	})

	// auth.go "should return status code 401 when authentication is
	// configured with invalid content and Authorization header is sent".
	t.Run("a user file of invalid content lets nobody in", func(t *testing.T) {
		for _, creds := range []string{"foo:bar", "foo:"} {
			if r := basicGet(envoy, "invalid.basic.example", creds); r.status != http.StatusUnauthorized {
				t.Errorf("credentials %q: %s, want 401", creds, r)
			}
		}
	})

	// nginx's auth_basic_user_file: "the following password types are
	// supported: encrypted with the crypt() function; ... hashed with the
	// Apache variant of the MD5-based password algorithm (apr1); specified
	// by the {scheme} syntax (PLAIN, SHA, SSHA)". A hash of no prefix goes
	// to the C library's crypt() (nginx's src/core/ngx_crypt.c, ngx_crypt's
	// "fallback to libc crypt()", then src/os/unix/ngx_user.c), whose
	// traditional DES takes the password's first 8 characters and ignores
	// the rest (crypt(3); musl's src/crypt/crypt_des.c, ingress-nginx's
	// image being Alpine's: "key - up to 8 characters"): a password that
	// differs only after its 8th character logs in too.
	t.Run("the hash schemes of htpasswd files", func(t *testing.T) {
		for _, c := range []struct {
			creds string
			want  int
		}{
			{"apr:pass word", http.StatusOK},
			{"sha512:pass word", http.StatusOK},
			{"sha:secret", http.StatusOK},
			{"ssha:salted", http.StatusOK},
			{"apr:pass", http.StatusUnauthorized},
			{"sha:salted", http.StatusUnauthorized},
			{"", http.StatusUnauthorized},
			{"des:pass", http.StatusOK},
			{"des:", http.StatusUnauthorized},
			{"des:pas", http.StatusUnauthorized},
			{"des:pass ", http.StatusUnauthorized},
			{"des:Pass", http.StatusUnauthorized},
			{"des:bar", http.StatusUnauthorized},
			{"des8:password", http.StatusOK},
			{"des8:passwordXYZ", http.StatusOK},
			{"des8:password and then anything", http.StatusOK},
			{"des8:passwor", http.StatusUnauthorized},
			{"des8:passwore", http.StatusUnauthorized},
			{"des8:pass", http.StatusUnauthorized},
			// BSDi's extended DES, which musl's and libxcrypt's crypt()
			// verify too, counts every byte.
			{"bsdi:123456789", http.StatusOK},
			{"bsdi:12345678", http.StatusUnauthorized},
			{"bsdi:1234567890", http.StatusUnauthorized},
			{"nohash:", http.StatusUnauthorized},
			{"nohash:x", http.StatusUnauthorized},
			// nginx's decoded password is a C string
			// (ngx_http_auth_basic_user in src/http/ngx_http_core_module.c
			// ends it with a NUL, every scheme takes its strlen): a NUL
			// ends it, whatever the scheme.
			{"sha:secret\x00and more", http.StatusOK},
			{"apr:pass word\x00", http.StatusOK},
			{"sha:\x00secret", http.StatusUnauthorized},
			// ngx_http_auth_basic_user takes an empty user for no
			// credentials, even where the file has a line for one.
			{":x", http.StatusUnauthorized},
		} {
			r := basicGet(envoy, "schemes.basic.example", c.creds)
			if r.status != c.want {
				t.Errorf("%q: %s, want %d", c.creds, r, c.want)
			}
			if c.want == http.StatusOK && r.backend != "alpha" {
				t.Errorf("%q: answered by %q, want alpha", c.creds, r.backend)
			}
		}
	})

	// The verification cache must never outlive a password change: the
	// new Secret's hash is another key.
	t.Run("a changed password takes effect, whatever was verified before", func(t *testing.T) {
		if r := basicGet(envoy, "rotating.basic.example", "foo:bar"); r.status != http.StatusOK {
			t.Fatalf("before the change: %s", r)
		}
		writeManifest(t, fm.dir, "secrets.yaml", strings.Replace(secrets,
			basicSecret("rotating", map[string]string{"auth": "foo:" + fooBar + "\n"}),
			basicSecret("rotating", map[string]string{"auth": "foo:" + bcryptHash("new") + "\n"}), 1))
		framework.Eventually(t, convergeTimeout, "the new password", func() error {
			if r := basicGet(envoy, "rotating.basic.example", "foo:new"); r.status != http.StatusOK {
				return fmt.Errorf("new password: %s", r)
			}
			return nil
		})
		if r := basicGet(envoy, "rotating.basic.example", "foo:bar"); r.status != http.StatusUnauthorized {
			t.Errorf("the old password after the change: %s, want 401", r)
		}
	})

	// auth.go "keeps processing new ingresses even if one of the existing
	// ingresses is misconfigured".
	t.Run("a misconfigured Ingress leaves the others served", func(t *testing.T) {
		if r := basicGet(envoy, "open.basic.example", ""); r.status != http.StatusOK {
			t.Errorf("open host beside the misconfigured ones: %s", r)
		}
	})

	// Fail closed: without the authorisation service, Envoy's ext_authz
	// answers 500 (status_on_error), never the backend. Last: it stops the
	// service.
	t.Run("without the authorisation service, nobody gets in", func(t *testing.T) {
		fm.cp.Authz.Stop()
		for _, creds := range []string{"", "foo:bar"} {
			if r := basicGet(envoy, "file.basic.example", creds); r.status != http.StatusInternalServerError || r.backend != "" {
				t.Errorf("credentials %q with the service down: %s, want 500 without the backend", creds, r)
			}
		}
		if r := basicGet(envoy, "open.basic.example", ""); r.status != http.StatusOK {
			t.Errorf("the open host with the service down: %s, want 200", r)
		}
	})
}

// basicSecret is a Secret of the default namespace with data (base64 as
// the API has it).
func basicSecret(name string, data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ndata:\n", name)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s\n", k, base64.StdEncoding.EncodeToString([]byte(data[k])))
	}
	return b.String() + "---\n"
}

// basicIngress is an Ingress of one host to alpha with ingress-nginx's
// annotations.
func basicIngress(name, host string, annotations map[string]string) string {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: default\n", name)
	if len(keys) > 0 {
		b.WriteString("  annotations:\n")
		for _, k := range keys {
			v, _ := json.Marshal(annotations[k])
			fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "spec:\n  rules:\n  - host: %s\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}\n", host)
	return b.String()
}

// basicReply is what a client got through Envoy.
type basicReply struct {
	status  int
	header  http.Header
	body    string
	backend string
	reply   echo.Reply
	err     error
}

func (r basicReply) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	return fmt.Sprintf("%d (backend %q)", r.status, r.backend)
}

// basicGet sends GET / to host with "user:password" as Basic credentials
// (none when empty).
func basicGet(envoy *framework.Envoy, host, credentials string) basicReply {
	if credentials == "" {
		return basicGetHeader(envoy, host, "")
	}
	return basicGetHeader(envoy, host, "Basic "+base64.StdEncoding.EncodeToString([]byte(credentials)))
}

// basicGetHeader sends GET / to host with the Authorization header given
// (none when empty), on a connection of its own.
func basicGetHeader(envoy *framework.Envoy, host, authorization string) basicReply {
	req, err := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
	if err != nil {
		return basicReply{err: err}
	}
	req.Host = host
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return basicReply{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := basicReply{status: resp.StatusCode, header: resp.Header, body: string(body), backend: resp.Header.Get("X-Backend")}
	if r.backend != "" {
		_ = json.Unmarshal(body, &r.reply)
	}
	return r
}
