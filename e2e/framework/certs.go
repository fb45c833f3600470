package framework

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// CA is a certificate authority made for one test, so that clients can
// verify what Envoy serves exactly as a browser would. It is the one maker
// of TLS certificates for every test of the repository (the e2e suites,
// the kind suite, deploy/, xds/ and translate/): this package imports
// nothing of the product, so that any package's tests can use it without
// an import cycle (TestFrameworkImportsNoProductPackage keeps it so).
// ingress-xds certgen's certificates for xDS are the product's own
// (xds/certs); CertGen runs that command.
type CA struct {
	Cert *x509.Certificate
	key  crypto.Signer
}

// KeyPair is a PEM certificate and its PEM private key: the tls.crt and
// tls.key of a kubernetes.io/tls Secret.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
	// Cert is the parsed certificate, to compare with what a server sent.
	Cert *x509.Certificate
}

// NewCA creates a self-signed CA called name (ECDSA P-256).
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newECDSAKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatalf("creating CA %s: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key}
}

// Pool returns a pool that trusts only this CA.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// Issue returns a server certificate for dnsNames (which may hold a
// *.wildcard), with commonName as its subject, on a new ECDSA P-256 key.
func (ca *CA) Issue(t testing.TB, commonName string, dnsNames ...string) KeyPair {
	t.Helper()
	return ca.IssueWithKey(t, newECDSAKey(t), commonName, dnsNames...)
}

// IssueWithKey is Issue with a key of the caller's choosing (for instance
// an RSA key too short for Envoy).
func (ca *CA) IssueWithKey(t testing.TB, key crypto.Signer, commonName string, dnsNames ...string) KeyPair {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(t),
		Subject:      pkix.Name{CommonName: commonName},
		DNSNames:     dnsNames,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		t.Fatalf("issuing a certificate for %v: %v", dnsNames, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("encoding the key: %v", err)
	}
	return KeyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Cert:    cert,
	}
}

// NewRSAKey returns a new RSA key of bits bits, for IssueWithKey: tests of
// bad input use one shorter than Envoy accepts (1024).
func NewRSAKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatalf("generating an RSA key of %d bits: %v", bits, err)
	}
	return key
}

func newECDSAKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generating a key: %v", err)
	}
	return key
}

func randomSerial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n.Add(n, big.NewInt(1))
}
