package deploy

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ingress-xds/ingress-xds/kube"
)

// TestManifestsAgreeWithEachOther checks what no API server would: that the
// pieces of deploy/ point at each other (ports, names, labels, the lease),
// and the security settings the issue asks for.
func TestManifestsAgreeWithEachOther(t *testing.T) {
	m := load(t)
	ns := m.namespace.Name

	cp := m.controlPlane
	if cp.Spec.Replicas == nil || *cp.Spec.Replicas != 2 {
		t.Errorf("control plane replicas: %v, want 2", cp.Spec.Replicas)
	}
	if cp.Spec.Template.Spec.ServiceAccountName != m.serviceAccount.Name {
		t.Errorf("control plane runs as %q, not the ServiceAccount %q", cp.Spec.Template.Spec.ServiceAccountName, m.serviceAccount.Name)
	}
	serve := container(t, cp.Spec.Template.Spec, "ingress-xds", false)
	if len(serve.Args) == 0 || serve.Args[0] != "serve" {
		t.Fatalf("control plane args %q do not start with serve", serve.Args)
	}
	portOf := func(c corev1.Container, name string) int32 {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
		t.Fatalf("container %s has no port %q", c.Name, name)
		return 0
	}
	flagPort := func(args []string, flag string) int32 {
		v, ok := flagValue(args, flag)
		if !ok {
			t.Fatalf("no --%s in %q", flag, args)
		}
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			// --http-port=8080 style
			port = v
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			t.Fatalf("--%s=%s: %v", flag, v, err)
		}
		return int32(n)
	}

	// Probes on the metrics port, which is where serve answers them.
	metrics := portOf(serve, "metrics")
	if metrics != 8000 || flagPort(serve.Args, "metrics-address") != metrics {
		t.Errorf("metrics port %d, --metrics-address %d: want both 8000", metrics, flagPort(serve.Args, "metrics-address"))
	}
	for probe, want := range map[*corev1.Probe]string{serve.LivenessProbe: "/healthz", serve.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe %+v: want GET %s on the metrics port", probe, want)
		}
	}

	// The xDS Service reaches serve's --xds-address.
	xds := portOf(serve, "xds")
	if xds != 18000 || flagPort(serve.Args, "xds-address") != xds {
		t.Errorf("xds port %d, --xds-address %d: want both 18000", xds, flagPort(serve.Args, "xds-address"))
	}
	svc := m.xdsService
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 18000 || svc.Spec.Ports[0].TargetPort.String() != "xds" {
		t.Errorf("xDS Service ports %+v: want 18000 to the xds port", svc.Spec.Ports)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(cp.Spec.Template.Labels)) {
		t.Errorf("xDS Service selector %v does not select the control plane pods %v", svc.Spec.Selector, cp.Spec.Template.Labels)
	}

	// Envoy: bootstrapped to reach that Service, node id = pod name.
	ds := m.envoy.Spec.Template.Spec
	boot := container(t, ds, "bootstrap", true)
	if boot.Image != serve.Image {
		t.Errorf("bootstrap image %q differs from the control plane's %q", boot.Image, serve.Image)
	}
	if len(boot.Args) == 0 || boot.Args[0] != "bootstrap" {
		t.Errorf("init container args %q do not start with bootstrap", boot.Args)
	}
	wantXDS := fmt.Sprintf("%s.%s.svc:%d", svc.Name, ns, svc.Spec.Ports[0].Port)
	if v, _ := flagValue(boot.Args, "xds-address"); v != wantXDS {
		t.Errorf("bootstrap --xds-address=%s, want %s", v, wantXDS)
	}
	if v, _ := flagValue(boot.Args, "out"); v != "/config/envoy.json" {
		t.Errorf("bootstrap --out=%s, want /config/envoy.json", v)
	}
	if v, _ := flagValue(boot.Args, "node-id"); v != "$(POD_NAME)" || !envFromField(boot, "POD_NAME", "metadata.name") {
		t.Errorf("bootstrap node id %q: want $(POD_NAME) from metadata.name", v)
	}
	// The overload manager's heap follows the envoy container's limit.
	if v, _ := flagValue(boot.Args, "memory-limit"); v != "$(ENVOY_MEMORY_LIMIT)" || !envFromResource(boot, "ENVOY_MEMORY_LIMIT", "envoy", "limits.memory") {
		t.Errorf("bootstrap --memory-limit=%q: want $(ENVOY_MEMORY_LIMIT) from the envoy container's limits.memory", v)
	}
	admin, _ := flagValue(boot.Args, "admin-address")
	if admin != "127.0.0.1:9901" {
		t.Errorf("bootstrap --admin-address=%s: want 127.0.0.1:9901 (loopback only)", admin)
	}

	envoy := container(t, ds, "envoy", false)
	if envoy.Image != "envoyproxy/envoy:v1.40.0" {
		t.Errorf("envoy image %q, want the pinned envoyproxy/envoy:v1.40.0", envoy.Image)
	}
	if i := slices.Index(envoy.Args, "--config-path"); i < 0 || i+1 == len(envoy.Args) || envoy.Args[i+1] != "/config/envoy.json" {
		t.Errorf("envoy args %q do not load /config/envoy.json", envoy.Args)
	}
	// Host ports 80 and 443 onto the listener ports serve configures.
	hostPorts := map[int32]int32{}
	for _, p := range envoy.Ports {
		hostPorts[p.HostPort] = p.ContainerPort
	}
	if hostPorts[80] != flagPort(serve.Args, "http-port") || hostPorts[443] != flagPort(serve.Args, "https-port") ||
		hostPorts[80] != 8080 || hostPorts[443] != 8443 {
		t.Errorf("envoy host ports %v, serve --http-port %d --https-port %d: want 80->8080 and 443->8443",
			hostPorts, flagPort(serve.Args, "http-port"), flagPort(serve.Args, "https-port"))
	}
	// Readiness and drain go to the admin interface the bootstrap sets up.
	adminTCP := "exec 3<>/dev/tcp/" + strings.Replace(admin, ":", "/", 1)
	if envoy.ReadinessProbe == nil || !strings.Contains(script(t, "readiness probe", envoy.ReadinessProbe.Exec), adminTCP+" ") ||
		!strings.Contains(script(t, "readiness probe", envoy.ReadinessProbe.Exec), "GET /ready ") {
		t.Errorf("envoy readiness probe does not GET /ready from %s", admin)
	}
	if envoy.Lifecycle == nil || envoy.Lifecycle.PreStop == nil ||
		!strings.Contains(script(t, "preStop", envoy.Lifecycle.PreStop.Exec), "/drain_listeners?graceful") ||
		!strings.Contains(script(t, "preStop", envoy.Lifecycle.PreStop.Exec), adminTCP+" ") {
		t.Errorf("envoy preStop does not drain through %s", admin)
	}
	// The control plane finds the Envoy pods by their labels.
	sel, _ := flagValue(serve.Args, "envoy-selector")
	selector, err := labels.Parse(sel)
	if err != nil || selector.Empty() || !selector.Matches(labels.Set(m.envoy.Spec.Template.Labels)) {
		t.Errorf("--envoy-selector=%q (%v) does not select the Envoy pods %v", sel, err, m.envoy.Spec.Template.Labels)
	}
	if !envFromField(serve, "POD_NAMESPACE", "metadata.namespace") || !envFromField(serve, "POD_NAME", "metadata.name") {
		t.Errorf("control plane lacks POD_NAMESPACE and POD_NAME from the downward API (the Envoy namespace, the Lease namespace, the leader identity)")
	}
	// The Role grants get and update on exactly the Lease serve uses.
	id, _ := flagValue(serve.Args, "leader-election-id")
	leaseRule := false
	for _, r := range m.role.Rules {
		if hasAll(r.Resources, "leases") && hasAll(r.Verbs, "get", "update") {
			leaseRule = len(r.ResourceNames) == 1 && r.ResourceNames[0] == id
		}
	}
	if id == "" || !leaseRule {
		t.Errorf("--leader-election-id=%q is not the Lease the Role lets us get and update", id)
	}
	for _, b := range [][]string{subjects(m.clusterBinding.Subjects), subjects(m.roleBinding.Subjects)} {
		if want := "ServiceAccount " + ns + "/" + m.serviceAccount.Name; len(b) != 1 || b[0] != want {
			t.Errorf("binding subjects %v, want [%s]", b, want)
		}
	}
	if m.clusterBinding.RoleRef.Name != m.clusterRole.Name || m.roleBinding.RoleRef.Name != m.role.Name {
		t.Errorf("bindings refer to %s and %s", m.clusterBinding.RoleRef.Name, m.roleBinding.RoleRef.Name)
	}

	if m.ingressClass.Name != kube.DefaultClassName || m.ingressClass.Spec.Controller != kube.DefaultControllerName {
		t.Errorf("IngressClass %s/%s, want %s/%s", m.ingressClass.Name, m.ingressClass.Spec.Controller, kube.DefaultClassName, kube.DefaultControllerName)
	}

	// Non-root everywhere, read-only root filesystems, no privilege.
	for _, pod := range []struct {
		name string
		spec corev1.PodSpec
	}{{"control plane", cp.Spec.Template.Spec}, {"envoy", ds}} {
		psc := pod.spec.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Errorf("%s pods may run as root: %+v", pod.name, psc)
		}
		for _, c := range append(pod.spec.InitContainers, pod.spec.Containers...) {
			sc := c.SecurityContext
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				t.Errorf("%s container %s: want a read-only root filesystem, no privilege escalation, all capabilities dropped: %+v", pod.name, c.Name, sc)
			}
		}
	}
}

// envFromResource says whether c's variable name is container's resource
// (the Downward API's resourceFieldRef).
func envFromResource(c corev1.Container, name, container, resource string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil &&
			e.ValueFrom.ResourceFieldRef.ContainerName == container && e.ValueFrom.ResourceFieldRef.Resource == resource {
			return true
		}
	}
	return false
}

// expandResourceRefs returns c's arguments with each $(VAR) of a
// resourceFieldRef variable replaced as the kubelet does, by a number (1Gi
// in bytes here): the binary is given what it would be given in a pod.
func expandResourceRefs(c corev1.Container) []string {
	args := slices.Clone(c.Args)
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil {
			continue
		}
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "$("+e.Name+")", "1073741824")
		}
	}
	return args
}

func envFromField(c corev1.Container, name, field string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == field {
			return true
		}
	}
	return false
}

func subjects(list []rbacv1.Subject) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Kind+" "+s.Namespace+"/"+s.Name)
	}
	return out
}
