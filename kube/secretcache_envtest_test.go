package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// TestSecretCacheHoldsOnlyTLSKeyPairs looks into the Secret informer's cache
// itself, not the State built from it (which filters by type again), with a
// real API server: a large Opaque Secret, whose data even has a tls.key,
// never enters it, neither from the initial list nor from later watch
// events; TLS Secrets enter it stripped to tls.crt and tls.key, also when
// an update adds keys.
func TestSecretCacheHoldsOnlyTLSKeyPairs(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createNamespace(t, client, "app")
	secrets := client.CoreV1().Secrets("app")
	// Close to the 1 MiB limit of a Secret's data.
	opaque := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "opaque"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"big": make([]byte, 1000<<10), corev1.TLSPrivateKeyKey: []byte("opaque key")},
	}
	tlsSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cert", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"note": "dropped"}},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key"),
			"ca.crt": []byte("ca"), "extra": make([]byte, 64<<10),
		},
	}
	for _, s := range []*corev1.Secret{opaque, tlsSecret} {
		mustCreate(t, func() error { _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); return err })
	}

	src := &ClusterSource{Filter: ClassFilter{}, Logger: testLogger(t)}
	runClusterSource(ctx, t, client, src, nil)
	checkCache := func(wantVersion string) error {
		cached, err := src.secrets.List(labels.Everything())
		if err != nil {
			return err
		}
		if len(cached) != 1 || cached[0].Name != "cert" {
			names := []string{}
			for _, s := range cached {
				names = append(names, s.Name)
			}
			return fmt.Errorf("the cache holds Secrets %v, want only cert", names)
		}
		s := cached[0]
		if wantVersion != "" && s.ResourceVersion != wantVersion {
			return fmt.Errorf("cert at version %s, want %s", s.ResourceVersion, wantVersion)
		}
		if len(s.Data) != 2 || s.Data[corev1.TLSCertKey] == nil || s.Data[corev1.TLSPrivateKeyKey] == nil ||
			s.Labels != nil || s.Annotations != nil || s.ManagedFields != nil {
			return fmt.Errorf("cert keeps more than its key pair: %d data keys, labels %v, annotations %v, %d managed fields",
				len(s.Data), s.Labels, s.Annotations, len(s.ManagedFields))
		}
		return nil
	}
	if err := checkCache(""); err != nil {
		t.Fatalf("after the initial list: %v", err)
	}

	// Watch events: the Opaque Secret changes, then the TLS one gains a
	// key. Events of one resource arrive in order, so once the TLS update
	// is in the cache, the Opaque one would be too, had it been delivered.
	opaque.Data["more"] = make([]byte, 1024)
	if _, err := secrets.Update(ctx, opaque, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, func() error {
		_, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "opaque-2"}, Data: map[string][]byte{"x": []byte("y")}}, metav1.CreateOptions{})
		return err
	})
	current, err := secrets.Get(ctx, "cert", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Data["another"] = []byte("dropped too")
	updated, err := secrets.Update(ctx, current, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the TLS Secret's update in the cache, and nothing else", func() error {
		return checkCache(updated.ResourceVersion)
	})
}
