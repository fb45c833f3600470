package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func generate(t *testing.T, hosts ...string) *Bundle {
	t.Helper()
	b, err := Generate(Options{ServerHosts: hosts, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parse(t *testing.T, what string, pemBytes []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s is not a PEM certificate", what)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c
}

// Each certificate does its one job: the server's is valid for its names
// and addresses as a server only, the client's as a client only, both
// chain to the bundle's CA and to no other, and each key matches its
// certificate.
func TestGenerate(t *testing.T) {
	b := generate(t, "ingress-xds.ns.svc", "127.0.0.1", "::1")
	ca := parse(t, "CA", b.CA)
	if !ca.IsCA || !ca.MaxPathLenZero {
		t.Errorf("CA: IsCA %v, MaxPathLenZero %v", ca.IsCA, ca.MaxPathLenZero)
	}
	if string(b.Server.CA) != string(b.CA) || string(b.Client.CA) != string(b.CA) {
		t.Error("each end must carry the bundle's CA")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	server, client := parse(t, "server", b.Server.Cert), parse(t, "client", b.Client.Cert)

	verify := func(c *x509.Certificate, name string, usage x509.ExtKeyUsage) error {
		_, err := c.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, host := range []string{"ingress-xds.ns.svc", "127.0.0.1", "::1"} {
		if err := verify(server, host, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("server certificate for %s: %v", host, err)
		}
	}
	if err := verify(server, "other.ns.svc", x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("server certificate valid for a name it was not given")
	}
	if err := verify(server, "", x509.ExtKeyUsageClientAuth); err == nil {
		t.Error("server certificate usable as a client certificate")
	}
	if err := verify(client, "", x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if err := verify(client, "", x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("client certificate usable as a server certificate")
	}
	other := x509.NewCertPool()
	other.AddCert(parse(t, "other CA", generate(t, "x").CA))
	if _, err := client.Verify(x509.VerifyOptions{Roots: other, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("client certificate verified by another bundle's CA")
	}
	for name, pair := range map[string]KeyPair{"server": b.Server, "client": b.Client} {
		if _, err := tls.X509KeyPair(pair.Cert, pair.Key); err != nil {
			t.Errorf("%s key does not match its certificate: %v", name, err)
		}
	}
	if !server.NotAfter.Before(time.Now().Add(time.Hour+time.Minute)) || !server.NotAfter.After(time.Now().Add(59*time.Minute)) {
		t.Errorf("server certificate valid until %s, want an hour from now", server.NotAfter)
	}
}

func TestGenerateRefusesNonsense(t *testing.T) {
	if _, err := Generate(Options{Validity: time.Hour}); err == nil {
		t.Error("a server certificate for no host")
	}
	if _, err := Generate(Options{ServerHosts: []string{"x"}}); err == nil {
		t.Error("certificates valid for no time")
	}
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "xds")
	b := generate(t, "localhost")
	if err := WriteFiles(dir, b, false); err != nil {
		t.Fatal(err)
	}
	for _, end := range []struct {
		sub  string
		pair KeyPair
	}{{ServerDir, b.Server}, {ClientDir, b.Client}} {
		for name, want := range map[string][]byte{CertFile: end.pair.Cert, KeyFile: end.pair.Key, CAFile: end.pair.CA} {
			path := filepath.Join(dir, end.sub, name)
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: %v, or not what was generated", path, err)
			}
		}
		info, err := os.Stat(filepath.Join(dir, end.sub, KeyFile))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s key: mode %v (%v), want 0600", end.sub, info.Mode().Perm(), err)
		}
	}
	if err := WriteFiles(dir, generate(t, "localhost"), false); err == nil || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("writing over existing certificates without overwrite: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ServerDir, CertFile)); string(got) != string(b.Server.Cert) {
		t.Error("a refused write changed the files")
	}
	next := generate(t, "localhost")
	if err := WriteFiles(dir, next, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ClientDir, KeyFile)); string(got) != string(next.Client.Key) {
		t.Error("overwrite did not replace the client key")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*", ".*")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestWriteSecrets(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	names := SecretNames{Namespace: "ingress-xds", Server: DefaultServerSecret, Client: DefaultClientSecret}
	b := generate(t, "localhost")
	if err := WriteSecrets(ctx, client, names, b, false); err != nil {
		t.Fatal(err)
	}
	get := func(name string) *corev1.Secret {
		s, err := client.CoreV1().Secrets("ingress-xds").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	server := get(DefaultServerSecret)
	if server.Type != corev1.SecretTypeTLS || string(server.Data["tls.crt"]) != string(b.Server.Cert) ||
		string(server.Data["tls.key"]) != string(b.Server.Key) || string(server.Data["ca.crt"]) != string(b.CA) {
		t.Errorf("server Secret: type %s, data not the server's pair and CA", server.Type)
	}
	if c := get(DefaultClientSecret); string(c.Data["tls.key"]) != string(b.Client.Key) {
		t.Error("client Secret does not hold the client key")
	}

	next := generate(t, "localhost")
	if err := WriteSecrets(ctx, client, names, next, false); err == nil || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("replacing Secrets without overwrite: %v", err)
	}
	if err := WriteSecrets(ctx, client, names, next, true); err != nil {
		t.Fatal(err)
	}
	if s := get(DefaultServerSecret); string(s.Data["tls.crt"]) != string(next.Server.Cert) {
		t.Error("overwrite did not replace the server certificate")
	}

	// A Secret of another type under our name is someone else's.
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "ingress-xds"}, Type: corev1.SecretTypeOpaque}
	if _, err := client.CoreV1().Secrets("ingress-xds").Create(ctx, opaque, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	names.Server = "taken"
	if err := WriteSecrets(ctx, client, names, next, true); err == nil || !strings.Contains(err.Error(), "type Opaque") {
		t.Errorf("overwriting an Opaque Secret: %v", err)
	}
}
