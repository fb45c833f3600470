// Package kind runs the end-to-end scenarios on a real cluster made by kind:
// deploy/ as a user applies it, images built from the working tree, Envoy
// reached through its DaemonSet's host ports. run.sh (make e2e-kind) creates
// the cluster and passes it in through the environment; without it the test
// skips, as there is no cluster to test.
package kind

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
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
	systemNS  = "ingress-xds"
	appNS     = "cafe"
	rollout   = 5 * time.Minute // pulls, scheduling, probes: generous
	converge  = 60 * time.Second
)

type cluster struct {
	client    kubernetes.Interface
	http      string // host:port of an Envoy's port 80
	https     string // host:port of the same Envoy's port 443
	echoImage string
}

func TestKind(t *testing.T) {
	kubeconfig := os.Getenv("INGRESS_XDS_KIND_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("needs a kind cluster: run `make e2e-kind` (e2e/kind/run.sh)")
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
		client:    kubernetes.NewForConfigOrDie(cfg),
		http:      env("INGRESS_XDS_KIND_HTTP"),
		https:     env("INGRESS_XDS_KIND_HTTPS"),
		echoImage: env("INGRESS_XDS_KIND_ECHO_IMAGE"),
	}
	image := env("INGRESS_XDS_KIND_IMAGE")
	ctx := t.Context()
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs(t)
		}
	})

	// deploy/ exactly as `kubectl apply -k deploy/` renders it, with our
	// image.
	objs, err := deploy.Render(filepath.Join(framework.RepoRoot(t), "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	if n := setImage(objs, baseImage, image); n != 3 {
		t.Fatalf("replaced %d images of %s in deploy/, want 3 (control plane, bootstrap, authorisation service)", n, baseImage)
	}
	if err := deploy.Apply(ctx, cfg, objs, "ingress-xds-e2e", false); err != nil {
		t.Fatal(err)
	}
	// The xDS certificates, as the install guide has the user make them:
	// the pods wait for these Secrets to start.
	certgen := exec.Command(framework.IngressXDS(t), "certgen", "--kube", "--kubeconfig", kubeconfig, "--namespace", systemNS)
	if out, err := certgen.CombinedOutput(); err != nil {
		t.Fatalf("ingress-xds certgen --kube: %v\n%s", err, out)
	}
	framework.Eventually(t, rollout, "control plane rolled out", func() error {
		return deploymentReady(ctx, c.client, systemNS, "ingress-xds")
	})
	framework.Eventually(t, rollout, "envoy daemonset rolled out", func() error {
		ds, err := c.client.AppsV1().DaemonSets(systemNS).Get(ctx, "envoy", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := ds.Status; s.DesiredNumberScheduled == 0 || s.NumberReady != s.DesiredNumberScheduled || s.UpdatedNumberScheduled != s.DesiredNumberScheduled {
			return fmt.Errorf("envoy: %d of %d ready, %d updated", s.NumberReady, s.DesiredNumberScheduled, s.UpdatedNumberScheduled)
		}
		return nil
	})

	c.deployBackends(t)
	if !t.Run("routing", c.testRouting) {
		return
	}
	t.Run("tls", c.testTLS)
	t.Run("status is the nodes of ready envoys", c.testStatus)
	t.Run("editing an ingress reroutes", c.testReroute)
	t.Run("an envoy that goes away drops its address", c.testEnvoyGoesAway)
	t.Run("leader failover", c.testFailover)
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
					m["imagePullPolicy"] = "IfNotPresent" // loaded by kind, never pulled
					n++
				}
			}
			unstructured.SetNestedSlice(obj.Object, list, path...)
		}
	}
	return n
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
	if s := d.Status; s.AvailableReplicas != want || s.UpdatedReplicas != want || s.ObservedGeneration < d.Generation {
		return fmt.Errorf("%s/%s: %d of %d available, %d updated", ns, name, s.AvailableReplicas, want, s.UpdatedReplicas)
	}
	return nil
}

// deployBackends creates the cafe of both suites (framework.CafeIngressYAML):
// echo backends coffee and tea, a Service with no ready endpoint (empty),
// and the cafe Ingress.
func (c *cluster) deployBackends(t *testing.T) {
	ctx := t.Context()
	create(t, func() error {
		_, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		c.client.CoreV1().Namespaces().Delete(context.Background(), appNS, metav1.DeleteOptions{})
	})
	for _, name := range []string{"coffee", "tea"} {
		create(t, func() error {
			_, err := c.client.AppsV1().Deployments(appNS).Create(ctx, echoDeployment(name, c.echoImage), metav1.CreateOptions{})
			return err
		})
	}
	services := []*corev1.Service{
		service("coffee", "coffee", ""),
		service("tea", "tea", "http"),
		service("empty", "nobody", ""), // selects no pod: no ready endpoint
	}
	for _, svc := range services {
		create(t, func() error {
			_, err := c.client.CoreV1().Services(appNS).Create(ctx, svc, metav1.CreateOptions{})
			return err
		})
	}
	create(t, func() error {
		_, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, cafeIngress(t, "coffee"), metav1.CreateOptions{})
		return err
	})
	for _, name := range []string{"coffee", "tea"} {
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

// testRouting checks the routing table of both suites
// (framework.CafeRoutes), through the Envoy on the first worker's port 80.
func (c *cluster) testRouting(t *testing.T) {
	framework.Eventually(t, converge, "first route served", func() error {
		return framework.Expect(c.http, "cafe.example.com", "/coffee", http.StatusOK, "coffee")
	})
	for _, rc := range framework.CafeRoutes() {
		// Each once, but after the first route the EDS of every cluster may
		// still be on its way: allow a short convergence per case.
		framework.Eventually(t, converge, fmt.Sprintf("GET %s%s", rc.Host, rc.Path), func() error {
			return rc.Send(c.http)
		})
	}
}

// testTLS terminates TLS for secure.example.com on Envoy's port 443 (the
// node's 443), with a certificate from a Secret, and checks it against that
// certificate with SNI.
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
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		Proxy:           nil,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "secure.example.com"},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, c.https)
		},
		DisableKeepAlives: true,
	}}
	framework.Eventually(t, converge, "https://secure.example.com/ answered by tea over verified TLS", func() error {
		resp, err := client.Get("https://secure.example.com/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "tea" {
			return fmt.Errorf("%d from %q", resp.StatusCode, resp.Header.Get("X-Backend"))
		}
		return nil
	})
}

// readyEnvoyHostIPs is what the status should be, worked out independently
// of the control plane: the host IPs of Ready, not terminating Envoy pods
// (kind nodes have no ExternalIP).
func (c *cluster) readyEnvoyHostIPs(ctx context.Context) ([]string, error) {
	pods, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=envoy"})
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.HostIP == "" {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ips = append(ips, p.Status.HostIP)
			}
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips), nil
}

func (c *cluster) statusOf(ctx context.Context, name string) ([]string, error) {
	ing, err := c.client.NetworkingV1().Ingresses(appNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		out = append(out, lb.IP+lb.Hostname)
	}
	slices.Sort(out)
	return out, nil
}

func (c *cluster) statusMatches(ctx context.Context, name string, want []string) error {
	got, err := c.statusOf(ctx, name)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("ingress %s status %v, want %v", name, got, want)
	}
	return nil
}

func (c *cluster) testStatus(t *testing.T) {
	ctx := t.Context()
	want, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 {
		t.Fatalf("envoys ready on %v: want one on each of the two workers", want)
	}
	framework.Eventually(t, converge, fmt.Sprintf("cafe status %v", want), func() error {
		return c.statusMatches(ctx, "cafe", want)
	})
}

func (c *cluster) testReroute(t *testing.T) {
	ctx := t.Context()
	ing, err := c.client.NetworkingV1().Ingresses(appNS).Get(ctx, "cafe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Spec = cafeIngress(t, "tea").Spec
	if _, err := c.client.NetworkingV1().Ingresses(appNS).Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, converge, "/coffee rerouted to tea", func() error {
		return framework.Expect(c.http, "cafe.example.com", "/coffee", http.StatusOK, "tea")
	})
	if err := framework.Expect(c.http, "cafe.example.com", "/tea/menu", http.StatusOK, "coffee"); err != nil {
		t.Errorf("the rest of the ingress after the edit: %v", err)
	}
}

// testEnvoyGoesAway deletes the Envoy on the second worker (the tests'
// traffic goes through the first): its node's address leaves the status as
// soon as the pod terminates, and comes back with its replacement.
func (c *cluster) testEnvoyGoesAway(t *testing.T) {
	ctx := t.Context()
	before, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=envoy"})
	if err != nil {
		t.Fatal(err)
	}
	var victim *corev1.Pod
	for i, p := range pods.Items {
		if strings.HasSuffix(p.Spec.NodeName, "-worker2") {
			victim = &pods.Items[i]
		}
	}
	if victim == nil {
		t.Fatalf("no envoy on the second worker among %d envoy pods", len(pods.Items))
	}
	if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	without := slices.DeleteFunc(slices.Clone(before), func(ip string) bool { return ip == victim.Status.HostIP })
	framework.Eventually(t, converge, fmt.Sprintf("status without %s while its envoy terminates", victim.Status.HostIP), func() error {
		return c.statusMatches(ctx, "cafe", without)
	})
	if err := framework.Expect(c.http, "cafe.example.com", "/tea", http.StatusOK, "tea"); err != nil {
		t.Errorf("traffic through the other envoy: %v", err)
	}
	framework.Eventually(t, rollout, "status back to "+fmt.Sprint(before)+" with the replacement envoy", func() error {
		return c.statusMatches(ctx, "cafe", before)
	})
}

// testFailover deletes the control plane replica that holds the Lease: the
// other takes over (the deleted one releases the Lease as it stops), status
// keeps being written, and Envoy keeps its configuration and gets new
// configuration from the surviving replica.
func (c *cluster) testFailover(t *testing.T) {
	ctx := t.Context()
	leader := func() (string, error) {
		lease, err := c.client.CoordinationV1().Leases(systemNS).Get(ctx, "ingress-xds-leader", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return "", fmt.Errorf("nobody holds the lease")
		}
		pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
		return pod, nil
	}
	var old string
	framework.Eventually(t, converge, "a leader", func() (err error) {
		old, err = leader()
		return err
	})
	if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, converge, "another replica leads", func() error {
		now, err := leader()
		if err == nil && now == old {
			err = fmt.Errorf("%s still leads", old)
		}
		return err
	})
	if err := framework.Expect(c.http, "cafe.example.com", "/tea", http.StatusOK, "tea"); err != nil {
		t.Errorf("traffic during the failover: %v", err)
	}

	late := cafeIngress(t, "coffee")
	late.Name = "late"
	late.Spec.Rules = []networkingv1.IngressRule{{Host: "late.example.com", IngressRuleValue: late.Spec.Rules[1].IngressRuleValue}}
	create(t, func() error {
		_, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, late, metav1.CreateOptions{})
		return err
	})
	framework.Eventually(t, converge, "an ingress created after the failover is routed", func() error {
		return framework.Expect(c.http, "late.example.com", "/", http.StatusOK, "tea")
	})
	want, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, converge, "the new leader writes its status", func() error {
		return c.statusMatches(ctx, "late", want)
	})
}

// dumpLogs prints the tail of the control plane's and Envoy's logs.
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
		for _, ct := range p.Spec.Containers {
			raw, err := c.client.CoreV1().Pods(systemNS).GetLogs(p.Name, &corev1.PodLogOptions{Container: ct.Name, TailLines: &tail}).DoRaw(ctx)
			if err != nil {
				t.Logf("logs of %s/%s: %v", p.Name, ct.Name, err)
				continue
			}
			t.Logf("--- last %d lines of %s/%s (on %s) ---\n%s", tail, p.Name, ct.Name, p.Spec.NodeName, raw)
		}
	}
}

// TestSetImage runs without a cluster: the image swap must hit the control
// plane, the bootstrap init container and the authorisation service beside
// Envoy, and leave Envoy's image alone.
func TestSetImage(t *testing.T) {
	objs, err := deploy.Render(filepath.Join(framework.RepoRoot(t), "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	if n := setImage(objs, baseImage, "ingress-xds:test"); n != 3 {
		t.Fatalf("replaced %d images, want 3", n)
	}
	var images []string
	for _, obj := range objs {
		for _, field := range []string{"initContainers", "containers"} {
			list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", field)
			for _, c := range list {
				images = append(images, c.(map[string]any)["image"].(string))
			}
		}
	}
	slices.Sort(images)
	if want := []string{"envoyproxy/envoy:v1.40.0", "ingress-xds:test", "ingress-xds:test", "ingress-xds:test"}; !slices.Equal(images, want) {
		t.Errorf("images %v, want %v", images, want)
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
