package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/kube"
)

// TestGatewayAPICRDs: deploy/gateway-api/ renders exactly the standard
// channel of the sigs.k8s.io/gateway-api module go.mod requires (run
// hack/gateway-api-crds.sh when it does not); the chart's
// gatewayAPI.installCRDs renders the same objects, kept on uninstall and
// labelled as the release's, and nothing of them by default; applied to a
// real API server, they make it serve every kind the controller watches.
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
	for _, name := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "referencegrants"} {
		if got["CustomResourceDefinition /"+name+".gateway.networking.k8s.io"] == nil {
			t.Errorf("no CRD of %s, which the controller watches", name)
		}
	}

	helm := helmBinary(t)
	for _, u := range helmTemplate(t, helm, "ingress-xds") {
		if got[objectKey(u)] != nil {
			t.Errorf("the chart renders %s by default", objectKey(u))
		}
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
	for _, dryRun := range []bool{true, false} {
		if err := Apply(ctx, api.Config, chartCRDs, "helm-test", dryRun); err != nil {
			t.Fatalf("the chart's Gateway API CRDs (dry run %v): %v", dryRun, err)
		}
	}
	client := kubernetes.NewForConfigOrDie(api.Config)
	wantKinds := []string{"GRPCRoute", "Gateway", "GatewayClass", "HTTPRoute", "ReferenceGrant", "TLSRoute"}
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
}
