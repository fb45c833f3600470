package gatewayapi

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// caKey is the ConfigMap key of a CA bundle (Gateway API's Core support).
const caKey = "ca.crt"

// clientCertDepth bounds a client's chain: Gateway API leaves it to the
// implementation, and this is BoringSSL's own default, the IR's largest.
const clientCertDepth = 100

// frontendValidation is the client-certificate validation of a Gateway's
// HTTPS listener on port (spec.tls.frontend: the perPort entry of the
// port, else the default), as the IR's policy of the handshake alone:
// AllowValidOnly (the default) fails a handshake without a certificate
// that chains to the CAs, AllowInsecureFallback asks for one and takes
// any or none. nil without validation.
//
// Each caCertificateRef is a ConfigMap's ca.crt, of the Gateway's
// namespace or of another whose ReferenceGrant opens it to Gateways. A
// ref that does not resolve is reported in err (its reason that of the
// listener's ResolvedRefs: InvalidCACertificateRef,
// InvalidCACertificateKind, RefNotPermitted); the others' CAs are used
// together. When none resolves the policy is nil and err says so: the
// listener is not accepted (NoValidCACertificate), and not served, rather
// than served without the validation asked for.
func (b *build) frontendValidation(gw *gwapiv1.Gateway, port uint32) (*ir.ClientCert, error) {
	v := frontendTLS(gw, port)
	if v == nil {
		return nil, nil
	}
	var bundle [][]byte
	var firstErr error
	for i, ref := range v.CACertificateRefs {
		ca, err := b.caBundle(gw, ref)
		if err != nil {
			if firstErr == nil {
				firstErr = refError{reason: reasonOf(err, string(gwapiv1.ListenerReasonInvalidCACertificateRef)), err: fmt.Errorf("caCertificateRefs[%d]: %w", i, err)}
			}
			continue
		}
		bundle = append(bundle, ca)
	}
	if len(bundle) == 0 {
		if firstErr == nil {
			firstErr = refError{reason: string(gwapiv1.ListenerReasonInvalidCACertificateRef), err: errors.New("caCertificateRefs: none")}
		}
		return nil, firstErr
	}
	c := &ir.ClientCert{CA: bytes.Join(bundle, []byte("\n")), Verify: ir.VerifyOn, Depth: clientCertDepth, Handshake: true}
	if v.Mode == gwapiv1.AllowInsecureFallback {
		c.Verify = ir.VerifyOptionalNoCA
	}
	// One value for equal validations, the same as the last build's
	// where nothing changed: the renderer then keeps the host's filter
	// chain as it made it.
	if same := b.made.clientCert(c); same != c {
		return same, firstErr
	}
	c = b.prev.clientCert(c)
	b.made.clientCerts = append(b.made.clientCerts, c)
	return c, firstErr
}

// frontendTLS is the validation that applies to a port: its perPort
// entry's, else the default's.
func frontendTLS(gw *gwapiv1.Gateway, port uint32) *gwapiv1.FrontendTLSValidation {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	for _, p := range f.PerPort {
		if uint32(p.Port) == port {
			return p.TLS.Validation
		}
	}
	return f.Default.Validation
}

// insecureFrontend says whether any of a Gateway's frontend validations
// allows an insecure fallback (the Gateway's
// InsecureFrontendValidationMode condition).
func insecureFrontend(gw *gwapiv1.Gateway) bool {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return false
	}
	f := gw.Spec.TLS.Frontend
	insecure := func(v *gwapiv1.FrontendTLSValidation) bool {
		return v != nil && v.Mode == gwapiv1.AllowInsecureFallback
	}
	if insecure(f.Default.Validation) {
		return true
	}
	for _, p := range f.PerPort {
		if insecure(p.TLS.Validation) {
			return true
		}
	}
	return false
}

// caBundle is the CA bundle a caCertificateRef names, checked as Envoy
// will load it.
func (b *build) caBundle(gw *gwapiv1.Gateway, ref gwapiv1.ObjectReference) ([]byte, error) {
	if ref.Group != "" || ref.Kind != "ConfigMap" {
		return nil, refError{reason: string(gwapiv1.ListenerReasonInvalidCACertificateKind),
			err: fmt.Errorf("%s %s is not a ConfigMap (the kind supported)", groupKind(ref.Group, ref.Kind), ref.Name)}
	}
	name := types.NamespacedName{Namespace: string(deref(ref.Namespace, gwapiv1.Namespace(gw.Namespace))), Name: string(ref.Name)}
	if name.Namespace != gw.Namespace && !b.granted(gwapiv1.GroupName, kindGateway, gw.Namespace, "", "ConfigMap", name) {
		return nil, refError{reason: string(gwapiv1.ListenerReasonRefNotPermitted),
			err: fmt.Errorf("ConfigMap %s is in another namespace and no ReferenceGrant there allows it", name)}
	}
	return b.configMapCA(name) // backendtls.go
}

// sameClientCert says whether two listeners validate clients alike.
func sameClientCert(a, c *ir.ClientCert) bool {
	if a == nil || c == nil {
		return a == c
	}
	return a.Verify == c.Verify && a.Depth == c.Depth && a.Handshake == c.Handshake && bytes.Equal(a.CA, c.CA)
}
