package translate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

type tlsHost struct {
	cert    string // Certificate name
	ingress types.NamespacedName
}

type certResult struct {
	cert *Certificate // nil when the Secret is unusable
	err  error
}

// addTLS records, for each host of each spec.tls entry, the certificate that
// serves it. A host whose Secret is missing or invalid gets no HTTPS at all
// (never a broken chain) and keeps being served over plain HTTP.
func (b *builder) addTLS(ing *networkingv1.Ingress) {
	ingName := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
	for i, t := range ing.Spec.TLS {
		where := fmt.Sprintf("spec.tls[%d]", i)
		if len(t.Hosts) == 0 {
			b.problem(ing, "InvalidTLS", "%s: no hosts listed: entry ignored (list the hosts the certificate serves)", where)
			continue
		}
		if t.SecretName == "" {
			b.problem(ing, "InvalidTLS", "%s: no secretName: hosts %s served over HTTP only", where, strings.Join(t.Hosts, ", "))
			continue
		}
		if errs := validation.IsDNS1123Subdomain(t.SecretName); len(errs) > 0 {
			b.problem(ing, "InvalidTLS", "%s: %q is not a valid Secret name: hosts served over HTTP only", where, t.SecretName)
			continue
		}
		secretName := types.NamespacedName{Namespace: ing.Namespace, Name: t.SecretName}
		res := b.certificate(secretName)
		if res.err != nil {
			b.problem(ing, "InvalidTLSSecret", "%s: %v: hosts %s served over HTTP only", where, res.err, strings.Join(t.Hosts, ", "))
			continue
		}
		for j, host := range t.Hosts {
			host, ok := b.normalizeHost(ing, host, fmt.Sprintf("%s.hosts[%d]", where, j))
			if !ok || host == WildcardHost {
				continue
			}
			if prev, taken := b.tls[host]; taken {
				if prev.cert != res.cert.Name {
					b.problem(ing, "TLSConflict", "%s: host %q already has the certificate %s from the older Ingress %s: ignored", where, host, prev.cert, prev.ingress)
				}
				continue
			}
			b.tls[host] = tlsHost{cert: res.cert.Name, ingress: ingName}
		}
	}
}

// certificate validates a TLS Secret once per build.
func (b *builder) certificate(name types.NamespacedName) certResult {
	if res, ok := b.certs[name]; ok {
		return res
	}
	res := certResult{}
	secret := b.state.Secrets[name]
	if secret == nil {
		res.err = fmt.Errorf("secret %s not found (or not of type kubernetes.io/tls)", name)
	} else if cert, err := validateKeyPair(secret); err != nil {
		res.err = fmt.Errorf("secret %s: %w", name, err)
	} else {
		cert.Name = name.Namespace + "/" + name.Name
		cert.Secret = name
		res.cert = cert
	}
	b.certs[name] = res
	return res
}

// validateKeyPair accepts exactly what Envoy will load: a PEM chain whose
// leaf matches a PEM key of a type and size BoringSSL serves with.
func validateKeyPair(s *corev1.Secret) (*Certificate, error) {
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
	return &Certificate{Chain: chain, Key: key}, nil
}
