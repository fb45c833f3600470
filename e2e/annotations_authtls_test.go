package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestAuthTLS checks the auth-tls keys through a real Envoy, with real
// client certificates: each scenario mirrors one of ingress-nginx's
// test/e2e/annotations/authtls.go, and adds what that file checks only in
// nginx.conf (the TLS layer asks only that host's clients for a
// certificate, the handshake never fails for one, the headers upstream).
func TestAuthTLS(t *testing.T) {
	b := echoBackends(t, "alpha")
	serverCA := framework.NewCA(t, "authtls server CA")
	roots := serverCA.Pool()
	clientCA := newClientCA(t, "authtls client CA")
	strangerCA := newClientCA(t, "stranger CA")
	client := clientCA.issue(t, "authtls")
	stranger := strangerCA.issue(t, "authtls")
	// Signed by an intermediate of the client CA: a chain of depth 2.
	chained := clientCA.intermediate(t, "authtls intermediate").issue(t, "authtls")

	var secrets strings.Builder
	for _, host := range authTLSHosts {
		pair := serverCA.Issue(t, host, host)
		secrets.WriteString(tlsSecretYAML("authtls-"+strings.Split(host, ".")[0]+"-cert", pair.CertPEM, pair.KeyPEM))
	}
	secrets.WriteString(clientCASecretYAML("client-ca", clientCA.certPEM))
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"secrets.yaml", secrets.String()},
		manifest{"ingresses.yaml", authTLSIngressesYAML("CN=notvalid")})
	envoy := fm.envoy
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http", "http.ingress_https.rds.https/on.authtls.test")
	})
	get := func(host string, cert *tls.Certificate, headers map[string]string) mtlsResult {
		return mtlsGet(https, roots, host, cert, headers)
	}
	framework.Eventually(t, convergeTimeout, "the auth-tls hosts served", func() error {
		for _, host := range authTLSHosts {
			if host == "missing.authtls.test" {
				continue // refused: no HTTPS
			}
			if r := get(host, &client, nil); r.err != nil || r.Status == http.StatusNotFound {
				return fmt.Errorf("%s: %v %v", host, r.Response, r.err)
			}
		}
		return nil
	})

	// authtls.go "should set sslClientCertificate, sslVerifyClient and
	// sslVerifyDepth with auth-tls-secret": without a certificate 400,
	// with one 200. The handshake succeeds (nginx answers at HTTP).
	t.Run("on: 400 without a certificate, 200 with one", func(t *testing.T) {
		r := get("on.authtls.test", nil, nil)
		if r.err != nil || r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "No required SSL certificate was sent") {
			t.Errorf("without a certificate: got %v, %v; want 400 No required SSL certificate was sent", r.Response, r.err)
		}
		if !r.asked {
			t.Error("the TLS handshake did not ask for a client certificate")
		}
		if r := get("on.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusOK || r.Backend != "alpha" {
			t.Errorf("with a certificate: got %v, %v; want 200 from alpha", r.Response, r.err)
		}
	})
	// ingress-nginx sets ssl_verify_client per server: a younger Ingress
	// of the host, without any auth-tls key, is verified alike.
	t.Run("the host's settings cover its younger Ingress's paths", func(t *testing.T) {
		if r := mtlsGetPath(https, roots, "on.authtls.test", "/younger", nil, nil); r.err != nil || r.Status != http.StatusBadRequest {
			t.Errorf("without a certificate: got %v, %v; want 400", r.Response, r.err)
		}
		if r := mtlsGetPath(https, roots, "on.authtls.test", "/younger", &client, nil); r.err != nil || r.Status != http.StatusOK || r.Echo.Path != "/younger" {
			t.Errorf("with a certificate: got %v, %v; want 200 for /younger", r.Response, r.err)
		}
	})
	t.Run("on: a certificate of another CA is 400 after the handshake", func(t *testing.T) {
		r := get("on.authtls.test", &stranger, nil)
		if r.err != nil || r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "The SSL certificate error") {
			t.Errorf("got %v, %v; want 400 The SSL certificate error", r.Response, r.err)
		}
	})
	// auth-tls-verify-depth (authtls.go checks only ssl_verify_depth in
	// nginx.conf): a chain through an intermediate needs depth 2.
	t.Run("verify-depth", func(t *testing.T) {
		if r := get("on.authtls.test", &chained, nil); r.err != nil || r.Status != http.StatusBadRequest {
			t.Errorf("depth 1 (the default), a chain of 2: got %v, %v; want 400", r.Response, r.err)
		}
		if r := get("deep.authtls.test", &chained, nil); r.err != nil || r.Status != http.StatusOK {
			t.Errorf("depth 2, a chain of 2: got %v, %v; want 200", r.Response, r.err)
		}
		if r := get("deep.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusOK {
			t.Errorf("depth 2, a chain of 1: got %v, %v; want 200", r.Response, r.err)
		}
	})
	// authtls.go "should pass URL-encoded certificate to upstream", and the
	// headers the template sets for every auth-tls host.
	t.Run("the certificate and what was verified go upstream, the client's own values never", func(t *testing.T) {
		spoof := map[string]string{"ssl-client-verify": "SUCCESS", "ssl-client-subject-dn": "CN=admin", "ssl-client-cert": "forged"}
		r := get("on.authtls.test", &client, spoof)
		if r.err != nil || r.Status != http.StatusOK {
			t.Fatalf("got %v, %v", r.Response, r.err)
		}
		h := r.Echo.Header
		if got := h.Get("ssl-client-verify"); got != "SUCCESS" {
			t.Errorf("ssl-client-verify %q, want SUCCESS", got)
		}
		if got := h.Get("ssl-client-subject-dn"); got != "CN=authtls" {
			t.Errorf("ssl-client-subject-dn %q, want CN=authtls", got)
		}
		if got := h.Get("ssl-client-issuer-dn"); got != "CN=authtls client CA" {
			t.Errorf("ssl-client-issuer-dn %q, want CN=authtls client CA", got)
		}
		if got := h.Values("ssl-client-cert"); len(got) != 1 || !strings.HasPrefix(got[0], "-----BEGIN%20CERTIFICATE-----%0A") {
			t.Errorf("ssl-client-cert %q, want the URL-escaped PEM alone", got)
		}
		// off: nothing is verified, and the client's claims are dropped.
		r = get("off.authtls.test", nil, spoof)
		if r.err != nil || r.Status != http.StatusOK {
			t.Fatalf("off: got %v, %v", r.Response, r.err)
		}
		if got := r.Echo.Header.Get("ssl-client-verify"); got != "NONE" {
			t.Errorf("off: ssl-client-verify %q, want NONE", got)
		}
		for _, name := range []string{"ssl-client-subject-dn", "ssl-client-cert"} {
			if got := r.Echo.Header.Values(name); len(got) != 0 {
				t.Errorf("off: the client's %s reached the backend: %q", name, got)
			}
		}
	})
	// authtls.go "should set valid auth-tls-secret, sslVerify to off, and
	// sslVerifyDepth to 2": 200 without a certificate, none asked for.
	t.Run("off: served without a certificate, none asked for", func(t *testing.T) {
		r := get("off.authtls.test", nil, nil)
		if r.err != nil || r.Status != http.StatusOK || r.asked {
			t.Errorf("got %v, %v (asked for a certificate: %v); want 200, not asked", r.Response, r.err, r.asked)
		}
	})
	t.Run("optional: none is fine, a bad one is not", func(t *testing.T) {
		if r := get("optional.authtls.test", nil, nil); r.err != nil || r.Status != http.StatusOK || r.Echo.Header.Get("ssl-client-verify") != "NONE" {
			t.Errorf("without: got %v, %v; want 200 with ssl-client-verify NONE", r.Response, r.err)
		}
		if r := get("optional.authtls.test", &stranger, nil); r.err != nil || r.Status != http.StatusBadRequest {
			t.Errorf("another CA's: got %v, %v; want 400", r.Response, r.err)
		}
		if r := get("optional.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusOK || r.Echo.Header.Get("ssl-client-verify") != "SUCCESS" {
			t.Errorf("with: got %v, %v; want 200 with ssl-client-verify SUCCESS", r.Response, r.err)
		}
	})
	t.Run("optional_no_ca: served, the upstream told what was verified", func(t *testing.T) {
		for _, c := range []struct {
			cert   *tls.Certificate
			verify string
		}{{nil, "NONE"}, {&stranger, "FAILED"}, {&client, "SUCCESS"}} {
			if r := get("noca.authtls.test", c.cert, nil); r.err != nil || r.Status != http.StatusOK || r.Echo.Header.Get("ssl-client-verify") != c.verify {
				t.Errorf("got %v, %v (ssl-client-verify %q); want 200 with %s", r.Response, r.err, r.Echo.Header.Get("ssl-client-verify"), c.verify)
			}
		}
	})
	// authtls.go "should 302 redirect to error page instead of 400 when
	// auth-tls-error-page is set".
	t.Run("error page: 302 there instead of 400", func(t *testing.T) {
		r := get("errorpage.authtls.test", nil, nil)
		if r.err != nil || r.Status != http.StatusFound || r.Header.Get("Location") != "http://errorpage.authtls.test/error" {
			t.Errorf("got %v, %v (Location %q); want 302 to http://errorpage.authtls.test/error", r.Response, r.err, r.Header.Get("Location"))
		}
		if r := get("errorpage.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusOK {
			t.Errorf("with a certificate: got %v, %v; want 200", r.Response, r.err)
		}
	})
	// authtls.go "should return 403 using auth-tls-match-cn with no
	// matching CN from client", "... with matching CN", "... where at
	// least one of the regex options matches".
	t.Run("match-cn", func(t *testing.T) {
		if r := get("cn.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusForbidden {
			t.Errorf("CN=notvalid: got %v, %v; want 403", r.Response, r.err)
		}
		if r := get("cnmatch.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusOK {
			t.Errorf("CN=(itwillmatch|withthenextoption|authtls): got %v, %v; want 200", r.Response, r.err)
		}
		// Over plain HTTP there is no subject: nginx's server-level check
		// answers 403 before any location.
		if r, err := envoy.Get("cn.authtls.test", "/"); err != nil || r.Status != http.StatusForbidden {
			t.Errorf("plain HTTP: got %v, %v; want 403", r, err)
		}
	})
	// ingress-nginx answers 403 to the whole server; here the Ingress is
	// refused (503), never served without the check.
	t.Run("a missing Secret: the Ingress refused", func(t *testing.T) {
		if r, err := envoy.Get("missing.authtls.test", "/"); err != nil || r.Status != http.StatusServiceUnavailable {
			t.Errorf("got %v, %v; want 503", r, err)
		}
	})
	t.Run("a host without auth-tls on the same listener is untouched", func(t *testing.T) {
		r := get("plain.authtls.test", nil, map[string]string{"ssl-client-verify": "SUCCESS"})
		if r.err != nil || r.Status != http.StatusOK || r.asked {
			t.Errorf("got %v, %v (asked for a certificate: %v); want 200, not asked", r.Response, r.err, r.asked)
		}
		if got := r.Echo.Header.Get("ssl-client-verify"); got != "SUCCESS" {
			t.Errorf("the host without auth-tls changed the client's own header: %q", got)
		}
	})
	// authtls.go "should reload the nginx config when auth-tls-match-cn is
	// updated": CN=notvalid (403) becomes CN=authtls (200).
	t.Run("match-cn updated", func(t *testing.T) {
		writeManifest(t, fm.dir, "ingresses.yaml", authTLSIngressesYAML("CN=authtls"))
		framework.Eventually(t, convergeTimeout, "the new match-cn applied", func() error {
			if r := get("cn.authtls.test", &client, nil); r.err != nil || r.Status != http.StatusOK {
				return fmt.Errorf("got %v, %v; want 200", r.Response, r.err)
			}
			return nil
		})
	})
}

var authTLSHosts = []string{
	"on.authtls.test", "off.authtls.test", "optional.authtls.test", "noca.authtls.test", "errorpage.authtls.test",
	"cn.authtls.test", "cnmatch.authtls.test", "missing.authtls.test", "plain.authtls.test", "deep.authtls.test",
}

// authTLSYoungerYAML is a younger Ingress (by name, in file mode) of
// on.authtls.test without any auth-tls key: the host's settings, which its
// oldest Ingress sets, apply to its path too.
const authTLSYoungerYAML = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: authtls-younger}
spec:
  rules:
  - host: on.authtls.test
    http: {paths: [{path: /younger, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// authTLSIngressesYAML is one Ingress per host of authTLSHosts, with
// cn.authtls.test's auth-tls-match-cn set to matchCN.
func authTLSIngressesYAML(matchCN string) string {
	const secret = "nginx.ingress.kubernetes.io/auth-tls-secret: default/client-ca"
	annotations := map[string]string{
		"on":        secret + `, nginx.ingress.kubernetes.io/auth-tls-pass-certificate-to-upstream: "true"`,
		"off":       secret + `, nginx.ingress.kubernetes.io/auth-tls-verify-client: "off", nginx.ingress.kubernetes.io/auth-tls-verify-depth: "2"`,
		"deep":      secret + `, nginx.ingress.kubernetes.io/auth-tls-verify-depth: "2"`,
		"optional":  secret + `, nginx.ingress.kubernetes.io/auth-tls-verify-client: optional`,
		"noca":      secret + `, nginx.ingress.kubernetes.io/auth-tls-verify-client: optional_no_ca`,
		"errorpage": secret + `, nginx.ingress.kubernetes.io/auth-tls-error-page: "http://errorpage.authtls.test/error"`,
		"cn":        secret + `, nginx.ingress.kubernetes.io/auth-tls-match-cn: "` + matchCN + `"`,
		"cnmatch":   secret + `, nginx.ingress.kubernetes.io/auth-tls-match-cn: "CN=(itwillmatch|withthenextoption|authtls)"`,
		"missing":   "nginx.ingress.kubernetes.io/auth-tls-secret: default/no-such-secret",
		"plain":     "",
	}
	var b strings.Builder
	b.WriteString(authTLSYoungerYAML)
	for _, host := range authTLSHosts {
		name := strings.Split(host, ".")[0]
		// Named with a prefix: YAML reads a bare on or off as a boolean.
		fmt.Fprintf(&b, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: authtls-%s
  annotations: {%s}
spec:
  tls: [{hosts: [%s], secretName: authtls-%s-cert}]
  rules:
  - host: %s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`, name, annotations[name], host, name, host)
	}
	return b.String()
}

func clientCASecretYAML(name string, caPEM []byte) string {
	return fmt.Sprintf("---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ndata:\n  ca.crt: %s\n",
		name, base64.StdEncoding.EncodeToString(caPEM))
}

// clientCertSecrets is what a test of client certificates starts from: a
// server CA and a certificate of it per host, in a Secret named by
// secretName, a client CA's Secret "client-ca", and a client certificate
// that CA issued (common name what); the Secrets as one manifest.
func clientCertSecrets(t testing.TB, what string, hosts []string, secretName func(host string) string) (serverCA *framework.CA, client tls.Certificate, manifest string) {
	t.Helper()
	serverCA = framework.NewCA(t, what+" server CA")
	clientCA := newClientCA(t, what+" client CA")
	client = clientCA.issue(t, what)
	var secrets strings.Builder
	for _, host := range hosts {
		pair := serverCA.Issue(t, host, host)
		secrets.WriteString(tlsSecretYAML(secretName(host), pair.CertPEM, pair.KeyPEM))
	}
	secrets.WriteString(clientCASecretYAML("client-ca", clientCA.certPEM))
	return serverCA, client, secrets.String()
}

// clientCA issues client certificates (ExtKeyUsageClientAuth, which the
// framework's server certificates lack).
type clientCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	parent  *clientCA // nil for a root
}

func newClientCA(t testing.TB, name string) *clientCA {
	return newClientCAUnder(t, name, nil)
}

// intermediate is a CA signed by ca, whose certificates chain through it.
func (ca *clientCA) intermediate(t testing.TB, name string) *clientCA {
	return newClientCAUnder(t, name, ca)
}

// newClientCAUnder makes a CA signed by parent, or self-signed when nil.
func newClientCAUnder(t testing.TB, name string, parent *clientCA) *clientCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, key.Public(), signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &clientCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), parent: parent}
}

func (ca *clientCA) issue(t testing.TB, commonName string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: commonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	chain := [][]byte{der}
	for c := ca; c.parent != nil; c = c.parent {
		chain = append(chain, c.cert.Raw) // the intermediates, as a client sends them
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key}
}

// mtlsResult is a response over HTTPS, and whether the server asked for a
// client certificate.
type mtlsResult struct {
	framework.Response
	asked bool
	err   error
}

// mtlsGet sends GET / to host over HTTPS on a new connection, presenting
// cert (none when nil) if the server asks for one.
func mtlsGet(address string, roots *x509.CertPool, host string, cert *tls.Certificate, headers map[string]string) mtlsResult {
	return mtlsGetPath(address, roots, host, "/", cert, headers)
}

// mtlsGetPath is mtlsGet for another path.
func mtlsGetPath(address string, roots *x509.CertPool, host, path string, cert *tls.Certificate, headers map[string]string) mtlsResult {
	var out mtlsResult
	cfg := &tls.Config{ServerName: host, RootCAs: roots, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			out.asked = true
			if cert == nil {
				return &tls.Certificate{}, nil
			}
			return cert, nil
		}}
	client := &http.Client{
		Timeout:       5 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSClientConfig: cfg},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequest(http.MethodGet, "https://"+address+path, nil)
	if err != nil {
		out.err = err
		return out
	}
	req.Host = host
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		out.err = err
		return out
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		out.err = err
		return out
	}
	out.Response = framework.Response{Status: resp.StatusCode, Backend: resp.Header.Get("X-Backend"), Body: string(body), Header: resp.Header}
	if out.Backend != "" {
		out.err = json.Unmarshal(body, &out.Echo)
	}
	return out
}

// BenchmarkClientCert is the cost of client certificate verification at
// the data plane (docs/benchmarks.md): GET / through a host with
// auth-tls-secret ("on", auth-tls-match-cn, the certificate passed
// upstream) and through a host without, the same client certificate
// presented to both (only the first asks for it), on one kept-alive
// connection (requests) and on a new connection each time (handshakes),
// rounds taking turns on one Envoy.
func BenchmarkClientCert(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	backend := framework.StartBackend(b, "alpha")
	serverCA, client, secrets := clientCertSecrets(b, "authtls", authTLSHosts, func(host string) string {
		return "authtls-" + strings.Split(host, ".")[0] + "-cert"
	})
	dir := b.TempDir()
	for name, content := range map[string]string{
		"services.yaml": echoServicesYAML(backend),
		"secrets.yaml":  secrets,
		// on.authtls.test with a subject check too: every check at once.
		"ingresses.yaml": strings.Replace(authTLSIngressesYAML("CN=authtls"), "auth-tls-pass-certificate-to-upstream", "auth-tls-match-cn: \"CN=authtls\", nginx.ingress.kubernetes.io/auth-tls-pass-certificate-to-upstream", 1),
	} {
		writeManifest(b, dir, name, content)
	}
	cp := framework.StartControlPlane(b, "--manifests", dir)
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	clients := map[bool]map[string]*http.Client{}
	for _, keepAlive := range []bool{true, false} {
		clients[keepAlive] = map[string]*http.Client{}
		for _, host := range []string{"on.authtls.test", "plain.authtls.test"} {
			cfg := &tls.Config{ServerName: host, RootCAs: serverCA.Pool(), Certificates: []tls.Certificate{client}, MinVersion: tls.VersionTLS12}
			clients[keepAlive][host] = &http.Client{Transport: &http.Transport{Proxy: nil, TLSClientConfig: cfg, DisableKeepAlives: !keepAlive}}
		}
	}
	get := func(c *http.Client, host string) error {
		_, err := benchGet(c, "https://"+envoy.HTTPSAddress+"/", host, nil, http.StatusOK, "alpha")
		return err
	}
	framework.Eventually(b, convergeTimeout, "both hosts served", func() error {
		if err := get(clients[true]["on.authtls.test"], "on.authtls.test"); err != nil {
			return err
		}
		return get(clients[true]["plain.authtls.test"], "plain.authtls.test")
	})
	// "request": a kept-alive connection; "handshake": a new one each time.
	benchRounds(b, []string{"request/plain", "request/on", "handshake/plain", "handshake/on"}, func(name string) error {
		kind, host, _ := strings.Cut(name, "/")
		host += ".authtls.test"
		return get(clients[kind == "request"][host], host)
	})
}
