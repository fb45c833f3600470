package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/internal/golden"
)

// auditCluster is an ingress-nginx cluster's objects: its IngressClass,
// Ingresses of that class showing each of the blog's behaviours and a
// verdict of each kind, a refused one, basic authentication with its
// Secret, and another controller's Ingress.
const auditCluster = "../translate/audit/testdata/nginx-cluster.yaml"

// TestAuditAgainstAPIServer runs `ingress-xds audit --kubeconfig` against
// a real API server holding an ingress-nginx-style cluster, as a platform
// team would before switching: it reports what `audit -f` reports on the
// same objects as files (so it reads the Secrets an Ingress names, as
// serve does: the basic-auth Ingress is served), and exits 1 for the
// refused snippet; with --unsupported-annotations=ignore it exits 0.
func TestAuditAgainstAPIServer(t *testing.T) {
	api := startClusterMode(t)
	applyObjects(t, api.Client, auditCluster)
	bin := framework.IngressXDS(t)
	nginx := []string{"--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx"}

	cluster, code := runAudit(t, bin, append([]string{"--kubeconfig", api.Kubeconfig}, nginx...)...)
	if code != 1 {
		t.Errorf("audit --kubeconfig: exit %d, want 1 (an Ingress is refused):\n%s", code, cluster)
	}
	files, _ := runAudit(t, bin, append([]string{"-f", auditCluster}, nginx...)...)
	if cluster != files {
		t.Errorf("audit of the cluster differs from audit -f of the same objects:\n%s", golden.Diff(files, cluster))
	}
	for _, want := range []string{"7 Ingresses of the class, 1 would not be served", "shop/snippet: REFUSED", "shop/basic-auth: served",
		"shop/verdicts: served", "host-wide-regex", "trailing-slash-redirect", "rewrite-implies-regex", "ConfigMap: "} {
		if !strings.Contains(cluster, want) {
			t.Errorf("audit --kubeconfig lacks %q:\n%s", want, cluster)
		}
	}
	if strings.Contains(cluster, "not-ours") {
		t.Errorf("audit --kubeconfig lists another controller's Ingress:\n%s", cluster)
	}

	out, code := runAudit(t, bin, append([]string{"--kubeconfig", api.Kubeconfig, "--unsupported-annotations=ignore", "-o", "json"}, nginx...)...)
	if code != 0 || !strings.Contains(out, `"refused": 0`) {
		t.Errorf("audit --unsupported-annotations=ignore -o json: exit %d, want 0 and nothing refused:\n%s", code, out)
	}
}

// runAudit runs the real binary's audit and returns its standard output
// and exit code.
func runAudit(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"audit"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), exit.ExitCode()
	default:
		t.Fatalf("running audit %v: %v\n%s", args, err, stderr.String())
		return "", -1
	}
}

// applyObjects creates a manifest file's objects (Namespaces first, as
// the file's objects need them).
func applyObjects(t *testing.T, kc kubernetes.Interface, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	namespaces := map[string]bool{}
	for _, doc := range strings.Split(string(raw), "\n---") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			t.Fatalf("decoding %s: %v", path, err)
		}
		if m, ok := obj.(metav1.Object); ok {
			m.SetCreationTimestamp(metav1.Time{}) // the API server sets it
			if ns := m.GetNamespace(); ns != "" && !namespaces[ns] {
				namespaces[ns] = true
				create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			}
		}
		switch o := obj.(type) {
		case *networkingv1.IngressClass:
			create(t, kc.NetworkingV1().IngressClasses(), o)
		case *networkingv1.Ingress:
			create(t, kc.NetworkingV1().Ingresses(o.Namespace), o)
		case *corev1.Service:
			create(t, kc.CoreV1().Services(o.Namespace), o)
		case *corev1.Secret:
			create(t, kc.CoreV1().Secrets(o.Namespace), o)
		default:
			t.Fatalf("%s: no creating a %T", path, obj)
		}
	}
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
