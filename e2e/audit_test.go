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
	for _, want := range []string{"8 Ingresses of the class, 1 would not be served", "shop/snippet-served: served", "line 2 mirror: refused", "shop/snippet: REFUSED", "shop/basic-auth: served",
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

// TestAuditBehavioursThroughEnvoy sends, through a real Envoy serving the
// audit's own test cluster, the requests of the Kubernetes blog post
// "Before You Migrate: Five Surprising Ingress-NGINX Behaviors", so that
// what the audit says ingress-xds does for each is what it does. The
// ingress-nginx side is its e2e tests' and the blog's: regex mode in
// test/e2e/annotations/rewrite.go ("should use ~* location modifier if
// regex annotation is present", a plain Ingress's path becoming a
// case-insensitive prefix regular expression beside a regex one), Prefix
// paths in test/e2e/ingress/pathtype_prefix.go.
func TestAuditBehavioursThroughEnvoy(t *testing.T) {
	backends := echoBackends(t, "httpbin")
	raw, err := os.ReadFile(auditCluster)
	if err != nil {
		t.Fatal(err)
	}
	// The cluster's Ingresses in the default namespace, sent to an echo
	// backend in place of the Service without endpoints.
	const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: httpbin, namespace: shop}\nspec: {ports: [{name: http, port: 8000}]}\n"
	if !strings.Contains(string(raw), svc) {
		t.Fatalf("%s no longer holds the Service this test replaces:\n%s", auditCluster, svc)
	}
	ingresses := strings.NewReplacer(svc, "", "namespace: shop", "namespace: default", "port: {number: 8000}", "port: {number: 80}").Replace(string(raw))
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(backends...))
	writeManifest(t, dir, "cluster.yaml", ingresses)
	cp := framework.StartControlPlane(t, "--manifests", dir, "--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "the first route", func() error {
		return envoy.Expect("verdicts.example.com", "/", 200, "httpbin")
	})
	expectAll(t, envoy, []framework.RouteCase{
		// 1. A regular expression matches a prefix, case-insensitively:
		// /[A-Z]{3} takes /uuid and /abcd/e.
		{Host: "regex-match.example.com", Path: "/uuid", Status: 200, Backend: "httpbin"},
		{Host: "regex-match.example.com", Path: "/abcd/e", Status: 200, Backend: "httpbin"},
		{Host: "regex-match.example.com", Path: "/ab", Status: 404},
		// 2. Host-wide: the neighbour's Exact /HEAD takes /headers.
		{Host: "regex-match.example.com", Path: "/headers", Status: 200, Backend: "httpbin"},
		// 4. The trailing-slash redirect: serving ingress-nginx's class
		// gives its defaults (--nginx-defaults), so the Prefix /my-path/
		// and the Exact /exact/ answer their path without the slash with
		// nginx's 301 to it.
		{Host: "trailing-slash.example.com", Path: "/my-path", Status: 301},
		{Host: "trailing-slash.example.com", Path: "/my-path/", Status: 200, Backend: "httpbin"},
		{Host: "trailing-slash.example.com", Path: "/exact/", Status: 200, Backend: "httpbin"},
		{Host: "trailing-slash.example.com", Path: "/exact", Status: 301},
		// The refused Ingress answers 503.
		{Host: "admin.example.com", Path: "/admin", Status: 503},
	})
	for path, want := range map[string]string{"/my-path": "/my-path/", "/exact": "/exact/"} {
		r, err := envoy.Get("trailing-slash.example.com", path)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Header.Get("Location"); !strings.HasSuffix(got, want) {
			t.Errorf("GET trailing-slash.example.com%s: Location %q, want one to %s", path, got, want)
		}
	}
	// 3. rewrite-target implies a regular expression: /OLDER is matched
	// by /old, case-insensitively, as a prefix, and rewritten; 5. URL
	// normalisation: the backend gets the normalised path.
	for _, c := range []struct{ host, path, want string }{
		{"rewrite.example.com", "/old/x", "/uuid"},
		{"rewrite.example.com", "/OLDER", "/uuid"},
		{"trailing-slash.example.com", "/ip/abc/../../my-path/x", "/my-path/x"},
		{"trailing-slash.example.com", "////my-path/x", "/my-path/x"},
	} {
		r, err := envoy.Get(c.host, c.path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 200 || r.Echo.Path != c.want {
			t.Errorf("GET %s%s: %s, want 200 with the backend seeing %s", c.host, c.path, r, c.want)
		}
	}
}
