package certs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Default names of the Secrets that deploy/ mounts: the server's into the
// control plane, the client's into the Envoy DaemonSet.
const (
	DefaultServerSecret = "xds-server-tls"
	DefaultClientSecret = "xds-client-tls"
)

// SecretNames say where WriteSecrets puts the bundle.
type SecretNames struct {
	Namespace      string
	Server, Client string
}

// WriteSecrets stores the bundle as two kubernetes.io/tls Secrets holding
// tls.crt, tls.key and ca.crt. Existing Secrets are replaced only with
// overwrite. It needs create, and with overwrite get and update, on Secrets
// in the namespace, and nothing else: it runs with the rights of whoever
// runs certgen, never with the control plane's.
func WriteSecrets(ctx context.Context, client kubernetes.Interface, names SecretNames, b *Bundle, overwrite bool) error {
	for _, s := range []struct {
		name string
		pair KeyPair
	}{{names.Server, b.Server}, {names.Client, b.Client}} {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:      s.name,
				Namespace: names.Namespace,
				Labels:    map[string]string{"app.kubernetes.io/part-of": "ingress-xds", "app.kubernetes.io/managed-by": "ingress-xds-certgen"},
			},
			Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{
				corev1.TLSCertKey:       s.pair.Cert,
				corev1.TLSPrivateKeyKey: s.pair.Key,
				CAFile:                  s.pair.CA,
			},
		}
		if err := writeSecret(ctx, client, secret, overwrite); err != nil {
			return fmt.Errorf("secret %s/%s: %w", names.Namespace, s.name, err)
		}
	}
	return nil
}

func writeSecret(ctx context.Context, client kubernetes.Interface, secret *corev1.Secret, overwrite bool) error {
	secrets := client.CoreV1().Secrets(secret.Namespace)
	_, err := secrets.Create(ctx, secret, metav1.CreateOptions{FieldManager: "ingress-xds-certgen"})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating: %w", err)
	}
	if !overwrite {
		return fmt.Errorf("exists; pass --overwrite to replace the certificates")
	}
	current, err := secrets.Get(ctx, secret.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the existing Secret: %w", err)
	}
	if current.Type != secret.Type {
		// The type of a Secret cannot change: better to say so than to
		// delete what someone else may have put there.
		return fmt.Errorf("exists with type %s, not %s; delete it first", current.Type, secret.Type)
	}
	// An update conditional on the resourceVersion just read: a concurrent
	// writer makes this fail rather than be silently overwritten.
	secret.ResourceVersion = current.ResourceVersion
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{FieldManager: "ingress-xds-certgen"}); err != nil {
		return fmt.Errorf("updating: %w", err)
	}
	return nil
}

// DefaultServerHosts are the names certgen puts in the server certificate
// when given none: those of the ingress-xds Service in namespace (what the
// Envoy DaemonSet dials), and loopback for a port-forward.
func DefaultServerHosts(namespace string) []string {
	svc := "ingress-xds." + namespace + ".svc"
	return []string{svc, svc + ".cluster.local", "localhost", "127.0.0.1"}
}
