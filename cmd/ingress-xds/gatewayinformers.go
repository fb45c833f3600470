package main

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/kube"
)

// newGatewayInformerFactory makes the informers of the Gateway API kinds
// the API server serves, or none (nil) when it serves none: without the
// CRDs, serve goes on with Ingresses alone. Which kinds are watched is
// decided at start-up, and logged; it returns them, which
// kube.GatewayCRDWatch compares with the CRDs from then on.
func newGatewayInformerFactory(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, logger *slog.Logger) (*kube.GatewayInformerFactory, []string, error) {
	kinds, err := kube.ServedGatewayKinds(ctx, client.Discovery())
	if err != nil {
		return nil, nil, err
	}
	kube.LogGatewayKinds(logger, kinds)
	if len(kinds) == 0 {
		return nil, kinds, nil
	}
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating Gateway API client: %w", err)
	}
	return kube.NewGatewayInformerFactory(gw, client, kinds), kinds, nil
}
