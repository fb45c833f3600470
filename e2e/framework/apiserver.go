package framework

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// APIServer is a real kube-apiserver with its etcd, started by envtest from
// the binaries `make tools` builds. It runs no controllers: what a test
// creates (EndpointSlices included) is all there is.
type APIServer struct {
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file with cluster-admin
	// rights, for processes such as `ingress-xds serve --kubeconfig`.
	Kubeconfig string
	Client     kubernetes.Interface
}

// StartAPIServer starts kube-apiserver and etcd, stopped when the test ends.
func StartAPIServer(t testing.TB) *APIServer {
	t.Helper()
	tools := FindTools(t)
	// envtest logs through controller-runtime's global logger, and warns
	// with a stack trace when it was never set; its errors come back to us
	// as values anyway.
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory:    tools.KubeAssets,
		ControlPlaneStartTimeout: 2 * time.Minute, // small, shared machines
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd from %s: %v", tools.KubeAssets, err)
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
		t.Logf("stopped kube-apiserver and etcd: took %s", time.Since(start).Round(time.Millisecond))
	})
	t.Logf("kube-apiserver ready at %s: took %s", cfg.Host, time.Since(start).Round(time.Millisecond))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatalf("writing the kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating a client: %v", err)
	}
	return &APIServer{Config: cfg, Kubeconfig: kubeconfig, Client: client}
}
