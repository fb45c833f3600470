// Package certificates checks TLS Secrets for the front-ends (Ingress,
// Gateway API): whether Envoy can serve a key pair is the same question
// whichever object names the Secret.
package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// FromSecret validates a TLS Secret and returns its certificate, named
// namespace/name; the error says why it cannot be served.
func FromSecret(name types.NamespacedName, secret *corev1.Secret) (*ir.Certificate, error) {
	// The State also holds Secrets of other types that annotations name:
	// a certificate reference takes only TLS Secrets, as the API server's
	// type implies.
	if secret == nil || secret.Type != corev1.SecretTypeTLS {
		return nil, fmt.Errorf("secret %s not found (or not of type kubernetes.io/tls)", name)
	}
	cert, err := KeyPair(secret)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	cert.Name = name.Namespace + "/" + name.Name
	cert.Secret = name
	return cert, nil
}

// KeyPair accepts exactly what Envoy will load: a PEM chain whose
// leaf matches a PEM key of a type and size BoringSSL serves with.
func KeyPair(s *corev1.Secret) (*ir.Certificate, error) {
	chain, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if len(chain) == 0 {
		return nil, fmt.Errorf("missing %s", corev1.TLSCertKey)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("missing %s", corev1.TLSPrivateKeyKey)
	}
	pair, err := tls.X509KeyPair(chain, key)
	if err != nil {
		return nil, fmt.Errorf("certificate and key do not load: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("certificate does not parse: %w", err)
	}
	switch pub := leaf.PublicKey.(type) {
	case *rsa.PublicKey:
		if bits := pub.N.BitLen(); bits < 2048 || bits > 8192 {
			return nil, fmt.Errorf("RSA key of %d bits: Envoy accepts 2048 to 8192", bits)
		}
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return nil, fmt.Errorf("ECDSA curve %s is not supported by Envoy", pub.Curve.Params().Name)
		}
	default:
		return nil, fmt.Errorf("key type %T is not supported by Envoy (use RSA or ECDSA)", pub)
	}
	return &ir.Certificate{Chain: chain, Key: key}, nil
}
