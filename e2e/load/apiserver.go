package load

import (
	"fmt"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// serviceRange holds a ClusterIP for each of 100,000 Services; envtest's
// default /24 runs out after 254.
const serviceRange = "172.16.0.0/12"

// StartAPIServer starts kube-apiserver and etcd from the binaries in assets
// (KUBEBUILDER_ASSETS layout), with settings for hundreds of thousands of
// objects rather than a test's few, and writes a kubeconfig into dir. The
// caller stops them.
func StartAPIServer(assets, dir string) (*framework.APIServer, error) {
	return framework.LaunchAPIServer(assets, dir, framework.APIServerOptions{
		APIServerFlags: map[string]string{
			"service-cluster-ip-range": serviceRange,
			// A workload is created by many parallel writers, and every
			// control-plane client lists everything at start.
			"max-requests-inflight":          "1000",
			"max-mutating-requests-inflight": "500",
		},
		// etcd's 2 GiB default quota is too close for 10,000 Ingresses
		// with their history.
		EtcdFlags: map[string]string{"quota-backend-bytes": fmt.Sprint(8 << 30)},
	})
}
