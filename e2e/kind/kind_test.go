// Package kind runs the end-to-end scenarios on a real cluster: deploy/ as a
// user applies it, images built from the working tree
// (hack/project-images.sh), Envoy reached through its DaemonSet's host ports
// on the nodes' addresses. It needs nothing but a kubeconfig (and the
// images, loaded into the cluster or pullable by it), so that it runs
// unchanged on any cluster whose nodes this machine reaches; run.sh (make
// e2e-kind) creates a kind cluster and passes it in through the environment.
// Without one the test skips, as there is no cluster to test.
package kind

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ingress-xds/ingress-xds/deploy"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

const (
	// baseImage is the image deploy/ names for the control plane and the
	// Envoy init container; the test swaps in the one run.sh loaded.
	baseImage = "ghcr.io/ingress-xds/ingress-xds"
	// envoyImage is deploy/'s Envoy, swapped for INGRESS_XDS_KIND_ENVOY_IMAGE
	// when set (a cluster without a registry).
	envoyImage = "envoyproxy/envoy"
	systemNS   = "ingress-xds"
	appNS      = "cafe"
	rollout    = 5 * time.Minute // pulls, scheduling, probes: generous
	converge   = 60 * time.Second
	envoyLabel = "app.kubernetes.io/name=envoy"
)

type cluster struct {
	base       context.Context // the whole test's
	client     kubernetes.Interface
	cfg        *rest.Config
	kubeconfig string
	objs       []*unstructured.Unstructured // deploy/ as applied
	echoImage  string
	// httpPort and httpsPort are the Envoys' host ports (deploy/envoy.yaml),
	// on every node that runs one.
	httpPort, httpsPort string
	// loopbackHTTP and loopbackHTTPS are where kind publishes the first
	// worker's host ports on this machine (cluster.yaml), when set: checked
	// too, as kind's users reach Envoy that way.
	loopbackHTTP, loopbackHTTPS string
}

func TestKind(t *testing.T) {
	kubeconfig := os.Getenv("INGRESS_XDS_KIND_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("needs a cluster: run `make e2e-kind` (e2e/kind/run.sh), or set INGRESS_XDS_KIND_KUBECONFIG and the images")
	}
	env := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			t.Fatalf("%s is not set (run.sh sets it)", name)
		}
		return v
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	c := &cluster{
		base:          t.Context(),
		client:        kubernetes.NewForConfigOrDie(cfg),
		cfg:           cfg,
		kubeconfig:    kubeconfig,
		echoImage:     env("INGRESS_XDS_KIND_ECHO_IMAGE"),
		loopbackHTTP:  os.Getenv("INGRESS_XDS_KIND_HTTP"),
		loopbackHTTPS: os.Getenv("INGRESS_XDS_KIND_HTTPS"),
	}
	ctx := t.Context()
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs(t)
		}
	})

	// deploy/ as a user installs it (kustomize, or the Helm chart), with
	// our images.
	c.install(t, env("INGRESS_XDS_KIND_IMAGE"), os.Getenv("INGRESS_XDS_KIND_ENVOY_IMAGE"))
	framework.Eventually(t, rollout, "control plane rolled out", func() error {
		return deploymentReady(ctx, c.client, systemNS, "ingress-xds")
	})
	framework.Eventually(t, rollout, "envoy daemonset rolled out", func() error {
		return c.envoysReady(ctx)
	})

	c.deployBackends(t)
	if !t.Run("routing", c.testRouting) {
		return
	}
	t.Run("tls", c.testTLS)
	t.Run("status is the nodes of ready envoys", c.testStatus)
	t.Run("rbac is what the control plane needs and no more", c.testRBAC)
	t.Run("editing an ingress reroutes", c.testReroute)
	t.Run("a bad ingress among good ones is refused alone", c.testBadIngressAmongGood)
	t.Run("an envoy restart fails no request", c.testEnvoyRestart)
	t.Run("readiness holds an envoy without configuration out", c.testReadiness)
	t.Run("a control plane rollout fails no request", c.testRollout)
	t.Run("leader failover", c.testFailover)
	t.Run("two replicas share the envoys, and one lost moves its envoys", c.testFleetShared)
	t.Run("an envoy daemonset rolling update fails no request", c.testEnvoyRollingUpdate)
	t.Run("a node drained and uncordoned fails no request", c.testNodeDrain)
	t.Run("control plane pods killed during changes fail no request", c.testControlPlaneKilled)
	t.Run("an api server restart fails no request", c.testAPIServerRestart)
	t.Run("the control plane was refused nothing", c.testNothingForbidden)
}

func (c *cluster) ctx() context.Context { return c.base }

// renderDeploy is deploy/ as `kubectl apply -k deploy/` renders it.
func renderDeploy(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := deploy.Render(filepath.Join(framework.RepoRoot(t), "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// setImage points containers that run image base (any tag) at image, and
// returns how many it changed.
func setImage(objs []*unstructured.Unstructured, base, image string) int {
	n := 0
	for _, obj := range objs {
		for _, field := range []string{"containers", "initContainers"} {
			path := []string{"spec", "template", "spec", field}
			list, found, _ := unstructured.NestedSlice(obj.Object, path...)
			if !found {
				continue
			}
			for _, c := range list {
				m := c.(map[string]any)
				if name, _ := m["image"].(string); name == base || strings.HasPrefix(name, base+":") || strings.HasPrefix(name, base+"@") {
					m["image"] = image
					m["imagePullPolicy"] = "IfNotPresent" // loaded into the nodes, never pulled
					n++
				}
			}
			unstructured.SetNestedSlice(obj.Object, list, path...)
		}
	}
	return n
}

// envoyHostPorts reads the host ports of the Envoy container's http and
// https ports from the DaemonSet, where the test finds Envoy on each node.
func envoyHostPorts(objs []*unstructured.Unstructured) (httpPort, httpsPort string, err error) {
	for _, obj := range objs {
		if obj.GetKind() != "DaemonSet" || obj.GetName() != "envoy" {
			continue
		}
		ds := &appsv1.DaemonSet{}
		if err := fromUnstructured(obj, ds); err != nil {
			return "", "", err
		}
		for _, ct := range ds.Spec.Template.Spec.Containers {
			for _, p := range ct.Ports {
				switch p.Name {
				case "http":
					httpPort = fmt.Sprint(p.HostPort)
				case "https":
					httpsPort = fmt.Sprint(p.HostPort)
				}
			}
		}
	}
	if httpPort == "" || httpsPort == "" || httpPort == "0" || httpsPort == "0" {
		return "", "", fmt.Errorf("deploy/'s envoy DaemonSet has host ports http %q and https %q, want both", httpPort, httpsPort)
	}
	return httpPort, httpsPort, nil
}

func fromUnstructured(obj *unstructured.Unstructured, into any) error {
	raw, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func deploymentReady(ctx context.Context, client kubernetes.Interface, ns, name string) error {
	d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if s := d.Status; s.AvailableReplicas != want || s.UpdatedReplicas != want || s.Replicas != want || s.ObservedGeneration < d.Generation {
		return fmt.Errorf("%s/%s: %d of %d available, %d updated, %d in all", ns, name, s.AvailableReplicas, want, s.UpdatedReplicas, s.Replicas)
	}
	return nil
}

// envoysReady is nil once the DaemonSet has an up-to-date, Ready Envoy on
// every node it schedules to, and at least two (the disruption tests take
// one away and need the other).
func (c *cluster) envoysReady(ctx context.Context) error {
	ds, err := c.client.AppsV1().DaemonSets(systemNS).Get(ctx, "envoy", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if s := ds.Status; s.DesiredNumberScheduled < 2 || s.NumberReady != s.DesiredNumberScheduled || s.UpdatedNumberScheduled != s.DesiredNumberScheduled || s.ObservedGeneration < ds.Generation {
		return fmt.Errorf("envoy: %d of %d ready, %d updated (want two nodes at least)", s.NumberReady, s.DesiredNumberScheduled, s.UpdatedNumberScheduled)
	}
	return nil
}

// deployBackends creates the cafe of both suites (framework.CafeIngressYAML
// and framework.CafeServices): an echo Deployment of two replicas for each
// backend, the Services, and the cafe Ingress.
func (c *cluster) deployBackends(t *testing.T) {
	ctx := t.Context()
	create(t, func() error {
		_, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		c.client.CoreV1().Namespaces().Delete(context.Background(), appNS, metav1.DeleteOptions{})
	})
	var backends []string
	for _, s := range framework.CafeServices() {
		selects := s.Backend
		if selects == "" {
			selects = "nobody" // selects no pod: no ready endpoint
		} else if !slices.Contains(backends, s.Backend) {
			backends = append(backends, s.Backend)
		}
		svc := service(s.Name, selects, s.PortName)
		create(t, func() error {
			_, err := c.client.CoreV1().Services(appNS).Create(ctx, svc, metav1.CreateOptions{})
			return err
		})
	}
	for _, name := range backends {
		create(t, func() error {
			_, err := c.client.AppsV1().Deployments(appNS).Create(ctx, echoDeployment(name, c.echoImage), metav1.CreateOptions{})
			return err
		})
	}
	create(t, func() error {
		_, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, cafeIngress(t, "coffee"), metav1.CreateOptions{})
		return err
	})
	for _, name := range backends {
		framework.Eventually(t, rollout, "backend "+name+" rolled out", func() error {
			return deploymentReady(ctx, c.client, appNS, name)
		})
	}
}

func create(t *testing.T, fn func() error) {
	t.Helper()
	if err := fn(); err != nil {
		t.Fatal(err)
	}
}

func echoDeployment(name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:            "echo",
					Image:           image,
					ImagePullPolicy: corev1.PullIfNotPresent,
					Args:            []string{"-listen", ":8080=" + name},
					Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")},
					}},
				}}},
			},
		},
	}
}

// service is a Service on port 80 to the pods labelled app=selects; portName
// names the port ("" for none), as tea's is referred to by name.
func service(name, selects, portName string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNS},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": selects},
			Ports:    []corev1.ServicePort{{Name: portName, Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// cafeIngress is the cafe Ingress of both suites (framework.CafeIngressYAML),
// in the cafe namespace, with /coffee sent to coffeeService.
func cafeIngress(t *testing.T, coffeeService string) *networkingv1.Ingress {
	t.Helper()
	ing := &networkingv1.Ingress{}
	if err := yaml.UnmarshalStrict([]byte(framework.CafeIngressYAML(appNS, coffeeService)), ing); err != nil {
		t.Fatalf("the cafe Ingress: %v", err)
	}
	return ing
}

// envoyAddresses is every Envoy's HTTP (or, with https, HTTPS) address: the
// host port on the node of each Ready Envoy, then kind's loopback mapping
// when there is one.
func (c *cluster) envoyAddresses(t *testing.T, https bool) []string {
	t.Helper()
	nodes, err := c.readyEnvoyHostIPs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	port, loopback := c.httpPort, c.loopbackHTTP
	if https {
		port, loopback = c.httpsPort, c.loopbackHTTPS
	}
	var out []string
	for _, n := range nodes {
		out = append(out, net.JoinHostPort(n, port))
	}
	if loopback != "" {
		out = append(out, loopback)
	}
	return out
}

// testRouting checks the routing table of both suites
// (framework.CafeRoutes) through every Envoy: each node's port 80, and
// kind's loopback mapping of the first worker's.
func (c *cluster) testRouting(t *testing.T) {
	for _, address := range c.envoyAddresses(t, false) {
		framework.Eventually(t, converge, "first route served through "+address, func() error {
			return framework.Expect(address, "cafe.example.com", "/coffee", http.StatusOK, "coffee")
		})
		for _, rc := range framework.CafeRoutes() {
			// Each once, but after the first route the EDS of every
			// cluster may still be on its way: allow a short convergence
			// per case.
			framework.Eventually(t, converge, fmt.Sprintf("GET %s%s through %s", rc.Host, rc.Path, address), func() error {
				return rc.Send(address)
			})
		}
	}
}

// testTLS terminates TLS for secure.example.com on every Envoy's port 443,
// with a certificate from a Secret, and checks it against that certificate
// with SNI.
func (c *cluster) testTLS(t *testing.T) {
	ctx := t.Context()
	ca := framework.NewCA(t, "ingress-xds kind e2e CA")
	secure := ca.Issue(t, "secure.example.com", "secure.example.com")
	create(t, func() error {
		_, err := c.client.CoreV1().Secrets(appNS).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "secure-tls", Namespace: appNS},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: secure.CertPEM, corev1.TLSPrivateKeyKey: secure.KeyPEM},
		}, metav1.CreateOptions{})
		return err
	})
	ing := cafeIngress(t, "coffee")
	ing.Name = "secure"
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"secure.example.com"}, SecretName: "secure-tls"}}
	ing.Spec.Rules = []networkingv1.IngressRule{{Host: "secure.example.com", IngressRuleValue: ing.Spec.Rules[1].IngressRuleValue}}
	create(t, func() error {
		_, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, ing, metav1.CreateOptions{})
		return err
	})
	roots := ca.Pool()
	for _, address := range c.envoyAddresses(t, true) {
		framework.Eventually(t, converge, "https://secure.example.com/ answered by tea over verified TLS through "+address, func() error {
			return framework.ExpectTLS(address, "secure.example.com", roots, "secure.example.com", "/", http.StatusOK, "tea")
		})
	}
}

// dumpLogs prints the tail of every container's log in the system
// namespace (init containers and the previous run of restarted ones too),
// and the namespace's Events.
func (c *cluster) dumpLogs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing pods for their logs: %v", err)
		return
	}
	tail := int64(80)
	for _, p := range pods.Items {
		restarted := map[string]bool{}
		for _, s := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			restarted[s.Name] = s.RestartCount > 0
		}
		for _, ct := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			for _, previous := range []bool{false, true} {
				if previous && !restarted[ct.Name] {
					continue
				}
				raw, err := c.client.CoreV1().Pods(systemNS).GetLogs(p.Name, &corev1.PodLogOptions{Container: ct.Name, TailLines: &tail, Previous: previous}).DoRaw(ctx)
				if err != nil {
					t.Logf("logs of %s/%s: %v", p.Name, ct.Name, err)
					continue
				}
				t.Logf("--- last %d lines of %s/%s (on %s, previous run: %v) ---\n%s", tail, p.Name, ct.Name, p.Spec.NodeName, previous, raw)
			}
		}
	}
	events, err := c.client.CoreV1().Events(systemNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing events: %v", err)
		return
	}
	var lines []string
	for _, e := range events.Items {
		lines = append(lines, fmt.Sprintf("%s %s %s/%s %s: %s", e.LastTimestamp.Format(time.TimeOnly), e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message))
	}
	slices.Sort(lines)
	t.Logf("--- events in %s ---\n%s", systemNS, strings.Join(lines, "\n"))
}

// TestSetImage runs without a cluster: the image swap must hit the control
// plane, the bootstrap init container and the authorisation service beside
// Envoy, and Envoy on its own.
func TestSetImage(t *testing.T) {
	objs := renderDeploy(t)
	images := func() []string {
		var out []string
		for _, obj := range objs {
			for _, field := range []string{"initContainers", "containers"} {
				list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", field)
				for _, c := range list {
					out = append(out, c.(map[string]any)["image"].(string))
				}
			}
		}
		slices.Sort(out)
		return out
	}
	if n := setImage(objs, baseImage, "ingress-xds:test"); n != 3 {
		t.Fatalf("replaced %d images, want 3", n)
	}
	if got, want := images(), []string{"envoyproxy/envoy:v1.40.0", "ingress-xds:test", "ingress-xds:test", "ingress-xds:test"}; !slices.Equal(got, want) {
		t.Errorf("images %v, want %v", got, want)
	}
	if n := setImage(objs, envoyImage, "ingress-xds-envoy:test"); n != 1 {
		t.Fatalf("replaced %d Envoy images, want 1", n)
	}
	if got, want := images(), []string{"ingress-xds-envoy:test", "ingress-xds:test", "ingress-xds:test", "ingress-xds:test"}; !slices.Equal(got, want) {
		t.Errorf("images %v, want %v", got, want)
	}
	httpPort, httpsPort, err := envoyHostPorts(objs)
	if err != nil {
		t.Fatal(err)
	}
	if httpPort != "80" || httpsPort != "443" {
		t.Errorf("envoy's host ports %s and %s, want deploy/envoy.yaml's 80 and 443", httpPort, httpsPort)
	}
}

// TestCafeIngress runs without a cluster: the shared cafe Ingress must
// decode into the object the subtests create and edit, whose second rule
// (tea.example.com) testTLS and testFailover reuse for their own hosts.
func TestCafeIngress(t *testing.T) {
	ing := cafeIngress(t, "tea")
	if ing.Namespace != appNS || ing.Name != "cafe" || ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "ingress-xds" {
		t.Fatalf("cafe Ingress %s/%s of class %v, want %s/cafe of class ingress-xds", ing.Namespace, ing.Name, ing.Spec.IngressClassName, appNS)
	}
	var hosts []string
	for _, r := range ing.Spec.Rules {
		hosts = append(hosts, r.Host)
	}
	if want := []string{"cafe.example.com", "tea.example.com", "*.cafe.example.com"}; !slices.Equal(hosts, want) {
		t.Fatalf("hosts %v, want %v", hosts, want)
	}
	coffee := ing.Spec.Rules[0].HTTP.Paths[0]
	if b := coffee.Backend.Service; coffee.Path != "/coffee" || b == nil || b.Name != "tea" || b.Port.Name != "http" {
		t.Errorf("/coffee goes to %+v, want tea's port http", coffee.Backend)
	}
}
