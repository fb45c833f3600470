package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The migration guide, whose every command this test runs as printed.
const migrationDoc = "../docs/migrating-from-ingress-nginx.md"

// migrationSteps are the guide's command blocks, in order: a block the
// test does not know, or one it expects and does not find, fails it, so
// that the guide and the test cannot drift apart.
var migrationSteps = []string{"audit", "audit-json", "install", "shadow-copies", "paths", "compare", "switch", "verify", "rollback"}

// docStep is one ```sh block of the guide, named by the
// `<!-- step: NAME -->` comment before it.
type docStep struct{ name, script string }

func migrationDocSteps(t *testing.T) []docStep {
	t.Helper()
	raw, err := os.ReadFile(migrationDoc)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- step: ([a-z-]+) -->\n```sh\n(.*?)```")
	var steps []docStep
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		steps = append(steps, docStep{name: m[1], script: m[2]})
	}
	if blocks := strings.Count(string(raw), "```sh"); blocks != len(steps) {
		t.Fatalf("%s has %d sh blocks, %d of them named by a step comment: name each", migrationDoc, blocks, len(steps))
	}
	return steps
}

// TestMigrationDoc follows docs/migrating-from-ingress-nginx.md against a
// real API server holding what ingress-nginx leaves in a cluster (its
// IngressClass, its controller's Deployment, Ingresses of its class, one by
// the legacy annotation), running each documented command with the real
// ingress-xds, helm, kubectl, jq and curl. The API server runs no pods, so
// after each helm command the test runs `ingress-xds serve` with the class
// flags the chart's Deployment then holds, with a real Envoy, and checks
// what it serves: nothing of the nginx class in the shadow, the copies
// answering as the originals (NGINX_ADDRESS is an ingress-xds serving the
// nginx class, ingress-nginx not being available: the guide says so), the
// originals after the switch, the shadow again after the rollback, with
// ingress-nginx's class and Ingresses never changed.
func TestMigrationDoc(t *testing.T) {
	steps := migrationDocSteps(t)
	var names []string
	for _, s := range steps {
		names = append(names, s.name)
	}
	if !slices.Equal(names, migrationSteps) {
		t.Fatalf("the guide's steps are %v, the test's %v: change both together", names, migrationSteps)
	}
	api := startClusterMode(t)
	for _, tool := range []string{"kubectl", "jq", "curl", "diff"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the guide's commands: %v", tool, err)
		}
	}
	helm := installHelm(t)
	kc := api.Client
	ctx := t.Context()

	// The backend, where the API server accepts its address.
	netns := framework.NewNetns(t)
	backend := netns.IP + ":8080"
	framework.StartProcess(t, "echo-netns", netns.Command(framework.EchoBinary(t), "-listen", backend+"=shop"))
	framework.Eventually(t, convergeTimeout, "echo in the namespace answers", func() error {
		return framework.Expect(backend, "direct", "/", http.StatusOK, "shop")
	})

	// What ingress-nginx's chart leaves: its namespace, its controller
	// (no pods run), its IngressClass; and Ingresses of the class.
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx"}})
	labels := map[string]string{"app.kubernetes.io/name": "ingress-nginx"}
	create(t, kc.AppsV1().Deployments("ingress-nginx"), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: "registry.k8s.io/ingress-nginx/controller:v1.15.0"}}}}},
	})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass("nginx", "k8s.io/ingress-nginx"))
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.CoreV1().Services(namespace), service("web", 8080))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("web-1", "web", 8080, ready(netns.IP)))
	nginx := ptr("nginx")
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("shop", nginx, "shop.example.com", prefix("/", "web")))
	api1 := ingress("api", nginx, "api.example.com", ingressPath("/api(/|$)(.*)", networkingv1.PathTypeImplementationSpecific, "web"))
	api1.Annotations = map[string]string{"nginx.ingress.kubernetes.io/use-regex": "true", "nginx.ingress.kubernetes.io/rewrite-target": "/$2"}
	create(t, kc.NetworkingV1().Ingresses(namespace), api1)
	legacy := ingress("legacy", nil, "legacy.example.com", prefix("/", "web"))
	legacy.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
	create(t, kc.NetworkingV1().Ingresses(namespace), legacy)

	// ingress-nginx's stand-in: ingress-xds serving the nginx class.
	standIn := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx")
	standIn.WaitReady(t)
	standInEnvoy := framework.StartEnvoy(t, standIn)
	framework.Eventually(t, convergeTimeout, "the stand-in serves the nginx class", func() error {
		return standInEnvoy.Expect("shop.example.com", "/", http.StatusOK, "shop")
	})

	work := t.TempDir()
	root := framework.RepoRoot(t)
	if err := os.Symlink(filepath.Join(root, "deploy"), filepath.Join(work, "deploy")); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for name, path := range map[string]string{"ingress-xds": framework.IngressXDS(t), "helm": helm} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"KUBECONFIG":    api.Kubeconfig,
		"PATH":          bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NGINX_ADDRESS": standInEnvoy.HTTPAddress,
	}
	// served runs ingress-xds as the chart's Deployment would now, with a
	// real Envoy, in place of the one before.
	var current *framework.ControlPlane
	var currentEnvoy *framework.Envoy
	served := func() []string {
		t.Helper()
		args := chartClassArgs(t, api)
		if current != nil {
			currentEnvoy.Stop()
			current.Stop()
		}
		current = framework.StartControlPlane(t, append([]string{"--kubeconfig", api.Kubeconfig}, args...)...)
		current.WaitReady(t)
		currentEnvoy = framework.StartEnvoy(t, current)
		env["ENVOY_ADDRESS"] = currentEnvoy.HTTPAddress
		return args
	}
	expect := func(what, host, path string, status int, backend string) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, what, func() error { return currentEnvoy.Expect(host, path, status, backend) })
	}

	// What each step must print, and what the cluster must then hold.
	checks := map[string]struct {
		want  []string
		after func()
	}{
		"audit":      {want: []string{"3 Ingresses of the class, 0 would not be served", "e2e/api: served", "e2e/legacy: served", "rewrite-target"}},
		"audit-json": {want: []string{`"ingresses": 3`, `"refused": 0`}},
		"install": {after: func() {
			for _, name := range []string{"xds-server-tls", "xds-client-tls"} {
				if _, err := kc.CoreV1().Secrets("ingress-xds").Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Errorf("after the install step, the Secret %s: %v", name, err)
				}
			}
			if args := served(); !slices.Contains(args, "--ingress-class=ingress-xds-shadow") || !slices.Contains(args, "--controller-class=ingress-xds.io/controller") ||
				!slices.Contains(args, "--nginx-defaults=true") {
				t.Fatalf("the chart's control plane runs with %v, want the shadow class", args)
			}
			expect("the shadow serves nothing of the nginx class", "shop.example.com", "/", http.StatusNotFound, "")
		}},
		"shadow-copies": {want: []string{"shop-shadow created", "api-shadow created", "legacy-shadow created"}, after: func() {
			expect("the shadow serves the copies", "shop.example.com", "/", http.StatusOK, "shop")
			expect("the shadow serves the legacy Ingress's copy", "legacy.example.com", "/", http.StatusOK, "shop")
		}},
		"paths": {},
		"compare": {after: func() {
			got := readFile(t, filepath.Join(work, "answers-"+env["ENVOY_ADDRESS"]+".txt"))
			for _, want := range []string{"shop.example.com /CART 200", "api.example.com /API/v1/items 200", "api.example.com /apix 404"} {
				if !strings.Contains(got, want) {
					t.Errorf("the shadow's answers lack %q:\n%s", want, got)
				}
			}
		}},
		"switch": {want: []string{"deployment.apps/ingress-nginx-controller scaled", "has been upgraded", `"shop-shadow" deleted`}, after: func() {
			if n := replicas(t, api, "ingress-nginx", "ingress-nginx-controller"); n != 0 {
				t.Errorf("ingress-nginx's controller has %d replicas after the switch, want 0", n)
			}
			if args := served(); !slices.Contains(args, "--ingress-class=nginx") || !slices.Contains(args, "--controller-class=k8s.io/ingress-nginx") {
				t.Fatalf("the chart's control plane runs with %v, want the nginx class", args)
			}
			expect("the switched ingress-xds serves the originals", "shop.example.com", "/", http.StatusOK, "shop")
			expect("and the legacy annotation's", "legacy.example.com", "/", http.StatusOK, "shop")
			expect("and the rewrite", "api.example.com", "/API/v1/items", http.StatusOK, "shop")
		}},
		"verify": {},
		"rollback": {want: []string{"deployment.apps/ingress-nginx-controller scaled", "Rollback was a success"}, after: func() {
			if n := replicas(t, api, "ingress-nginx", "ingress-nginx-controller"); n != 2 {
				t.Errorf("ingress-nginx's controller has %d replicas after the rollback, want 2", n)
			}
			if args := served(); !slices.Contains(args, "--ingress-class=ingress-xds-shadow") {
				t.Fatalf("after the rollback the chart's control plane runs with %v, want the shadow class", args)
			}
			expect("the shadow again serves nothing of the nginx class", "shop.example.com", "/", http.StatusNotFound, "")
		}},
	}

	for _, step := range steps {
		check := checks[step.name]
		sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", step.script)
		sh.Dir = work
		sh.Env = os.Environ()
		for k, v := range env {
			sh.Env = append(sh.Env, k+"="+v)
		}
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("step %s:\n%s\nfailed: %v\n%s", step.name, step.script, err, out)
		}
		t.Logf("step %s:\n%s", step.name, out)
		for _, w := range check.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("step %s: output lacks %q:\n%s", step.name, w, out)
			}
		}
		if check.after != nil {
			check.after()
		}
	}

	// ingress-nginx's class and Ingresses were never changed.
	class, err := kc.NetworkingV1().IngressClasses().Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil || class.Spec.Controller != "k8s.io/ingress-nginx" {
		t.Errorf("the nginx IngressClass after the rollback: %v, %v", class, err)
	}
	list, err := kc.NetworkingV1().Ingresses(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, ing := range list.Items {
		left = append(left, ing.Name)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"api", "legacy", "shop"}) {
		t.Errorf("Ingresses after the rollback: %v, want the originals alone", left)
	}
}

// chartClassArgs are the class flags of the chart's control plane
// Deployment as the API server holds it, and --nginx-defaults, which the
// guide's install sets.
func chartClassArgs(t *testing.T, api *framework.APIServer) []string {
	t.Helper()
	d, err := api.Client.AppsV1().Deployments("ingress-xds").Get(t.Context(), "ingress-xds", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's control plane: %v", err)
	}
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "ingress-xds" {
			continue
		}
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--ingress-class=") || strings.HasPrefix(a, "--controller-class=") || a == "--watch-ingress-without-class" ||
				strings.HasPrefix(a, "--nginx-defaults") {
				out = append(out, a)
			}
		}
	}
	if len(out) < 2 {
		t.Fatalf("the chart's control plane has no class flags: %v", d.Spec.Template.Spec.Containers)
	}
	return out
}

func replicas(t *testing.T, api *framework.APIServer, ns, name string) int32 {
	t.Helper()
	d, err := api.Client.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// installHelm installs helm with the project's script (nothing when it is
// there) and returns its path.
func installHelm(t *testing.T) string {
	t.Helper()
	root := framework.RepoRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "hack", "install-tools.sh"), "helm")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/install-tools.sh helm: %v\n%s", err, out)
	}
	return filepath.Join(root, ".tools", "bin", "helm")
}
