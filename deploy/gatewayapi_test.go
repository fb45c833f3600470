package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/kube"
)

// TestGatewayAPICRDs: deploy/gateway-api/ renders exactly the standard
// channel of the sigs.k8s.io/gateway-api module go.mod requires (run
// hack/gateway-api-crds.sh when it does not); the chart's
// gatewayAPI.installCRDs renders the same objects, kept on uninstall and
// labelled as the release's; by default (auto) unless the cluster has them
// from elsewhere; applied to a real API server, they make it serve every
// kind the controller watches.
func TestGatewayAPICRDs(t *testing.T) {
	rendered, err := Render("gateway-api")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*unstructured.Unstructured{}
	files, err := filepath.Glob(filepath.Join(framework.GatewayAPICRDs(t), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the module's CRD files: %v %v", files, err)
	}
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range decodeDocuments(t, content) {
			want[objectKey(u)] = u
		}
	}
	byKey := func(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
		m := map[string]*unstructured.Unstructured{}
		for _, u := range objs {
			m[objectKey(u)] = u
		}
		return m
	}
	got := byKey(rendered)
	if len(got) != len(want) {
		t.Errorf("deploy/gateway-api renders %d objects, the module's standard channel has %d: run hack/gateway-api-crds.sh", len(got), len(want))
	}
	for key, w := range want {
		if g := got[key]; g == nil || !reflect.DeepEqual(g.Object, w.Object) {
			t.Errorf("deploy/gateway-api's %s is not the module's: run hack/gateway-api-crds.sh", key)
		}
	}
	for _, name := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "referencegrants", "backendtlspolicies"} {
		if got["CustomResourceDefinition /"+name+".gateway.networking.k8s.io"] == nil {
			t.Errorf("no CRD of %s, which the controller watches", name)
		}
	}

	helm := helmBinary(t)
	for _, u := range helmTemplate(t, helm, "ingress-xds", `gatewayAPI.installCRDs=false`) {
		if got[objectKey(u)] != nil {
			t.Errorf("the chart renders %s with gatewayAPI.installCRDs=false", objectKey(u))
		}
	}
	// auto, the default, without a cluster to ask: rendered.
	if n := countRendered(helmTemplate(t, helm, "ingress-xds"), got); n != len(got) {
		t.Errorf("the chart renders %d of deploy/gateway-api's %d objects by default, with no cluster to ask", n, len(got))
	}
	var chartCRDs []*unstructured.Unstructured
	for _, u := range helmTemplate(t, helm, "ingress-xds", `gatewayAPI.installCRDs=true`) {
		if got[objectKey(u)] == nil {
			continue
		}
		chartCRDs = append(chartCRDs, u)
		u = u.DeepCopy()
		annotations := u.GetAnnotations()
		if annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("the chart's %s is not kept on uninstall", objectKey(u))
		}
		delete(annotations, "helm.sh/resource-policy")
		u.SetAnnotations(annotations)
		labels := u.GetLabels()
		for _, l := range releaseLabels {
			if labels[l] == "" {
				t.Errorf("the chart's %s lacks the label %s", objectKey(u), l)
			}
			delete(labels, l)
		}
		if len(labels) == 0 {
			labels = nil
		}
		u.SetLabels(labels)
		if !reflect.DeepEqual(u.Object, got[objectKey(u)].Object) {
			t.Errorf("the chart's %s differs from deploy/gateway-api's", objectKey(u))
		}
	}
	if len(chartCRDs) != len(got) {
		t.Errorf("gatewayAPI.installCRDs renders %d of deploy/gateway-api's %d objects", len(chartCRDs), len(got))
	}

	api := framework.StartAPIServer(t)
	ctx := context.Background()
	// auto asks the cluster (helm template --dry-run=server, as helm
	// install does): none yet, so the chart installs them.
	asked := func(values ...string) []*unstructured.Unstructured {
		args := []string{"template", "ingress-xds", chartDir, "--namespace", "ingress-xds", "--dry-run=server", "--kubeconfig", api.Kubeconfig}
		for _, v := range values {
			args = append(args, "--set-json", v)
		}
		return decodeDocuments(t, runHelm(t, helm, args...))
	}
	if n := countRendered(asked(), got); n != len(got) {
		t.Errorf("on a cluster without Gateway API's CRDs, the chart renders %d of deploy/gateway-api's %d objects by default", n, len(got))
	}
	for _, dryRun := range []bool{true, false} {
		if err := Apply(ctx, api.Config, chartCRDs, "helm-test", dryRun); err != nil {
			t.Fatalf("the chart's Gateway API CRDs (dry run %v): %v", dryRun, err)
		}
	}
	client := kubernetes.NewForConfigOrDie(api.Config)
	wantKinds := []string{"BackendTLSPolicy", "GRPCRoute", "Gateway", "GatewayClass", "HTTPRoute", "ReferenceGrant", "TLSRoute"}
	framework.Eventually(t, waitLong, "the API server serves the kinds the controller watches", func() error {
		kinds, err := kube.ServedGatewayKinds(ctx, client.Discovery())
		if err != nil {
			return err
		}
		if !slices.Equal(kinds, wantKinds) {
			return fmt.Errorf("served %v, want %v", kinds, wantKinds)
		}
		return nil
	})

	// Installed from elsewhere (here by this test, as by another
	// controller or deploy/gateway-api/): auto leaves them alone, where
	// true would have Helm refuse to take them over.
	if n := countRendered(asked(), got); n != 0 {
		t.Errorf("on a cluster with Gateway API's CRDs from elsewhere, the chart renders %d of them by default", n)
	}
	if n := countRendered(asked(`gatewayAPI.installCRDs=true`), got); n != len(got) {
		t.Errorf("gatewayAPI.installCRDs=true renders %d of %d on a cluster that has them", n, len(got))
	}
	// This release's own (as helm install marks what it makes): still
	// rendered, so that an upgrade keeps them.
	crds := dynamic.NewForConfigOrDie(api.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	patch := []byte(`{"metadata":{"annotations":{"meta.helm.sh/release-name":"ingress-xds","meta.helm.sh/release-namespace":"ingress-xds"}}}`)
	if _, err := crds.Patch(ctx, "gateways.gateway.networking.k8s.io", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := countRendered(asked(), got); n != len(got) {
		t.Errorf("on a cluster with this release's Gateway API CRDs, the chart renders %d of %d by default", n, len(got))
	}
}

// countRendered counts the objects of rendered that are among want's.
func countRendered(rendered []*unstructured.Unstructured, want map[string]*unstructured.Unstructured) int {
	n := 0
	for _, u := range rendered {
		if want[objectKey(u)] != nil {
			n++
		}
	}
	return n
}
