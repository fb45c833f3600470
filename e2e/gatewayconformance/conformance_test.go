// Package gatewayconformance runs Gateway API's own conformance suite
// (sigs.k8s.io/gateway-api/conformance, at the version of the CRDs
// deploy/gateway-api/ installs) against a cluster where ingress-xds is
// installed: e2e/kind/run.sh runs it on the kind cluster after the kind
// suite (docs/gateway-api.md, "Conformance"). It is a module of its own so
// that the suite's dependencies stay out of the controller's.
package gatewayconformance

import (
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance"
)

// controllerName is the GatewayClass controllerName ingress-xds serves by
// default (gatewayapi.DefaultControllerName).
const controllerName = "ingress-xds.io/gateway-controller"

// TestGatewayAPIConformance makes the suite's GatewayClass, ours, and runs
// the suite, on the experimental channel's CRDs when run.sh asks, with the options of -conformance-options-file (options.yaml:
// the profiles and the features claimed) and the flags run.sh adds (the
// report's path, the version).
func TestGatewayAPIConformance(t *testing.T) {
	if os.Getenv("KUBECONFIG") == "" {
		t.Skip("needs a cluster with ingress-xds installed: run `make e2e-gateway-conformance`, or set KUBECONFIG")
	}
	opts := conformance.DefaultOptions(t)
	// GATEWAY_API_EXPERIMENTAL_CRDS (run.sh sets it unless
	// CONFORMANCE_CHANNEL=standard) names the experimental channel's CRDs;
	// without it the suite runs on the cluster's, deploy/'s standard ones.
	if dir := os.Getenv("GATEWAY_API_EXPERIMENTAL_CRDS"); dir != "" {
		useExperimentalChannel(t, opts.Client, dir)
	} else {
		opts.SupportedFeatures = withoutExperimentalFeatures(t, opts.SupportedFeatures)
	}
	opts.UsableNetworkAddresses, opts.UnusableNetworkAddresses = staticAddressPools(t, opts.Clientset)
	class := &gwapiv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: opts.GatewayClassName},
		Spec:       gwapiv1.GatewayClassSpec{ControllerName: controllerName},
	}
	if err := opts.Client.Create(t.Context(), class); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating GatewayClass %s: %v", opts.GatewayClassName, err)
	}
	conformance.RunConformanceWithOptions(t, opts)
}
