package ingress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

type certResult struct {
	cert *ir.Certificate // nil when the Secret is unusable
	err  error
}

// addTLS applies the local checks to spec.tls and records what is asked.
func (f *fragmentBuilder) addTLS() {
	for i, t := range f.ing.Spec.TLS {
		where := fmt.Sprintf("spec.tls[%d]", i)
		if len(t.Hosts) == 0 {
			f.problem("InvalidTLS", "%s: no hosts listed: entry ignored (list the hosts the certificate serves)", where)
			continue
		}
		if t.SecretName == "" {
			f.problem("InvalidTLS", "%s: no secretName: hosts %s served over HTTP only", where, strings.Join(t.Hosts, ", "))
			continue
		}
		if errs := validation.IsDNS1123Subdomain(t.SecretName); len(errs) > 0 {
			f.problem("InvalidTLS", "%s: %q is not a valid Secret name (only Secrets of the Ingress's own namespace can be used): hosts served over HTTP only", where, t.SecretName)
			continue
		}
		req := tlsRequest{where: where, secret: types.NamespacedName{Namespace: f.ing.Namespace, Name: t.SecretName}}
		for j, host := range t.Hosts {
			host, ok := f.normalizeHost(host, fmt.Sprintf("%s.hosts[%d]", where, j))
			if ok && host != ir.WildcardHost {
				req.hosts = append(req.hosts, host)
			}
		}
		f.frag.tls = append(f.frag.tls, req)
	}
}

// checkCertificate validates a TLS Secret.
func checkCertificate(name types.NamespacedName, secret *corev1.Secret) certResult {
	// The State also holds Secrets of other types that annotations name:
	// spec.tls takes only TLS Secrets, as the API server's type implies.
	if secret == nil || secret.Type != corev1.SecretTypeTLS {
		return certResult{err: fmt.Errorf("secret %s not found (or not of type kubernetes.io/tls)", name)}
	}
	cert, err := validateKeyPair(secret)
	if err != nil {
		return certResult{err: fmt.Errorf("secret %s: %w", name, err)}
	}
	cert.Name = name.Namespace + "/" + name.Name
	cert.Secret = name
	return certResult{cert: cert}
}

// validateKeyPair accepts exactly what Envoy will load: a PEM chain whose
// leaf matches a PEM key of a type and size BoringSSL serves with.
func validateKeyPair(s *corev1.Secret) (*ir.Certificate, error) {
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
