package translate_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// TestAutoHTTPIncremental holds the caches (the front-end's memo, the
// renderer's messages per listener side) to backend-protocol AUTO_HTTP's
// clusters over TLS, step by step on testdata/autohttp.yaml: after each
// change the Translator's output is a fresh translation's, and so is its
// IR. The random series (TestTranslatorMatchesFreshTranslation) toggles
// AUTO_HTTP too; this one takes it through the changes that move its
// second clusters: the protocol off and on, a TLS setting, the default
// backend's aggregates, the canary's split, the proxy-ssl-secret gone and
// back.
func TestAutoHTTPIncremental(t *testing.T) {
	st, err := kube.LoadStateWith(filepath.Join("testdata", "autohttp.yaml"), kube.ClassFilter{WatchClassless: true}, goldenReferences)
	if err != nil {
		t.Fatal(err)
	}
	tr := translate.NewTranslator(goldenOptions)
	if _, err := tr.Translate(st); err != nil {
		t.Fatal(err)
	}
	const (
		protocol = "nginx.ingress.kubernetes.io/backend-protocol"
		verify   = "nginx.ingress.kubernetes.io/proxy-ssl-verify"
		fallback = "nginx.ingress.kubernetes.io/default-backend"
		weight   = "nginx.ingress.kubernetes.io/canary-weight"
	)
	caSecret := types.NamespacedName{Namespace: "shop", Name: "upstream-ca"}
	saved := st.Secrets[caSecret]
	steps := []struct {
		ingress, key, value string // value "": remove the key
		secret              *corev1.Secret
	}{
		{ingress: "bare", key: protocol, value: "HTTP"},
		{ingress: "bare", key: protocol, value: "AUTO_HTTP"},
		{ingress: "auto", key: verify},
		{ingress: "auto", key: fallback},
		{ingress: "auto-canary", key: weight, value: "100"},
		{ingress: "auto", key: protocol, value: "HTTPS"},
		{ingress: "auto", key: protocol, value: "AUTO_HTTP"},
		{ingress: "auto-canary", key: weight, value: "10"},
		{secret: nil},   // upstream-ca deleted: auto's routes answer 503
		{secret: saved}, // and back
		{ingress: "auto", key: fallback, value: "fallback"},
		{ingress: "auto", key: verify, value: "on"},
	}
	for i, s := range steps {
		desc := s.ingress + " " + s.key + "=" + s.value
		if s.ingress == "" {
			st.Secrets = maps.Clone(st.Secrets)
			if s.secret == nil {
				delete(st.Secrets, caSecret)
				desc = "delete " + caSecret.String()
			} else {
				st.Secrets[caSecret] = s.secret.DeepCopy()
				desc = "restore " + caSecret.String()
			}
		} else {
			at := slices.IndexFunc(st.Ingresses, func(ing *networkingv1.Ingress) bool { return ing.Name == s.ingress })
			ing := st.Ingresses[at].DeepCopy()
			if s.value == "" {
				delete(ing.Annotations, s.key)
			} else {
				ing.Annotations[s.key] = s.value
			}
			st.Ingresses = slices.Clone(st.Ingresses)
			st.Ingresses[at] = ing
		}
		got, err := tr.Translate(st)
		if err != nil {
			t.Fatal(err)
		}
		sameAsFresh(t, got, st, goldenOptions, fmt.Sprintf("step %d (%s)", i, desc))
	}
	// The last state is the first: each route of tls.example.com names
	// its cluster over TLS again.
	final, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, vh := range final.IR().VirtualHosts {
		if vh.Host != "tls.example.com" {
			continue
		}
		for _, r := range vh.Routes {
			for _, wc := range r.Action.Forward.Clusters {
				if wc.TLSCluster == "" || wc.TLSCluster == wc.Cluster {
					t.Errorf("route %v: share %+v has no cluster of its own over TLS", r.Match, wc)
				}
			}
		}
		return
	}
	t.Error("no virtual host tls.example.com")
}
