package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
)

const waitLong = 90 * time.Second

// auditedAPIServer is a real kube-apiserver that writes an audit log of every
// request, so a test can list what a client did and what it was refused.
type auditedAPIServer struct {
	config   *rest.Config
	client   kubernetes.Interface
	auditLog string
}

func startAuditedAPIServer(t *testing.T) *auditedAPIServer {
	t.Helper()
	framework.Heavy(t)
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	// With Gateway API's CRDs, so that the control plane watches its kinds
	// and the role's grants on them are exercised.
	api := framework.StartAPIServerWith(t, framework.APIServerOptions{APIServerFlags: map[string]string{
		"audit-policy-file": policy,
		"audit-log-path":    auditLog,
		"audit-log-mode":    "blocking", // every request is in the log before it is answered
	}, CRDs: []string{framework.GatewayAPICRDs(t)}})
	cfg := api.Config
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	return &auditedAPIServer{config: cfg, client: kubernetes.NewForConfigOrDie(cfg), auditLog: auditLog}
}

// apply server-side applies objects in order, for real or as a dry run.
func (a *auditedAPIServer) apply(t *testing.T, objs []*unstructured.Unstructured, dryRun bool) {
	t.Helper()
	if err := Apply(context.Background(), a.config, objs, "deploy-test", dryRun); err != nil {
		t.Errorf("server-side apply of deploy/ (dry run %v): %v", dryRun, err)
	}
}

// TestManifestsAgainstAPIServer applies deploy/ to a real API server (a
// server-side dry run, then for real), then runs the control plane with the
// Deployment's own arguments, as its ServiceAccount, and checks that it
// works and that the API server refused it nothing. The audit log gives the
// (resource, verb) pairs the code uses; a grant it never uses fails the test
// too, which keeps the role least-privilege as the code changes.
func TestManifestsAgainstAPIServer(t *testing.T) {
	api := startAuditedAPIServer(t)
	m := load(t)
	ns := m.namespace.Name
	ctx := context.Background()

	// A dry run checks every object with the API server's validation and
	// admission, but creates nothing, namespace included: so the namespace
	// is dry-run first on its own, then created, then everything dry-run.
	api.apply(t, m.all[:1], true)
	api.apply(t, m.all[:1], false)
	api.apply(t, m.all, true)
	if t.Failed() {
		t.FailNow()
	}
	if _, err := api.client.AppsV1().Deployments(ns).Get(ctx, m.controlPlane.Name, metav1.GetOptions{}); err == nil {
		t.Fatalf("a dry run created the Deployment")
	}
	api.apply(t, m.all, false)
	if t.Failed() {
		t.FailNow()
	}

	// What a real cluster would have: a node running a Ready Envoy of the
	// DaemonSet, and an Ingress of our class with a problem to report.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	node, err := api.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.80"}}
	if _, err := api.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "envoy-abcde", Namespace: ns, Labels: m.envoy.Spec.Template.Labels},
		Spec:       *m.envoy.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node.Name
	pod, err = api.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a pod from the DaemonSet's template: %v", err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP = "10.1.0.1"
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := api.client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	class := m.ingressClass.Name
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: "missing", Port: networkingv1.ServiceBackendPort{Number: 80},
			}},
		},
	}
	if _, err := api.client.NetworkingV1().Ingresses("default").Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Gateway API objects of our class, whose status the leader writes:
	// a Gateway, and an HTTPRoute, a GRPCRoute and a TLSRoute attached to it,
	// and a BackendTLSPolicy for the HTTPRoute's backend.
	gw := createGatewayObjects(t, api.config)

	// The xDS certificates, made as the install guide says, by someone
	// with only the rights of deploy/certgen-role.yaml.
	xdsCerts := makeXDSCerts(t, api, ns)

	// The control plane, with the Deployment's arguments (but loopback
	// addresses, and the Secrets' files where the kubelet would mount
	// them) and environment, as the ServiceAccount.
	sa := "system:serviceaccount:" + ns + ":" + m.serviceAccount.Name
	kubeconfig := impersonatingKubeconfig(t, api.config, sa)
	serve := container(t, m.controlPlane.Spec.Template.Spec, "ingress-xds", false)
	var args []string
	for _, a := range serve.Args[1:] {
		if !strings.HasPrefix(a, "--xds-address=") && !strings.HasPrefix(a, "--metrics-address=") && !strings.HasPrefix(a, "--http-port=") &&
			!strings.HasPrefix(a, "--xds-tls-") {
			args = append(args, a)
		}
	}
	// The controller ConfigMap, as the Helm chart's controller.config
	// makes it and passes it (--configmap), with a value that does not
	// parse: a Warning Event on it.
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds-config", Namespace: ns}, Data: map[string]string{"proxy-body-size": "lots"}}
	if _, err := api.client.CoreV1().ConfigMaps(ns).Create(ctx, config, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--configmap", ns+"/ingress-xds-config")
	t.Setenv("POD_NAMESPACE", ns)
	t.Setenv("POD_NAME", "ingress-xds-0")
	cp := framework.StartSecureControlPlane(t, xdsCerts, append(args, "--kubeconfig", kubeconfig)...)
	framework.Eventually(t, waitLong, "control plane ready", cp.Ready)
	// The two Secrets make a pair: the client's certificate is accepted by
	// the server, whose certificate the client trusts.
	health, err := healthpb.NewHealthClient(cp.DialXDS(t)).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health over mutual TLS with the client Secret: %v, %v", health, err)
	}
	framework.Eventually(t, waitLong, "status of the Ingress is the Envoy node's ExternalIP", func() error {
		got, err := api.client.NetworkingV1().Ingresses("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lb := got.Status.LoadBalancer.Ingress; len(lb) != 1 || lb[0].IP != "203.0.113.80" {
			return fmt.Errorf("status %+v", lb)
		}
		return nil
	})
	checkGatewayStatus(t, gw, "203.0.113.80")
	leaseID, _ := flagValue(serve.Args, "leader-election-id")
	framework.Eventually(t, waitLong, "the control plane holds the Lease", func() error {
		lease, err := api.client.CoordinationV1().Leases(ns).Get(ctx, leaseID, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h := lease.Spec.HolderIdentity; h == nil || !strings.HasPrefix(*h, "ingress-xds-0_") {
			return fmt.Errorf("holder %v", h)
		}
		return nil
	})
	problemEvent := func(count int32) func() error {
		return func() error {
			list, err := api.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.InvolvedObject.Name == "web" && e.Reason == "ServiceNotFound" && e.Count >= count {
					return nil
				}
			}
			return fmt.Errorf("no ServiceNotFound event with count >= %d on the Ingress among %d events", count, len(list.Items))
		}
	}
	framework.Eventually(t, waitLong, "a Warning Event on the Ingress", problemEvent(1))
	framework.Eventually(t, waitLong, "a Warning Event on the controller ConfigMap", func() error {
		list, err := api.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "ConfigMap" && e.InvolvedObject.Name == "ingress-xds-config" && e.Reason == "InvalidConfigMapValue" {
				return nil
			}
		}
		return fmt.Errorf("no InvalidConfigMapValue event on the ConfigMap among %d events", len(list.Items))
	})
	// The problem goes and comes back: the recorder patches the Event's
	// count rather than creating another. The Service must live long enough
	// for the control plane to notice, which nothing outside it shows: so
	// try again, with longer lives, until the count moves.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	for life := time.Second; ; life *= 2 {
		if _, err := api.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(life)
		if err := api.client.CoreV1().Services("default").Delete(ctx, "missing", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := framework.Poll(ctx, 10*time.Second, 100*time.Millisecond, problemEvent(2)); err == nil {
			break
		} else if life > 30*time.Second {
			t.Fatalf("the repeated problem was never counted: %v", err)
		}
	}

	// A clean stop releases the Lease (one more update).
	cp.Stop()
	framework.Eventually(t, waitLong, "the Lease is released", func() error {
		lease, err := api.client.CoordinationV1().Leases(ns).Get(ctx, leaseID, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
			return fmt.Errorf("still held by %s", *h)
		}
		return nil
	})

	used, refused := readAudit(t, api.auditLog, sa)
	var table []string
	for k := range used {
		table = append(table, k.String())
	}
	sort.Strings(table)
	t.Logf("requests the control plane made as %s:\n  %s", sa, strings.Join(table, "\n  "))
	for _, r := range refused {
		t.Errorf("the API server refused the control plane: %s", r)
	}
	for _, g := range granted(m) {
		if !used[g] && !(g.verb == "list" && used[access{g.group, g.resource, "watch", g.namespace}]) {
			t.Errorf("the roles grant %s, which the control plane never used: remove it, or exercise it here", g)
		}
	}
}

// impersonatingKubeconfig writes a kubeconfig with the test's admin
// credentials that acts as user (impersonation), so that the API server
// authorizes every request as that user.
func impersonatingKubeconfig(t *testing.T, cfg *rest.Config, user string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["as-sa"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
		Impersonate: user,
	}
	kc.Contexts["as-sa"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "as-sa"}
	kc.CurrentContext = "as-sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// access is one (resource, verb) a role grants or a client uses; namespace
// is empty for cluster-wide.
type access struct {
	group, resource, verb, namespace string
}

func (a access) String() string {
	where := "cluster-wide"
	if a.namespace != "" {
		where = "in " + a.namespace
	}
	group := a.group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%-6s %s/%s %s", a.verb, group, a.resource, where)
}

// granted lists what the ClusterRole (cluster-wide) and the Role (in our
// namespace) allow.
func granted(m *manifests) []access {
	var out []access
	add := func(rules []rbacv1.PolicyRule, ns string) {
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						out = append(out, access{g, res, v, ns})
					}
				}
			}
		}
	}
	add(m.clusterRole.Rules, "")
	add(m.role.Rules, m.namespace.Name)
	return out
}

// readAudit reads the audit log: what user did (namespaced requests under a
// cluster-wide grant count as cluster-wide, those in namespaces with a Role
// as namespaced) and what it was refused.
func readAudit(t *testing.T, path, user string) (used map[access]bool, refused []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	type event struct {
		Stage            string `json:"stage"`
		Verb             string `json:"verb"`
		RequestURI       string `json:"requestURI"`
		ImpersonatedUser *struct {
			Username string `json:"username"`
		} `json:"impersonatedUser"`
		ObjectRef *struct {
			Resource    string `json:"resource"`
			Subresource string `json:"subresource"`
			Namespace   string `json:"namespace"`
			APIGroup    string `json:"apiGroup"`
		} `json:"objectRef"`
		ResponseStatus *struct {
			Code int `json:"code"`
		} `json:"responseStatus"`
	}
	used = map[access]bool{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var e event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatalf("audit log line %q: %v", scanner.Text(), err)
		}
		if e.ImpersonatedUser == nil || e.ImpersonatedUser.Username != user || e.ObjectRef == nil {
			continue
		}
		if e.ResponseStatus != nil && e.ResponseStatus.Code == 403 {
			refused = append(refused, e.Verb+" "+e.RequestURI)
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		ns := ""
		if slices.Contains([]string{"pods", "leases"}, res) { // granted by the Role
			ns = e.ObjectRef.Namespace
		}
		used[access{e.ObjectRef.APIGroup, res, e.Verb, ns}] = true
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return used, slices.Compact(refused)
}

// createGatewayObjects makes, in the default namespace, a GatewayClass
// of the default controllerName, a Gateway of it with an HTTP listener,
// and an HTTPRoute, a GRPCRoute and a TLSRoute attached to it (the last
// refused by the HTTP listener: its status is written all the same), and
// a BackendTLSPolicy for the HTTPRoute's Service.
func createGatewayObjects(t *testing.T, cfg *rest.Config) gwclient.Interface {
	t.Helper()
	ctx := context.Background()
	gw := gwclient.NewForConfigOrDie(cfg)
	if _, err := gw.GatewayV1().GatewayClasses().Create(ctx, &gwapiv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds"},
		Spec:       gwapiv1.GatewayClassSpec{ControllerName: "ingress-xds.io/gateway-controller"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.GatewayV1().Gateways("default").Create(ctx, &gwapiv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: "ingress-xds", Listeners: []gwapiv1.Listener{
			{Name: "http", Port: 8080, Protocol: gwapiv1.HTTPProtocolType},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	parents := gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "web"}}}
	port := gwapiv1.PortNumber(443)
	if _, err := gw.GatewayV1().HTTPRoutes("default").Create(ctx, &gwapiv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gwapiv1.HTTPRouteSpec{CommonRouteSpec: parents, Hostnames: []gwapiv1.Hostname{"web.example.com"},
			Rules: []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{Name: "secure", Port: &port}}}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A BackendTLSPolicy for the HTTPRoute's Service: its CA ConfigMap
	// is watched, and its status written.
	if _, err := gw.GatewayV1().BackendTLSPolicies("default").Create(ctx, &gwapiv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "secure"},
		Spec: gwapiv1.BackendTLSPolicySpec{
			TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Kind: "Service", Name: "secure"}}},
			Validation: gwapiv1.BackendTLSPolicyValidation{Hostname: "secure.example.com",
				CACertificateRefs: []gwapiv1.LocalObjectReference{{Kind: "ConfigMap", Name: "secure-ca"}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.GatewayV1().GRPCRoutes("default").Create(ctx, &gwapiv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "grpc"},
		Spec:       gwapiv1.GRPCRouteSpec{CommonRouteSpec: parents, Hostnames: []gwapiv1.Hostname{"grpc.example.com"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.GatewayV1().TLSRoutes("default").Create(ctx, &gwapiv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "tls"},
		Spec: gwapiv1.TLSRouteSpec{CommonRouteSpec: parents, Hostnames: []gwapiv1.Hostname{"tls.example.com"},
			Rules: []gwapiv1.TLSRouteRule{{BackendRefs: []gwapiv1.BackendRef{{BackendObjectReference: gwapiv1.BackendObjectReference{Name: "tls", Port: &port}}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return gw
}

// checkGatewayStatus waits for the statuses of createGatewayObjects'
// objects, written by the control plane: the class accepted, the Gateway
// with its conditions observed and the Envoy's address, each Route with
// our parent entry. (The Gateway's listener is on 8080, which the test's
// control plane does not listen on: whether it is programmed is not the
// question here, the writes are.)
func checkGatewayStatus(t *testing.T, gw gwclient.Interface, address string) {
	t.Helper()
	ctx := context.Background()
	const controller = "ingress-xds.io/gateway-controller"
	written := func(conds []metav1.Condition) error {
		for _, c := range conds {
			if c.Type == "Accepted" && c.Status != metav1.ConditionUnknown && c.ObservedGeneration > 0 {
				return nil
			}
		}
		return fmt.Errorf("no Accepted condition written: %+v", conds)
	}
	ours := func(parents []gwapiv1.RouteParentStatus) error {
		if len(parents) != 1 || parents[0].ControllerName != controller {
			return fmt.Errorf("parents %+v", parents)
		}
		return written(parents[0].Conditions)
	}
	framework.Eventually(t, waitLong, "the GatewayClass accepted", func() error {
		class, err := gw.GatewayV1().GatewayClasses().Get(ctx, "ingress-xds", metav1.GetOptions{})
		if err != nil {
			return err
		}
		// With the features it serves, those of the shared ports.
		if got, want := class.Status.SupportedFeatures, gatewayapi.SupportedFeatures(false); !slices.Equal(got, want) {
			return fmt.Errorf("supportedFeatures %v, want %v", got, want)
		}
		for _, c := range class.Status.Conditions {
			if c.Type == "Accepted" && c.Status == metav1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Accepted: %+v", class.Status.Conditions)
	})
	framework.Eventually(t, waitLong, "the Gateway's status, with the Envoy's address", func() error {
		g, err := gw.GatewayV1().Gateways("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if a := g.Status.Addresses; len(a) != 1 || a[0].Value != address {
			return fmt.Errorf("addresses %+v", a)
		}
		return written(g.Status.Conditions)
	})
	framework.Eventually(t, waitLong, "the HTTPRoute's parent entry", func() error {
		r, err := gw.GatewayV1().HTTPRoutes("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return ours(r.Status.Parents)
	})
	framework.Eventually(t, waitLong, "the GRPCRoute's parent entry", func() error {
		r, err := gw.GatewayV1().GRPCRoutes("default").Get(ctx, "grpc", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return ours(r.Status.Parents)
	})
	framework.Eventually(t, waitLong, "the TLSRoute's parent entry", func() error {
		r, err := gw.GatewayV1().TLSRoutes("default").Get(ctx, "tls", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return ours(r.Status.Parents)
	})
	framework.Eventually(t, waitLong, "the BackendTLSPolicy's ancestor entry", func() error {
		p, err := gw.GatewayV1().BackendTLSPolicies("default").Get(ctx, "secure", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if a := p.Status.Ancestors; len(a) != 1 || a[0].ControllerName != controller || a[0].AncestorRef.Name != "web" {
			return fmt.Errorf("ancestors %+v", a)
		}
		return written(p.Status.Ancestors[0].Conditions)
	})
}
