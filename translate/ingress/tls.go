package ingress

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/translate/certificates"
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
	cert, err := certificates.FromSecret(name, secret)
	return certResult{cert: cert, err: err}
}

// validateKeyPair is certificates.KeyPair, for a client certificate.
func validateKeyPair(s *corev1.Secret) (*ir.Certificate, error) { return certificates.KeyPair(s) }
