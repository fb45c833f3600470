package load

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// APIServer is a kube-apiserver and its etcd started by envtest, with
// settings for hundreds of thousands of objects rather than a test's few.
type APIServer struct {
	Config     *rest.Config
	Kubeconfig string // cluster-admin kubeconfig file for the control plane
	env        *envtest.Environment
}

// serviceRange holds a ClusterIP for each of 100,000 Services; envtest's
// default /24 runs out after 254.
const serviceRange = "172.16.0.0/12"

// StartAPIServer starts kube-apiserver and etcd from the binaries in assets
// (KUBEBUILDER_ASSETS layout) and writes a kubeconfig into dir.
func StartAPIServer(assets, dir string) (*APIServer, error) {
	// envtest logs through controller-runtime's global logger and complains
	// with a stack trace when none is set; its errors come back as values.
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 2 * time.Minute, // small, shared machines
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	api := env.ControlPlane.GetAPIServer().Configure()
	api.Set("service-cluster-ip-range", serviceRange)
	// A workload is created by many parallel writers, and every
	// control-plane client lists everything at start.
	api.Set("max-requests-inflight", "1000")
	api.Set("max-mutating-requests-inflight", "500")
	// etcd's 2 GiB default quota is too close for 10,000 Ingresses with
	// their history.
	env.ControlPlane.Etcd = &envtest.Etcd{}
	env.ControlPlane.Etcd.Configure().Set("quota-backend-bytes", fmt.Sprint(8<<30))
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		env.Stop()
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return &APIServer{Config: cfg, Kubeconfig: kubeconfig, env: env}, nil
}

// Stop stops kube-apiserver and etcd.
func (a *APIServer) Stop() error {
	if err := a.env.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	return nil
}
