package e2e

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestPrivateKeysNeverShown runs the control plane against a real API
// server with TLS Secrets in use (one served by Envoy, others broken so
// that their problems are logged and recorded as Events), and looks for
// their private keys everywhere the control plane speaks: its log at debug
// level, the Events, the Inspector and CSDS through the real grpcurl, and
// `translate -f` on the same objects. None may hold a trace of a key.
func TestPrivateKeysNeverShown(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()
	const ns = "keys"

	ca := framework.NewCA(t, "leak test CA")
	served := ca.Issue(t, "served", "served.example.com")
	mismatched := ca.Issue(t, "mismatched", "mismatched.example.com")
	stranger := ca.Issue(t, "stranger", "stranger.example.com")
	opaque := ca.Issue(t, "opaque", "opaque.example.com")
	secrets := []*corev1.Secret{
		tlsSecret(ns, "served", served.CertPEM, served.KeyPEM),
		// A key that is not the certificate's: the problem report must
		// not quote it.
		tlsSecret(ns, "mismatched", mismatched.CertPEM, stranger.KeyPEM),
		// Key material in a Secret of another type, which we never read.
		{ObjectMeta: metav1.ObjectMeta{Name: "opaque", Namespace: ns}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"tls.crt": opaque.CertPEM, "tls.key": opaque.KeyPEM}},
	}
	keys := map[string][]byte{"served": served.KeyPEM, "stranger": stranger.KeyPEM, "opaque": opaque.KeyPEM}

	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for _, s := range secrets {
		create(t, kc.CoreV1().Secrets(ns), s)
	}
	svc := service("web", 8080)
	svc.Namespace = ns
	create(t, kc.CoreV1().Services(ns), svc)
	slice := endpointSlice("web-1", "web", 8080, ready("198.51.100.10"))
	slice.Namespace = ns
	create(t, kc.DiscoveryV1().EndpointSlices(ns), slice)
	for _, name := range []string{"served", "mismatched", "opaque"} {
		create(t, kc.NetworkingV1().Ingresses(ns), tlsIngress(ns, name, name+".example.com", name))
	}

	xdsCerts := framework.CertGen(t)
	cp := framework.StartSecureControlPlane(t, xdsCerts, "--kubeconfig", api.Kubeconfig, "--watch-classless", "--status-address", "203.0.113.9")
	framework.Eventually(t, 60*time.Second, "control plane ready", cp.Ready)
	envoy := framework.StartEnvoy(t, cp)
	// The served key is in use: Envoy got it over SDS and handshakes with it.
	framework.Eventually(t, convergeTimeout, "envoy serves the certificate of the Secret", func() error {
		cert, err := framework.Handshake(envoy.HTTPSAddress, "served.example.com")
		if err != nil {
			return err
		}
		if !cert.Equal(served.Cert) {
			return fmt.Errorf("served %s", cert.Subject)
		}
		return nil
	})
	// The broken ones are reported, in Events (and the log).
	for _, name := range []string{"mismatched", "opaque"} {
		framework.Eventually(t, convergeTimeout, "a Warning Event on "+name, func() error {
			events, err := ingressEventsIn(ctx, kc, ns, name)
			if err == nil && len(events) == 0 {
				err = fmt.Errorf("no event yet")
			}
			return err
		})
	}

	outputs := map[string]string{"the control plane's log": cp.Output()}
	events, err := kc.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	outputs["the Events"] = string(raw)
	for name, call := range map[string][]string{
		"Inspector GetSnapshot": {"ingressxds.inspect.v1.Inspector/GetSnapshot"},
		"Inspector secrets":     {"-d", `{"types": ["secret"]}`, "ingressxds.inspect.v1.Inspector/GetSnapshot"},
		"CSDS":                  {"envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus"},
	} {
		out, err := cp.Grpcurl(t, call[:len(call)-1], call[len(call)-1])
		if err != nil {
			t.Fatal(err)
		}
		outputs["grpcurl "+name] = out
	}
	if got := outputs["grpcurl Inspector secrets"]; !strings.Contains(got, `"keys/served"`) || !strings.Contains(got, translateRedacted) {
		t.Errorf("the Inspector does not show the served Secret with its key redacted:\n%s", got)
	}

	// translate -f on the same objects, as files.
	dir := t.TempDir()
	var manifests strings.Builder
	for _, s := range secrets {
		manifests.WriteString(secretYAML(t, s))
	}
	writeManifest(t, dir, "secrets.yaml", manifests.String())
	writeManifest(t, dir, "ingresses.yaml", strings.ReplaceAll(servedIngressesYAML(), "NS", ns))
	cmd := exec.Command(framework.IngressXDS(t), "translate", "-f", dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("translate -f: %v\n%s", err, out)
	}
	outputs["translate -f"] = string(out)
	if !strings.Contains(string(out), "served.example.com") || !strings.Contains(string(out), translateRedacted) {
		t.Errorf("translate -f does not show the served Secret with its key redacted:\n%s", out)
	}

	for keyName, key := range keys {
		forms := keyForms(t, key)
		// The forms are found where the key is: a search that could not
		// find a key proves nothing.
		if !strings.Contains(manifests.String(), forms[len(forms)-1]) || !strings.Contains(string(key), forms[0]) {
			t.Fatalf("the forms of key %s are not found in the key itself", keyName)
		}
		for where, text := range outputs {
			for _, f := range forms {
				if strings.Contains(text, f) {
					t.Errorf("the private key of %s appears in %s (as %q...)", keyName, where, f[:16])
				}
			}
		}
	}
	t.Logf("searched %d outputs (%d bytes of log, %d Events) for %d keys", len(outputs), len(outputs["the control plane's log"]), len(events.Items), len(keys))
}

// translateRedacted is what translate and the Inspector show instead of a
// private key.
const translateRedacted = "[redacted]"

// keyForms returns the ways a private key could be written out: each line
// of its PEM body, its DER in hex, and a stretch of the base64 of the whole
// PEM (as Secret data in JSON or YAML), which comes last.
func keyForms(t *testing.T, keyPEM []byte) []string {
	t.Helper()
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		t.Fatal("not a PEM key")
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		t.Fatalf("not a PKCS#8 key: %v", err)
	}
	var forms []string
	for _, line := range strings.Split(string(keyPEM), "\n") {
		if line != "" && !strings.HasPrefix(line, "-----") {
			forms = append(forms, line)
		}
	}
	der := hex.EncodeToString(block.Bytes)
	forms = append(forms, der[len(der)/2-32:len(der)/2+32])
	b64 := base64.StdEncoding.EncodeToString(keyPEM)
	// Past the header, which every PKCS#8 key shares, in whole 4-byte
	// groups so that it matches however the rest is split.
	return append(forms, b64[48:len(b64)-48])
}

func tlsSecret(ns, name string, certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
}

func tlsIngress(ns, name, host, secret string) *networkingv1.Ingress {
	ing := ingress(name, nil, host, prefix("/", "web"))
	ing.Namespace = ns
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: secret}}
	return ing
}

// servedIngressesYAML is what the test creates in the API server, as
// manifests for translate (NS stands for the namespace).
func servedIngressesYAML() string {
	var b strings.Builder
	fmt.Fprint(&b, `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec: {ports: [{port: 80, targetPort: 8080}]}
`)
	for _, name := range []string{"served", "mismatched", "opaque"} {
		fmt.Fprintf(&b, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s, namespace: NS}
spec:
  tls: [{hosts: [%[1]s.example.com], secretName: %[1]s}]
  rules:
  - host: %[1]s.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`, name)
	}
	return b.String()
}

// secretYAML writes a Secret as a manifest, its data base64-encoded.
func secretYAML(t *testing.T, s *corev1.Secret) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: %s\ndata:\n", s.Name, s.Namespace, s.Type)
	for k, v := range s.Data {
		fmt.Fprintf(&b, "  %s: %s\n", k, base64.StdEncoding.EncodeToString(v))
	}
	return b.String()
}

// ingressEventsIn lists the Events about the Ingress ns/name.
func ingressEventsIn(ctx context.Context, kc kubernetes.Interface, ns, name string) ([]corev1.Event, error) {
	list, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Ingress", "involvedObject.name": name}.String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// TestNamespaceIsolation checks through Envoy that an Ingress uses only the
// Services and Secrets of its own namespace: the same Ingress in the
// namespace that has them is served over HTTPS from the backend, while in
// another namespace it gets 503 and no certificate, even though the
// certificate covers its host and the Service's backend is up.
func TestNamespaceIsolation(t *testing.T) {
	tea := echoBackends(t, "tea")[0]
	ca := framework.NewCA(t, "namespaces CA")
	pair := ca.Issue(t, "both", "home.example.com", "away.example.com")

	inOther := func(yaml string) string { return strings.ReplaceAll(yaml, "namespace: default", "namespace: other") }
	ingressYAML := func(name, ns, host string) string {
		return fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: %s}
spec:
  tls: [{hosts: [%[3]s], secretName: cert}]
  rules:
  - host: %[3]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: tea, port: {number: 80}}}}]}
`, name, ns, host)
	}
	envoy := startFileMode(t, nil,
		manifest{"other.yaml", inOther(echoServicesYAML(tea) + tlsSecretYAML("cert", pair.CertPEM, pair.KeyPEM))},
		manifest{"ingresses.yaml", ingressYAML("home", "other", "home.example.com") + ingressYAML("away", "default", "away.example.com")},
	).envoy

	framework.Eventually(t, convergeTimeout, "the Ingress of the Service's namespace served over HTTPS", func() error {
		return framework.ExpectTLS(envoy.HTTPSAddress, "home.example.com", ca.Pool(), "home.example.com", "/", http.StatusOK, "tea")
	})
	before := tea.Requests()
	if err := envoy.Expect("away.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
		t.Errorf("an Ingress reached a Service of another namespace: %v", err)
	}
	if cert, err := framework.Handshake(envoy.HTTPSAddress, "away.example.com"); err == nil {
		t.Errorf("an Ingress got the certificate of a Secret of another namespace: %s", describe(cert))
	}
	if n := tea.Requests() - before; n != 0 {
		t.Errorf("the backend of another namespace answered %d requests for away.example.com", n)
	}
	assertNothingRejected(t, envoy)
}
