package kind

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/ingress-xds/ingress-xds/deploy"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// install puts ingress-xds on the cluster the way a user does, by the path
// INGRESS_XDS_KIND_INSTALL names: "kustomize" (the default: `kubectl apply
// -k deploy/`, rendered and server-side applied in-process) or "helm" (the
// chart, deploy/helm/ingress-xds, with `helm install`, after the namespace
// and the certificates its README has the user make). Either way with the
// images under test, and c.objs the objects installed. Gateway API's CRDs
// go in first, as the docs' optional step (deploy/gateway-api/, or the
// chart's gatewayAPI.installCRDs, auto by default): the control plane asks at start-up which
// kinds are served, so every scenario runs with both front-ends on, and
// Gateway API's conformance suite (e2e/gatewayconformance) runs on the
// cluster afterwards.
func (c *cluster) install(t *testing.T, image, envoy string) {
	t.Helper()
	switch how := os.Getenv("INGRESS_XDS_KIND_INSTALL"); how {
	case "", "kustomize":
		c.installKustomize(t, image, envoy)
	case "helm":
		c.installHelm(t, image, envoy)
	default:
		t.Fatalf("INGRESS_XDS_KIND_INSTALL=%q: want kustomize or helm", how)
	}
	if err := c.loadHostPorts(); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) installKustomize(t *testing.T, image, envoy string) {
	crds, err := deploy.Render(filepath.Join(framework.RepoRoot(t), "deploy", "gateway-api"))
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.Apply(c.ctx(), c.cfg, crds, "ingress-xds-e2e", false); err != nil {
		t.Fatal(err)
	}
	c.waitGatewayAPIServed(t)
	c.objs = renderDeploy(t)
	if n := setImage(c.objs, baseImage, image); n != 3 {
		t.Fatalf("replaced %d images of %s in deploy/, want 3 (control plane, bootstrap, authorisation service)", n, baseImage)
	}
	if envoy != "" {
		if n := setImage(c.objs, envoyImage, envoy); n != 1 {
			t.Fatalf("replaced %d images of %s in deploy/, want 1", n, envoyImage)
		}
	}
	if err := deploy.Apply(c.ctx(), c.cfg, c.objs, "ingress-xds-e2e", false); err != nil {
		t.Fatal(err)
	}
	c.certgen(t)
}

func (c *cluster) installHelm(t *testing.T, image, envoy string) {
	root := framework.RepoRoot(t)
	setup := exec.Command("bash", filepath.Join(root, "hack", "install-tools.sh"), "helm")
	setup.Dir = root
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("hack/install-tools.sh helm: %v\n%s", err, out)
	}
	helm := filepath.Join(root, ".tools", "bin", "helm")

	// The chart's README: the namespace, privileged for Envoy's host
	// ports, and the certificates, before helm install.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNS, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}
	if _, err := c.client.CoreV1().Namespaces().Create(c.ctx(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	c.certgen(t)
	values := imageValues("image", image) // gatewayAPI.installCRDs: auto, the cluster has none
	if envoy != "" {
		values = append(values, imageValues("controller.image", envoy)...)
	}
	chart := filepath.Join(root, "deploy", "helm", "ingress-xds")
	args := append([]string{"--namespace", systemNS, "--kubeconfig", c.kubeconfig}, values...)
	out := runHelm(t, helm, append([]string{"template", "ingress-xds", chart}, args...)...)
	objs, err := decodeDocuments(out)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	c.objs = objs
	runHelm(t, helm, append([]string{"install", "ingress-xds", chart}, args...)...)
}

// waitGatewayAPIServed waits until the API server serves every Gateway API
// kind the control plane watches, so that it finds them when it starts.
func (c *cluster) waitGatewayAPIServed(t *testing.T) {
	t.Helper()
	framework.Eventually(t, rollout, "Gateway API's kinds served", func() error {
		list, err := c.client.Discovery().ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
		if err != nil {
			return err
		}
		for _, want := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "referencegrants"} {
			if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == want }) {
				return fmt.Errorf("%s not served yet", want)
			}
		}
		return nil
	})
}

// imageValues sets the chart's image value prefix (repository, tag and a
// pull policy that takes the image loaded into the nodes) to image.
func imageValues(prefix, image string) []string {
	repo, tag := image, "latest"
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo, tag = image[:i], image[i+1:]
	}
	return []string{"--set", prefix + ".repository=" + repo, "--set", prefix + ".tag=" + tag, "--set", prefix + ".pullPolicy=IfNotPresent"}
}

func runHelm(t *testing.T, helm string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func decodeDocuments(manifest []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// certgen makes the xDS certificates, as the install guide has the user
// do: the pods wait for these Secrets to start.
func (c *cluster) certgen(t *testing.T) {
	t.Helper()
	cmd := exec.Command(framework.IngressXDS(t), "certgen", "--kube", "--kubeconfig", c.kubeconfig, "--namespace", systemNS)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ingress-xds certgen --kube: %v\n%s", err, out)
	}
}

// loadHostPorts finds the Envoys' host ports in what was installed.
func (c *cluster) loadHostPorts() error {
	var err error
	c.httpPort, c.httpsPort, err = envoyHostPorts(c.objs)
	if err != nil {
		return fmt.Errorf("the objects installed: %w", err)
	}
	return nil
}

// TestHelmValues runs without a cluster: the values the Helm path sets
// must put the images under test into every container, with a pull policy
// that takes the loaded image, and leave the host ports the suite sends to.
func TestHelmValues(t *testing.T) {
	if got, want := strings.Join(imageValues("image", "localhost:5000/ingress-xds:abc"), " "),
		"--set image.repository=localhost:5000/ingress-xds --set image.tag=abc --set image.pullPolicy=IfNotPresent"; got != want {
		t.Errorf("imageValues: %s, want %s", got, want)
	}
	root := framework.RepoRoot(t)
	helm := filepath.Join(root, ".tools", "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Skipf("no helm at %s (hack/install-tools.sh helm)", helm)
	}
	args := append([]string{"template", "ingress-xds", filepath.Join(root, "deploy", "helm", "ingress-xds"), "--namespace", systemNS},
		append(imageValues("image", "ingress-xds:test"), imageValues("controller.image", "ingress-xds-envoy:test")...)...)
	objs, err := decodeDocuments(runHelm(t, helm, args...))
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, obj := range objs {
		for _, field := range []string{"initContainers", "containers"} {
			list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", field)
			for _, c := range list {
				m := c.(map[string]any)
				images = append(images, fmt.Sprintf("%s %s", m["image"], m["imagePullPolicy"]))
			}
		}
	}
	slices.Sort(images)
	if want := []string{"ingress-xds-envoy:test IfNotPresent", "ingress-xds:test IfNotPresent", "ingress-xds:test IfNotPresent", "ingress-xds:test IfNotPresent"}; !slices.Equal(images, want) {
		t.Errorf("images %v, want %v", images, want)
	}
	httpPort, httpsPort, err := envoyHostPorts(objs)
	if err != nil {
		t.Fatal(err)
	}
	if httpPort != "80" || httpsPort != "443" {
		t.Errorf("host ports %s and %s, want 80 and 443", httpPort, httpsPort)
	}
}
