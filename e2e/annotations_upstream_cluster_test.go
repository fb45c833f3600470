package e2e

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestUpstreamSecretInClusterMode: against a real API server, the Secret
// proxy-ssl-secret names (an Opaque one, which no TLS Secret informer
// lists) is followed by kube's watch of referenced objects, which the
// front-end's References asks for: its CA reaches the cluster sent to
// Envoy, a rotated CA replaces it, and the client certificate's key is
// never shown by the Inspector. It mirrors ingress-nginx's
// test/e2e/annotations/proxyssl.go ("should set valid proxy-ssl-secret":
// the Secret of the Ingress's namespace is read) in a cluster, where the
// Secret arrives through the API server.
func TestUpstreamSecretInClusterMode(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ca, rotated := framework.NewCA(t, "upstream-ca"), framework.NewCA(t, "rotated-ca")
	client := ca.Issue(t, "envoy-client")
	caPEM := func(c *framework.CA) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "upstream-ca", Namespace: namespace},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"ca.crt": caPEM(ca), corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM},
	}
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.CoreV1().Secrets(namespace), secret)
	create(t, kc.CoreV1().Services(namespace), service("secure", 8443))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("secure-1", "secure", 8443, ready("198.51.100.10")))
	ing := ingress("secure", nil, "secure.example.com", prefix("/", "secure"))
	ing.Annotations = map[string]string{
		"nginx.ingress.kubernetes.io/backend-protocol": "HTTPS",
		"nginx.ingress.kubernetes.io/proxy-ssl-secret": namespace + "/upstream-ca",
		"nginx.ingress.kubernetes.io/proxy-ssl-verify": "on",
	}
	create(t, kc.NetworkingV1().Ingresses(namespace), ing)

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--watch-classless")
	framework.Eventually(t, 60*time.Second, "control plane ready", cp.Ready)
	clusters := func() (string, error) {
		return cp.Grpcurl(t, []string{"-d", `{"types": ["cluster"]}`}, "ingressxds.inspect.v1.Inspector/GetSnapshot")
	}
	holds := func(c *framework.CA) func() error {
		return func() error {
			out, err := clusters()
			if err != nil {
				return err
			}
			if !strings.Contains(out, base64.StdEncoding.EncodeToString(caPEM(c))) {
				return fmt.Errorf("no cluster trusts %s yet", c.Cert.Subject.CommonName)
			}
			return nil
		}
	}
	framework.Eventually(t, convergeTimeout, "the Secret's CA in the cluster", holds(ca))
	out, err := clusters()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, translateRedacted) {
		t.Errorf("the Inspector shows no redacted client key:\n%s", out)
	}
	for _, f := range keyForms(t, client.KeyPEM) {
		if strings.Contains(out, f) {
			t.Errorf("the client certificate's key appears in the Inspector's clusters (as %q...)", f[:16])
		}
	}

	// The watch follows the Secret: a rotated CA replaces the old one.
	secret.Data["ca.crt"] = caPEM(rotated)
	if _, err := kc.CoreV1().Secrets(namespace).Update(t.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, convergeTimeout, "the rotated CA in the cluster", func() error {
		if err := holds(rotated)(); err != nil {
			return err
		}
		if holds(ca)() == nil {
			return fmt.Errorf("the old CA is still trusted")
		}
		return nil
	})
}
