package deploy

// The Helm chart (deploy/helm/ingress-xds): linted, rendered, compared with
// the kustomize base, its args checked against the binary's flags, and
// applied to a real API server. helm comes from the Go module proxy through
// hack/install-tools.sh, as make tools installs it.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

const chartDir = "helm/ingress-xds"

// releaseLabels are the labels the chart adds to every object, and only
// the chart: which chart and release made it.
var releaseLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"}

// helmBinary installs helm with the project's script (nothing when it is
// there already) and returns its path.
func helmBinary(t *testing.T) string {
	t.Helper()
	framework.Heavy(t)
	root := framework.RepoRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "hack", "install-tools.sh"), "helm")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/install-tools.sh helm: %v\n%s", err, out)
	}
	return filepath.Join(root, ".tools", "bin", "helm")
}

func runHelm(t *testing.T, helm string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(helm, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// helmTemplate renders the chart as release ingress-xds in namespace with
// the values given as --set-json pairs (name=JSON).
func helmTemplate(t *testing.T, helm, namespace string, values ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "ingress-xds", chartDir, "--namespace", namespace}
	for _, v := range values {
		args = append(args, "--set-json", v)
	}
	return decodeDocuments(t, runHelm(t, helm, args...))
}

func decodeDocuments(t *testing.T, manifest []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if string(js) == "null" {
			continue // a document of comments only
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		out = append(out, u)
	}
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			var typed T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &typed, true); err != nil {
				t.Fatalf("%s does not decode strictly: %v", objectKey(u), err)
			}
			return &typed
		}
	}
	return nil
}

// TestHelmChart: helm lint passes; with its defaults the chart renders the
// kustomize base's objects, field for field (less the Namespace, which helm
// leaves to --create-namespace, and the chart's release labels), and
// deploy/gateway-api's (no cluster to ask: installCRDs auto); the values
// an ingress-nginx chart user knows do what they say there; the
// control plane's arguments are flags the binary has; and every rendering
// is accepted by a real API server's server-side apply.
func TestHelmChart(t *testing.T) {
	helm := helmBinary(t)
	runHelm(t, helm, "lint", "--strict", chartDir)
	runHelm(t, helm, "lint", "--strict", chartDir, "--set", "controller.kind=Deployment")

	base, err := Render(".")
	if err != nil {
		t.Fatal(err)
	}
	ns := base[0].GetName()
	if base[0].GetKind() != "Namespace" {
		t.Fatalf("the kustomize base renders %s first, not its Namespace", objectKey(base[0]))
	}
	chart := helmTemplate(t, helm, ns)
	t.Run("defaults render the kustomize base", func(t *testing.T) { sameAsKustomize(t, chart, base) })
	t.Run("gatewayAPI.ownAddresses renders deploy/gateway-own-addresses", func(t *testing.T) {
		// deploy/ with the component, as the component's comment says.
		dir := t.TempDir()
		abs, err := filepath.Abs(".")
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(dir, abs) // kustomize takes no absolute root
		if err != nil {
			t.Fatal(err)
		}
		kustomization := "resources: [" + rel + "]\ncomponents: [" + filepath.Join(rel, "gateway-own-addresses") + "]\n"
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
			t.Fatal(err)
		}
		own, err := Render(dir)
		if err != nil {
			t.Fatal(err)
		}
		sameAsKustomize(t, helmTemplate(t, helm, ns, "gatewayAPI.ownAddresses.enabled=true"), own)
	})

	// What an ingress-nginx chart user would set: Envoy as a Deployment
	// behind a LoadBalancer Service, the controller ConfigMap, scheduling
	// and resources, the class flags.
	variant := helmTemplate(t, helm, "web",
		`controller.kind="Deployment"`,
		`controller.replicaCount=3`,
		`controller.service={"annotations":{"lb.example.com/internal":"true"},"externalTrafficPolicy":"Local"}`,
		`controller.config={"proxy-body-size":"8m","ssl-redirect":false,"hsts-max-age":600}`,
		`controller.nodeSelector={"role":"edge"}`,
		`controller.tolerations=[{"key":"edge","operator":"Exists","effect":"NoSchedule"}]`,
		`controller.resources={"requests":{"cpu":"2","memory":"1Gi"}}`,
		`controller.watchIngressWithoutClass=true`,
		`controller.metrics.enabled=true`,
		`controller.ingressClassResource.default=true`,
		`controller.extraArgs={"holdoff":"200ms","enable-ssl-passthrough":"","trusted-forwarded-hops":1,"route-scopes":"0","on-demand-clusters":"false"}`,
		`controller.deltaXDS=false`,
		`controlPlane.nodeSelector={"role":"control"}`,
		`controlPlane.replicaCount=3`,
	)
	// controller.addHeaders and controller.proxySetHeaders, as
	// ingress-nginx's chart takes them (its
	// controller-configmap-addheaders.yaml and -proxyheaders.yaml): a
	// ConfigMap each, named by the controller ConfigMap, which the
	// control plane reads.
	headers := helmTemplate(t, helm, "web",
		`controller.addHeaders={"X-Frame-Options":"SAMEORIGIN"}`,
		`controller.proxySetHeaders={"X-Using-Nginx-Controller":true}`)
	t.Run("addHeaders and proxySetHeaders", func(t *testing.T) {
		config := find[corev1.ConfigMap](t, headers, "ConfigMap", "ingress-xds-config")
		if config == nil || !maps.Equal(config.Data, map[string]string{
			"add-headers": "web/ingress-xds-custom-add-headers", "proxy-set-headers": "web/ingress-xds-custom-proxy-headers"}) {
			t.Errorf("the controller ConfigMap: %+v", config)
		}
		for name, want := range map[string]map[string]string{
			"ingress-xds-custom-add-headers":   {"X-Frame-Options": "SAMEORIGIN"},
			"ingress-xds-custom-proxy-headers": {"X-Using-Nginx-Controller": "true"},
		} {
			if cm := find[corev1.ConfigMap](t, headers, "ConfigMap", name); cm == nil || !maps.Equal(cm.Data, want) {
				t.Errorf("ConfigMap %s: %+v, want data %v", name, cm, want)
			}
		}
		cp := find[appsv1.Deployment](t, headers, "Deployment", "ingress-xds")
		if args := container(t, cp.Spec.Template.Spec, "ingress-xds", false).Args; !slices.Contains(args, "--configmap=web/ingress-xds-config") {
			t.Errorf("args %q lack --configmap", args)
		}
	})
	t.Run("values of ingress-nginx's chart", func(t *testing.T) {
		envoy := find[appsv1.Deployment](t, variant, "Deployment", "envoy")
		if envoy == nil || find[appsv1.DaemonSet](t, variant, "DaemonSet", "envoy") != nil {
			t.Fatal("controller.kind=Deployment: want an Envoy Deployment and no DaemonSet")
		}
		pod := envoy.Spec.Template.Spec
		if *envoy.Spec.Replicas != 3 || pod.NodeSelector["role"] != "edge" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "edge" {
			t.Errorf("Envoy Deployment: replicas %d, nodeSelector %v, tolerations %v", *envoy.Spec.Replicas, pod.NodeSelector, pod.Tolerations)
		}
		proxy := container(t, pod, "envoy", false)
		if proxy.Resources.Requests.Cpu().String() != "2" || proxy.Resources.Requests.Memory().String() != "1Gi" {
			t.Errorf("Envoy resources %+v", proxy.Resources)
		}
		for _, p := range proxy.Ports {
			if p.HostPort != 0 {
				t.Errorf("Envoy Deployment binds host port %d", p.HostPort)
			}
		}
		boot := container(t, pod, "bootstrap", true)
		if v, _ := flagValue(boot.Args, "xds-address"); v != "ingress-xds.web.svc:18000" {
			t.Errorf("bootstrap --xds-address=%s, want the Service of the release's namespace", v)
		}
		if !slices.Contains(boot.Args, "--delta=false") {
			t.Errorf("bootstrap args %q lack --delta=false (controller.deltaXDS=false)", boot.Args)
		}
		svc := find[corev1.Service](t, variant, "Service", "envoy")
		if svc == nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
			svc.Annotations["lb.example.com/internal"] != "true" || svc.Spec.Selector["app.kubernetes.io/name"] != envoy.Spec.Template.Labels["app.kubernetes.io/name"] {
			t.Fatalf("Envoy's Service: %+v", svc)
		}
		var targets []string
		for _, p := range svc.Spec.Ports {
			targets = append(targets, fmt.Sprintf("%d>%s", p.Port, p.TargetPort.String()))
		}
		if strings.Join(targets, ",") != "80>http,443>https" {
			t.Errorf("Envoy's Service ports %v, want 80 to http and 443 to https", targets)
		}

		cp := find[appsv1.Deployment](t, variant, "Deployment", "ingress-xds")
		if *cp.Spec.Replicas != 3 || cp.Spec.Template.Spec.NodeSelector["role"] != "control" {
			t.Errorf("control plane: replicas %d, nodeSelector %v", *cp.Spec.Replicas, cp.Spec.Template.Spec.NodeSelector)
		}
		args := container(t, cp.Spec.Template.Spec, "ingress-xds", false).Args
		if v, _ := flagValue(args, "envoy-service"); v != "web/envoy" {
			t.Errorf("--envoy-service=%q, want web/envoy: status from the Service in front of the Envoys", v)
		}
		if _, ok := flagValue(args, "envoy-selector"); ok {
			t.Errorf("--envoy-selector with Envoy behind a Service: %q", args)
		}
		for _, want := range []string{"--watch-ingress-without-class", "--holdoff=200ms", "--enable-ssl-passthrough", "--trusted-forwarded-hops=1", "--route-scopes=0", "--on-demand-clusters=false", "--configmap=web/ingress-xds-config"} {
			if !slices.Contains(args, want) {
				t.Errorf("args %q lack %s (watchIngressWithoutClass, extraArgs)", args, want)
			}
		}

		config := find[corev1.ConfigMap](t, variant, "ConfigMap", "ingress-xds-config")
		if config == nil || !maps.Equal(config.Data, map[string]string{"proxy-body-size": "8m", "ssl-redirect": "false", "hsts-max-age": "600"}) {
			t.Errorf("controller.config as the ConfigMap: %+v", config)
		}
		if find[corev1.ConfigMap](t, chart, "ConfigMap", "ingress-xds-config") != nil {
			t.Error("an empty controller.config renders a ConfigMap")
		}
		class := find[networkingv1.IngressClass](t, variant, "IngressClass", "ingress-xds")
		if class == nil || class.Annotations["ingressclass.kubernetes.io/is-default-class"] != "true" {
			t.Errorf("ingressClassResource.default: %+v", class)
		}
	})

	// Taking over ingress-nginx's class: it exists (ingress-nginx's
	// release made it), so the chart makes none, and serves it.
	adopt := helmTemplate(t, helm, ns,
		`controller.ingressClassResource={"enabled":false,"name":"nginx","controllerValue":"k8s.io/ingress-nginx"}`)
	t.Run("adopting ingress-nginx's class", func(t *testing.T) {
		for _, u := range adopt {
			if u.GetKind() == "IngressClass" {
				t.Errorf("ingressClassResource.enabled=false renders %s", objectKey(u))
			}
		}
		args := container(t, find[appsv1.Deployment](t, adopt, "Deployment", "ingress-xds").Spec.Template.Spec, "ingress-xds", false).Args
		class, _ := flagValue(args, "ingress-class")
		controller, _ := flagValue(args, "controller-class")
		if class != "nginx" || controller != "k8s.io/ingress-nginx" {
			t.Errorf("--ingress-class=%s --controller-class=%s, want nginx and k8s.io/ingress-nginx", class, controller)
		}
	})

	// The class the chart makes is the class the control plane serves.
	for name, objs := range map[string][]*unstructured.Unstructured{"defaults": chart, "variant": variant} {
		class := find[networkingv1.IngressClass](t, objs, "IngressClass", "ingress-xds")
		args := container(t, find[appsv1.Deployment](t, objs, "Deployment", "ingress-xds").Spec.Template.Spec, "ingress-xds", false).Args
		if v, _ := flagValue(args, "controller-class"); class == nil || v != class.Spec.Controller {
			t.Errorf("%s: --controller-class=%s, the IngressClass's controller %+v", name, v, class)
		}
	}

	// Prometheus finds the control plane as ingress-nginx's chart lets it
	// find the controller: the pods' prometheus.io annotations name the
	// port called metrics, and controlPlane.metrics.serviceMonitor adds a
	// Service of that port and a ServiceMonitor of it (off by default:
	// its CRD is the Prometheus Operator's).
	t.Run("metrics scrape conventions", func(t *testing.T) {
		pod := find[appsv1.Deployment](t, chart, "Deployment", "ingress-xds").Spec.Template
		port := ""
		for _, p := range container(t, pod.Spec, "ingress-xds", false).Ports {
			if p.Name == "metrics" {
				port = fmt.Sprint(p.ContainerPort)
			}
		}
		if a := pod.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != port || port == "" {
			t.Errorf("pod annotations %v, metrics port %q", a, port)
		}
		for _, u := range chart {
			if u.GetKind() == "ServiceMonitor" {
				t.Errorf("a ServiceMonitor by default: %s", objectKey(u))
			}
		}
		monitored := helmTemplate(t, helm, ns, `controlPlane.metrics.serviceMonitor={"enabled":true,"additionalLabels":{"release":"prom"},"scrapeInterval":"15s"}`)
		svc := find[corev1.Service](t, monitored, "Service", "ingress-xds-metrics")
		var sm *unstructured.Unstructured
		for _, u := range monitored {
			if u.GetKind() == "ServiceMonitor" {
				sm = u
			}
		}
		if svc == nil || sm == nil {
			t.Fatalf("serviceMonitor.enabled renders Service %v, ServiceMonitor %v", svc, sm)
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" ||
			svc.Spec.Selector["app.kubernetes.io/name"] != pod.Labels["app.kubernetes.io/name"] {
			t.Errorf("metrics Service %+v", svc.Spec)
		}
		selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		for k, v := range selector {
			if svc.Labels[k] != v {
				t.Errorf("the ServiceMonitor selects %v, the Service has %v", selector, svc.Labels)
			}
		}
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" || endpoints[0].(map[string]any)["interval"] != "15s" ||
			sm.GetLabels()["release"] != "prom" {
			t.Errorf("ServiceMonitor %v", sm.Object)
		}
	})

	// controller.metrics, as ingress-nginx's chart's: the request
	// metrics on, served by the authz container beside each Envoy on the
	// port called metrics, which the Envoy pods' prometheus.io
	// annotations name; off by default.
	t.Run("request metrics", func(t *testing.T) {
		if pod := find[appsv1.DaemonSet](t, chart, "DaemonSet", "envoy").Spec.Template; pod.Annotations["prometheus.io/scrape"] != "" {
			t.Errorf("the Envoy pods are scraped by default: %v", pod.Annotations)
		}
		on := helmTemplate(t, helm, ns, `controller.metrics={"enabled":true,"port":10254}`, `controller.podAnnotations={"team":"edge"}`)
		pod := find[appsv1.DaemonSet](t, on, "DaemonSet", "envoy").Spec.Template
		authz := container(t, pod.Spec, "authz", false)
		port := ""
		for _, p := range authz.Ports {
			if p.Name == "metrics" {
				port = fmt.Sprint(p.ContainerPort)
			}
		}
		if a := pod.Annotations; port != "10254" || a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != port || a["team"] != "edge" {
			t.Errorf("Envoy pod annotations %v, authz metrics port %q", a, port)
		}
		if !slices.Contains(authz.Args, "--metrics-address=:10254") {
			t.Errorf("authz args %v", authz.Args)
		}
		env := map[string]string{}
		for _, e := range authz.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env[e.Name] = e.ValueFrom.FieldRef.FieldPath
			}
		}
		if env["POD_NAME"] != "metadata.name" || env["POD_NAMESPACE"] != "metadata.namespace" {
			t.Errorf("authz env %v", authz.Env)
		}
		cp := find[appsv1.Deployment](t, on, "Deployment", "ingress-xds").Spec.Template
		if args := container(t, cp.Spec, "ingress-xds", false).Args; !slices.Contains(args, "--request-metrics") {
			t.Errorf("serve args %v", args)
		}
		// ingress-nginx's metric flags in controller.extraArgs, where its
		// chart takes them (its values.yaml's time-buckets example), go
		// to authz, which counts the metrics; serve, which would refuse
		// them, gets the others.
		flagged := helmTemplate(t, helm, ns, `controller.metrics.enabled=true`,
			`controller.extraArgs={"metrics-per-host":false,"report-status-classes":"","exclude-socket-metrics":"nginx_ingress_controller_bytes_sent","time-buckets":"0.1,1","holdoff":"200ms"}`)
		authzArgs := container(t, find[appsv1.DaemonSet](t, flagged, "DaemonSet", "envoy").Spec.Template.Spec, "authz", false).Args
		serveArgs := container(t, find[appsv1.Deployment](t, flagged, "Deployment", "ingress-xds").Spec.Template.Spec, "ingress-xds", false).Args
		for _, want := range []string{"--metrics-per-host=false", "--report-status-classes", "--exclude-socket-metrics=nginx_ingress_controller_bytes_sent", "--time-buckets=0.1,1"} {
			if !slices.Contains(authzArgs, want) || slices.Contains(serveArgs, want) {
				t.Errorf("%s: authz args %v, serve args %v", want, authzArgs, serveArgs)
			}
		}
		if !slices.Contains(serveArgs, "--holdoff=200ms") || slices.Contains(authzArgs, "--holdoff=200ms") {
			t.Errorf("serve args %v, authz args %v", serveArgs, authzArgs)
		}
		for _, u := range on {
			if u.GetKind() == "ServiceMonitor" {
				t.Errorf("a ServiceMonitor without serviceMonitor.enabled: %s", objectKey(u))
			}
		}
		monitored := helmTemplate(t, helm, ns, `controller.metrics={"enabled":true,"port":10254,"serviceMonitor":{"enabled":true,"additionalLabels":{"release":"prom"},"scrapeInterval":"15s"}}`)
		svc := find[corev1.Service](t, monitored, "Service", "envoy-metrics")
		var sm *unstructured.Unstructured
		for _, u := range monitored {
			if u.GetKind() == "ServiceMonitor" && u.GetName() == "envoy" {
				sm = u
			}
		}
		if svc == nil || sm == nil {
			t.Fatalf("controller.metrics.serviceMonitor.enabled renders Service %v, ServiceMonitor %v", svc, sm)
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" ||
			svc.Spec.Selector["app.kubernetes.io/name"] != pod.Labels["app.kubernetes.io/name"] {
			t.Errorf("envoy-metrics Service %+v", svc.Spec)
		}
		selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		for k, v := range selector {
			if svc.Labels[k] != v {
				t.Errorf("the ServiceMonitor selects %v, the Service has %v", selector, svc.Labels)
			}
		}
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" || endpoints[0].(map[string]any)["interval"] != "15s" ||
			sm.GetLabels()["release"] != "prom" {
			t.Errorf("ServiceMonitor %v", sm.Object)
		}
	})

	// Values the chart cannot honour fail the render, rather than be
	// ignored.
	t.Run("values it cannot honour", func(t *testing.T) {
		for _, set := range [][]string{
			{"controller.kind=StatefulSet"},
			{"controller.hostPort.enabled=false"},
			{"controller.kind=Deployment", "controller.hostPort.enabled=true"},
			{"controller.metrics.serviceMonitor.enabled=true"},
		} {
			args := []string{"template", "ingress-xds", chartDir}
			for _, s := range set {
				args = append(args, "--set", s)
			}
			out, err := exec.Command(helm, args...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "controller.") {
				t.Errorf("helm template --set %s: %v, want an error naming the value:\n%.300s", strings.Join(set, " --set "), err, out)
			}
		}
	})

	// Every container of the ingress-xds image (serve, bootstrap, authz,
	// and whatever comes next) is given arguments the binary takes.
	t.Run("args are the binary's flags", func(t *testing.T) {
		bin := framework.IngressXDS(t)
		for name, objs := range map[string][]*unstructured.Unstructured{"defaults": chart, "variant": variant, "adopt": adopt} {
			image := find[appsv1.Deployment](t, objs, "Deployment", "ingress-xds").Spec.Template.Spec.Containers[0].Image
			commands := 0
			for _, u := range objs {
				spec, ok, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
				if !ok {
					continue
				}
				var pod corev1.PodSpec
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &pod); err != nil {
					t.Fatal(err)
				}
				for _, c := range append(pod.InitContainers, pod.Containers...) {
					if c.Image != image {
						continue
					}
					commands++
					// Flags are parsed in order, values included, up to
					// --help: exit 0 means each is a flag of the command
					// with a valid value.
					args := append(expandResourceRefs(c), "--help")
					if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
						t.Errorf("%s: %s's container %s: ingress-xds %s: %v\n%s", name, objectKey(u), c.Name, strings.Join(args, " "), err, out)
					}
				}
			}
			if commands < 2 {
				t.Errorf("%s: %d containers of the image %s, want serve and bootstrap at least", name, commands, image)
			}
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		api := framework.StartAPIServer(t)
		ctx := context.Background()
		for _, namespace := range []string{ns, "web"} {
			if _, err := api.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []struct {
			name string
			objs []*unstructured.Unstructured
		}{{"defaults", chart}, {"variant", variant}, {"adopt", adopt}} {
			for _, dryRun := range []bool{true, false} {
				if err := Apply(ctx, api.Config, r.objs, "helm-test", dryRun); err != nil {
					t.Errorf("%s (dry run %v): %v", r.name, dryRun, err)
				}
			}
		}
		svc, err := api.Client.CoreV1().Services("web").Get(ctx, "envoy", metav1.GetOptions{})
		if err != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			t.Errorf("Envoy's Service after the apply: %v %v", svc, err)
		}
		if _, err := api.Client.AppsV1().DaemonSets(ns).Get(ctx, "envoy", metav1.GetOptions{}); err != nil {
			t.Errorf("Envoy's DaemonSet after the apply: %v", err)
		}
		if _, err := api.Client.CoreV1().ConfigMaps("web").Get(ctx, "ingress-xds-config", metav1.GetOptions{}); err != nil {
			t.Errorf("the controller ConfigMap after the apply: %v", err)
		}
	})
}

// lineDiff lists the lines of want missing from got (-) and of got missing
// from want (+), enough to see what differs between two YAML renderings.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			out = append(out, "+ "+l)
		}
	}
	if len(out) == 0 {
		return "(the same lines, in another order)"
	}
	return strings.Join(out, "\n")
}

// sameAsKustomize checks that a chart's objects are a kustomize
// rendering's (base, its Namespace first), with the release labels aside
// and, with no cluster to ask, Gateway API's CRDs (gatewayAPI.installCRDs:
// auto), deploy/gateway-api's, which TestGatewayAPICRDs compares.
func sameAsKustomize(t *testing.T, chart, base []*unstructured.Unstructured) {
	t.Helper()
	want := map[string]*unstructured.Unstructured{}
	for _, u := range base[1:] {
		want[objectKey(u)] = u
	}
	// And, with no cluster to ask, Gateway API's CRDs
	// (gatewayAPI.installCRDs: auto), deploy/gateway-api's, which
	// TestGatewayAPICRDs compares.
	crds, err := Render("gateway-api")
	if err != nil {
		t.Fatal(err)
	}
	fromCRDs := map[string]bool{}
	for _, u := range crds {
		fromCRDs[objectKey(u)] = true
	}
	got := map[string]*unstructured.Unstructured{}
	for _, u := range chart {
		if fromCRDs[objectKey(u)] {
			delete(fromCRDs, objectKey(u))
			continue
		}
		u = u.DeepCopy()
		labels := u.GetLabels()
		for _, l := range releaseLabels {
			if labels[l] == "" {
				t.Errorf("%s lacks the label %s", objectKey(u), l)
			}
			delete(labels, l)
		}
		if len(labels) == 0 {
			labels = nil
		}
		u.SetLabels(labels)
		got[objectKey(u)] = u
	}
	if len(fromCRDs) > 0 {
		t.Errorf("the chart's defaults render none of %s", strings.Join(slices.Sorted(maps.Keys(fromCRDs)), ", "))
	}
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Fatalf("the chart renders\n  %s\nthe kustomize base\n  %s", strings.Join(g, "\n  "), strings.Join(w, "\n  "))
	}
	for key, w := range want {
		if g := got[key]; !reflect.DeepEqual(g.Object, w.Object) {
			gy, _ := yaml.Marshal(g.Object)
			wy, _ := yaml.Marshal(w.Object)
			t.Errorf("%s differs from the kustomize base's:\n%s", key, lineDiff(string(wy), string(gy)))
		}
	}
}
