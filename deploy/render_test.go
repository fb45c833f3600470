package deploy

// The tests of deploy/ check the manifests: rendered by kustomize, checked
// for consistency with each other and with the binary's flags, applied to a
// real API server, and run as the ServiceAccount they define.

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestMain(m *testing.M) { os.Exit(framework.Main(m)) }

// render renders this directory as `kubectl apply -k deploy/` would.
func render(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Render(".")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// manifests is the rendered deploy/ as typed objects.
type manifests struct {
	all            []*unstructured.Unstructured
	namespace      *corev1.Namespace
	serviceAccount *corev1.ServiceAccount
	clusterRole    *rbacv1.ClusterRole
	role           *rbacv1.Role
	clusterBinding *rbacv1.ClusterRoleBinding
	roleBinding    *rbacv1.RoleBinding
	controlPlane   *appsv1.Deployment
	xdsService     *corev1.Service
	envoy          *appsv1.DaemonSet
	ingressClass   *networkingv1.IngressClass
}

func load(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{all: render(t)}
	for _, u := range m.all {
		var target any
		switch u.GetKind() {
		case "Namespace":
			m.namespace = &corev1.Namespace{}
			target = m.namespace
		case "ServiceAccount":
			m.serviceAccount = &corev1.ServiceAccount{}
			target = m.serviceAccount
		case "ClusterRole":
			m.clusterRole = &rbacv1.ClusterRole{}
			target = m.clusterRole
		case "Role":
			m.role = &rbacv1.Role{}
			target = m.role
		case "ClusterRoleBinding":
			m.clusterBinding = &rbacv1.ClusterRoleBinding{}
			target = m.clusterBinding
		case "RoleBinding":
			m.roleBinding = &rbacv1.RoleBinding{}
			target = m.roleBinding
		case "Deployment":
			m.controlPlane = &appsv1.Deployment{}
			target = m.controlPlane
		case "Service":
			m.xdsService = &corev1.Service{}
			target = m.xdsService
		case "DaemonSet":
			m.envoy = &appsv1.DaemonSet{}
			target = m.envoy
		case "IngressClass":
			m.ingressClass = &networkingv1.IngressClass{}
			target = m.ingressClass
		default:
			t.Fatalf("unexpected object in deploy/: %s %s", u.GetKind(), u.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, target, true); err != nil {
			t.Fatalf("%s %s does not decode strictly (a misspelt field?): %v", u.GetKind(), u.GetName(), err)
		}
	}
	for name, missing := range map[string]bool{
		"Namespace": m.namespace == nil, "ServiceAccount": m.serviceAccount == nil,
		"ClusterRole": m.clusterRole == nil, "Role": m.role == nil,
		"ClusterRoleBinding": m.clusterBinding == nil, "RoleBinding": m.roleBinding == nil,
		"Deployment": m.controlPlane == nil, "Service": m.xdsService == nil,
		"DaemonSet": m.envoy == nil, "IngressClass": m.ingressClass == nil,
	} {
		if missing {
			t.Fatalf("deploy/ renders no %s", name)
		}
	}
	return m
}

func container(t *testing.T, spec corev1.PodSpec, name string, init bool) corev1.Container {
	t.Helper()
	list := spec.Containers
	if init {
		list = spec.InitContainers
	}
	for _, c := range list {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %q", name)
	return corev1.Container{}
}

// flagValue returns the value of --name=value in args, the last one winning
// as with Go's flag package.
func flagValue(args []string, name string) (string, bool) {
	value, found := "", false
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			value, found = v, true
		}
	}
	return value, found
}

// script returns the bash script of an exec handler (bash -c SCRIPT).
func script(t *testing.T, what string, exec *corev1.ExecAction) string {
	t.Helper()
	if exec == nil || len(exec.Command) != 3 || exec.Command[0] != "/bin/bash" || exec.Command[1] != "-c" {
		t.Fatalf("%s is not `/bin/bash -c SCRIPT`: %+v", what, exec)
	}
	return exec.Command[2]
}

func hasAll(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}
