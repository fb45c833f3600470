package kind

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// request is one thing a ServiceAccount may or may not do: resource is
// "resource" or "resource/subresource"; namespace "" is cluster-wide (every
// namespace, or a cluster-scoped resource).
type request struct {
	group, resource, verb, namespace, name string
}

func (r request) String() string {
	group := r.group
	if group == "" {
		group = "core"
	}
	where := "cluster-wide"
	if r.namespace != "" {
		where = "in " + r.namespace
	}
	if r.name != "" {
		where += " named " + r.name
	}
	return fmt.Sprintf("%s %s/%s %s", r.verb, group, r.resource, where)
}

// rbacResources are what the matrix asks about: what the control plane
// touches, and what it must not (workloads, RBAC itself).
var rbacResources = []struct {
	group, resource string
	clusterScoped   bool
}{
	{"", "pods", false}, {"", "services", false}, {"", "secrets", false}, {"", "configmaps", false},
	{"", "endpoints", false}, {"", "events", false}, {"", "serviceaccounts", false},
	{"", "nodes", true}, {"", "namespaces", true},
	{"networking.k8s.io", "ingresses", false}, {"networking.k8s.io", "ingresses/status", false},
	{"networking.k8s.io", "ingressclasses", true},
	{"discovery.k8s.io", "endpointslices", false},
	{"coordination.k8s.io", "leases", false},
	{"events.k8s.io", "events", false},
	{"apps", "deployments", false}, {"apps", "daemonsets", false},
	{"rbac.authorization.k8s.io", "roles", false}, {"rbac.authorization.k8s.io", "rolebindings", false},
	{"rbac.authorization.k8s.io", "clusterroles", true},
}

var rbacVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// testRBAC asks the cluster's authorizer (SubjectAccessReviews, as
// `kubectl auth can-i --as` does) about every verb on the resources above
// in every namespace that matters, as the control plane's ServiceAccount:
// the answer must be yes exactly where deploy/rbac.yaml grants it (which
// deploy/apiserver_test.go proves the control plane uses, all of it, from
// a real API server's audit log), so that nothing else in the cluster (a
// default binding, an aggregated role) gives it more, and no grant is
// missing. The Envoy pods' ServiceAccount (default) may do none of it.
func (c *cluster) testRBAC(t *testing.T) {
	const sa = "ingress-xds"
	clusterRules, namespaced := grantedRules(c.objs, systemNS, sa)
	if len(clusterRules) == 0 || len(namespaced[systemNS]) == 0 {
		t.Fatalf("deploy/ binds no ClusterRole or no Role in %s to the ServiceAccount %s", systemNS, sa)
	}
	var asked, allowed int
	for _, r := range rbacRequests() {
		want := allows(clusterRules, r) || (r.namespace != "" && allows(namespaced[r.namespace], r))
		got, err := c.canI(systemNS, sa, r)
		if err != nil {
			t.Fatal(err)
		}
		asked++
		if got {
			allowed++
		}
		switch {
		case got && !want:
			t.Errorf("%s can %s, which deploy/rbac.yaml does not grant", sa, r)
		case !got && want:
			t.Errorf("%s cannot %s, which deploy/rbac.yaml grants", sa, r)
		}
		if got, err := c.canI(systemNS, "default", r); err != nil {
			t.Fatal(err)
		} else if got {
			t.Errorf("the Envoys' ServiceAccount (default) can %s", r)
		}
	}
	t.Logf("asked the authorizer %d questions for each ServiceAccount: %s may do %d of them, default none", asked, sa, allowed)
}

// rbacRequests is the matrix: each resource, verb and namespace (ours, the
// cafe's, kube-system's and cluster-wide), and the leader Lease by its name
// and by another.
func rbacRequests() []request {
	var out []request
	for _, res := range rbacResources {
		namespaces := []string{"", systemNS, appNS, "kube-system"}
		if res.clusterScoped {
			namespaces = []string{""}
		}
		for _, ns := range namespaces {
			for _, v := range rbacVerbs {
				out = append(out, request{group: res.group, resource: res.resource, verb: v, namespace: ns})
			}
		}
	}
	for _, name := range []string{"ingress-xds-leader", "another-lease"} {
		for _, v := range rbacVerbs {
			out = append(out, request{group: "coordination.k8s.io", resource: "leases", verb: v, namespace: systemNS, name: name})
		}
	}
	return out
}

// canI asks the authorizer whether ServiceAccount ns/name may make r.
func (c *cluster) canI(ns, name string, r request) (bool, error) {
	resource, sub, _ := strings.Cut(r.resource, "/")
	review, err := c.client.AuthorizationV1().SubjectAccessReviews().Create(c.ctx(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + ns + ":" + name,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: r.namespace, Verb: r.verb, Group: r.group, Resource: resource, Subresource: sub, Name: r.name,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("can %s:%s %s: %w", ns, name, r, err)
	}
	return review.Status.Allowed, nil
}

// grantedRules reads deploy/'s bindings of the ServiceAccount ns/sa: the
// rules of the ClusterRoles bound cluster-wide, and those of the Roles (or
// ClusterRoles) bound in each namespace.
func grantedRules(objs []*unstructured.Unstructured, ns, sa string) (cluster []rbacv1.PolicyRule, namespaced map[string][]rbacv1.PolicyRule) {
	rules := map[string][]rbacv1.PolicyRule{} // "Kind ns/name"
	var bindings []*unstructured.Unstructured
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ClusterRole", "Role":
			var role rbacv1.Role // a ClusterRole's rules decode the same
			if fromUnstructured(obj, &role) == nil {
				rules[obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName()] = role.Rules
			}
		case "ClusterRoleBinding", "RoleBinding":
			bindings = append(bindings, obj)
		}
	}
	namespaced = map[string][]rbacv1.PolicyRule{}
	for _, obj := range bindings {
		var b rbacv1.RoleBinding // a ClusterRoleBinding decodes the same
		if fromUnstructured(obj, &b) != nil {
			continue
		}
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == ns
		}) {
			continue
		}
		refNS := obj.GetNamespace()
		if b.RoleRef.Kind == "ClusterRole" {
			refNS = ""
		}
		r := rules[b.RoleRef.Kind+" "+refNS+"/"+b.RoleRef.Name]
		if obj.GetKind() == "ClusterRoleBinding" {
			cluster = append(cluster, r...)
		} else {
			namespaced[obj.GetNamespace()] = append(namespaced[obj.GetNamespace()], r...)
		}
	}
	return cluster, namespaced
}

// allows is RBAC's rule matching: group, resource (with subresource) and
// verb each listed or "*", and the name listed when the rule names any.
func allows(rules []rbacv1.PolicyRule, r request) bool {
	in := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, rule := range rules {
		if in(rule.APIGroups, r.group) && in(rule.Resources, r.resource) && in(rule.Verbs, r.verb) &&
			(len(rule.ResourceNames) == 0 || (r.name != "" && slices.Contains(rule.ResourceNames, r.name))) {
			return true
		}
	}
	return false
}

// TestGrantedRules runs without a cluster: the matrix's expectations come
// from deploy/'s bindings, which must give the ServiceAccount its
// ClusterRole and its Role, and name the leader Lease.
func TestGrantedRules(t *testing.T) {
	objs := renderDeploy(t)
	clusterRules, namespaced := grantedRules(objs, systemNS, "ingress-xds")
	for _, tc := range []struct {
		r    request
		want bool
	}{
		{request{"networking.k8s.io", "ingresses", "watch", "", ""}, true},
		{request{"networking.k8s.io", "ingresses/status", "patch", appNS, ""}, true},
		{request{"networking.k8s.io", "ingresses", "update", appNS, ""}, false},
		{request{"", "secrets", "get", appNS, ""}, false},
		{request{"", "pods", "list", systemNS, ""}, true},
		{request{"", "pods", "list", appNS, ""}, false},
		{request{"coordination.k8s.io", "leases", "update", systemNS, "ingress-xds-leader"}, true},
		{request{"coordination.k8s.io", "leases", "update", systemNS, ""}, false},
		{request{"coordination.k8s.io", "leases", "update", systemNS, "another-lease"}, false},
	} {
		got := allows(clusterRules, tc.r) || (tc.r.namespace != "" && allows(namespaced[tc.r.namespace], tc.r))
		if got != tc.want {
			t.Errorf("%s: allowed %v, want %v", tc.r, got, tc.want)
		}
	}
}

// testNothingForbidden reads the whole log of every running control plane
// replica (the ones that served through the failover and the rollout):
// none may mention a request the API server refused.
func (c *cluster) testNothingForbidden(t *testing.T) {
	// The replica that replaced the failed-over leader may still be
	// starting: its log exists once it runs.
	framework.Eventually(t, rollout, "the control plane rolled out", func() error {
		return deploymentReady(c.ctx(), c.client, systemNS, "ingress-xds")
	})
	pods, err := c.client.CoreV1().Pods(systemNS).List(c.ctx(), metav1.ListOptions{LabelSelector: controlPlaneLabel})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatal("no control plane pod")
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue // an old replica on its way out of the rollout
		}
		var raw []byte
		gone := false
		framework.Eventually(t, converge, "the log of "+p.Name, func() (err error) {
			raw, err = c.client.CoreV1().Pods(systemNS).GetLogs(p.Name, &corev1.PodLogOptions{Container: "ingress-xds"}).DoRaw(c.ctx())
			if apierrors.IsNotFound(err) {
				// Deleted since the listing: no longer running.
				gone, err = true, nil
			}
			return err
		})
		if gone {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(strings.ToLower(line), "forbidden") {
				t.Errorf("%s: %s", p.Name, line)
			}
		}
	}
}
