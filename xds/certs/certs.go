// Package certs makes the certificates of xDS over mutual TLS: a CA of its
// own, a server certificate for the control plane and a client certificate
// for the Envoys, and writes them as files or as Kubernetes Secrets laid out
// the same way (tls.crt, tls.key and ca.crt), so that `serve` and
// `bootstrap` take the same paths whichever way they were made.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// The names of the three files (and Secret keys) of a key pair, as in a
// kubernetes.io/tls Secret that carries its CA.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// KeyPair is a PEM certificate, its PEM private key, and the PEM certificate
// of the CA that the holder trusts to have issued its peer's certificate.
type KeyPair struct {
	Cert, Key, CA []byte
}

// Bundle is what Generate makes: one CA, and the two ends it certifies.
type Bundle struct {
	// CA is the PEM certificate of the CA. Its private key is not kept:
	// nothing more is ever signed with it, so rotating means generating a
	// new bundle.
	CA     []byte
	Server KeyPair // for `serve`: its certificate, and the CA of its clients
	Client KeyPair // for Envoy: its certificate, and the CA of the server
}

// Options shape the certificates.
type Options struct {
	// ServerHosts are the DNS names and IP addresses the server
	// certificate is valid for: every name Envoys dial the control plane
	// by. At least one.
	ServerHosts []string
	// ClientName is the common name of the client certificate.
	ClientName string
	// Validity is how long the certificates are valid, from now.
	Validity time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Generate makes a new CA and issues the server and client certificates
// with it, each on a new ECDSA P-256 key.
func Generate(o Options) (*Bundle, error) {
	if len(o.ServerHosts) == 0 {
		return nil, errors.New("the server certificate needs at least one host name or address")
	}
	if o.Validity <= 0 {
		return nil, fmt.Errorf("validity %s is not positive", o.Validity)
	}
	if o.ClientName == "" {
		o.ClientName = "ingress-xds-envoy"
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	// A little backdating absorbs clock skew between the machine that
	// generates and those that verify.
	notBefore := now().Add(-5 * time.Minute)
	notAfter := now().Add(o.Validity)

	caKey, err := newKey()
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "ingress-xds xDS CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// The CA signs leaves only, never another CA.
		MaxPathLenZero: true,
	}
	caDER, caCert, err := sign(caTmpl, nil, caKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the CA: %w", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	serverTmpl := leaf("ingress-xds", notBefore, notAfter, x509.ExtKeyUsageServerAuth)
	for _, h := range o.ServerHosts {
		if ip := net.ParseIP(h); ip != nil {
			serverTmpl.IPAddresses = append(serverTmpl.IPAddresses, ip)
		} else {
			serverTmpl.DNSNames = append(serverTmpl.DNSNames, h)
		}
	}
	server, err := issue(serverTmpl, caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("issuing the server certificate: %w", err)
	}
	client, err := issue(leaf(o.ClientName, notBefore, notAfter, x509.ExtKeyUsageClientAuth), caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("issuing the client certificate: %w", err)
	}
	server.CA, client.CA = caPEM, caPEM
	return &Bundle{CA: caPEM, Server: server, Client: client}, nil
}

// leaf is the template of an end-entity certificate for one use: a server
// certificate cannot stand in for a client, nor the reverse.
func leaf(cn string, notBefore, notAfter time.Time, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
}

func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (KeyPair, error) {
	key, err := newKey()
	if err != nil {
		return KeyPair{}, err
	}
	der, _, err := sign(tmpl, ca, key, caKey)
	if err != nil {
		return KeyPair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("encoding the private key: %w", err)
	}
	return KeyPair{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// sign signs tmpl, for key, with signer; a nil parent self-signs.
func sign(tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("drawing a serial number: %w", err)
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1)) // never zero
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return der, cert, nil
}

func newKey() (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating a key: %w", err)
	}
	return key, nil
}
