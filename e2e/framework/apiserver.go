package framework

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ingress-xds/ingress-xds/e2e/ports"
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

	env   *envtest.Environment
	ports *ports.Reservation // kube-apiserver's and etcd's, until Stop
}

// APIServerOptions vary what StartAPIServerWith and LaunchAPIServer start.
type APIServerOptions struct {
	// APIServerFlags and EtcdFlags are flags (name without dashes: value)
	// added to envtest's, or replacing them.
	APIServerFlags, EtcdFlags map[string]string
	// CertDir is where kube-apiserver keeps its serving certificate and
	// client CA; envtest makes a temporary one when empty. A directory of
	// our own is kept across a stop: started again (StartAgain),
	// kube-apiserver comes back with the same certificates, so that its
	// clients keep working.
	CertDir string
	// CRDs are files or directories of CustomResourceDefinitions that
	// envtest installs before Start returns (see GatewayAPICRDs).
	CRDs []string
}

// StartAPIServer starts kube-apiserver and etcd, stopped when the test ends.
func StartAPIServer(t testing.TB) *APIServer {
	t.Helper()
	return StartAPIServerWith(t, APIServerOptions{})
}

// StartAPIServerWith is StartAPIServer with options; the certificates are
// kept in a directory of the test's (for StartAgain) unless o names one.
func StartAPIServerWith(t testing.TB, o APIServerOptions) *APIServer {
	t.Helper()
	tools := FindTools(t)
	if o.CertDir == "" {
		o.CertDir = t.TempDir()
	}
	start := time.Now()
	a, err := LaunchAPIServer(tools.KubeAssets, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
		t.Logf("stopped kube-apiserver and etcd: took %s", time.Since(start).Round(time.Millisecond))
	})
	t.Logf("kube-apiserver ready at %s: took %s", a.Config.Host, time.Since(start).Round(time.Millisecond))
	return a
}

// LaunchAPIServer is StartAPIServer without a test, for the load command:
// it starts kube-apiserver and etcd from the binaries in assets
// (KUBEBUILDER_ASSETS layout), writes the kubeconfig into dir, and leaves
// stopping them (Stop) to the caller.
func LaunchAPIServer(assets, dir string, o APIServerOptions) (*APIServer, error) {
	// envtest logs through controller-runtime's global logger, and warns
	// with a stack trace when it was never set; its errors come back to us
	// as values anyway.
	ctrllog.SetLogger(logr.Discard())
	reserved, err := reservePorts(envtestPorts)
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 2 * time.Minute, // small, shared machines
		ControlPlaneStopTimeout:  30 * time.Second,
		CRDInstallOptions:        envtest.CRDInstallOptions{Paths: o.CRDs, ErrorIfPathMissing: true},
	}
	setEnvtestPorts(env, reserved.Ports)
	api := env.ControlPlane.GetAPIServer()
	api.CertDir = o.CertDir
	for name, value := range o.APIServerFlags {
		api.Configure().Set(name, value)
	}
	for name, value := range o.EtcdFlags { // setEnvtestPorts made the Etcd
		env.ControlPlane.Etcd.Configure().Set(name, value)
	}
	cfg, err := env.Start()
	if err != nil {
		reserved.Release()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	a := &APIServer{Config: cfg, Kubeconfig: filepath.Join(dir, "kubeconfig"), env: env, ports: reserved}
	if err := os.WriteFile(a.Kubeconfig, env.KubeConfig, 0o600); err != nil {
		a.Stop()
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	if a.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		a.Stop()
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return a, nil
}

// ReserveEnvtestPorts has env's kube-apiserver and etcd listen on ports
// reserved for the test (FreePorts), for a test that runs envtest itself.
// envtest's own come from the ephemeral range, closed before kube-apiserver
// and etcd bind them, and a bind(0) of another test process can take one
// meanwhile. Call it before env.Start, and register env.Stop after it, so
// that the ports are given back once both have stopped.
func ReserveEnvtestPorts(t testing.TB, env *envtest.Environment) {
	t.Helper()
	setEnvtestPorts(env, FreePorts(t, envtestPorts))
}

// envtestPorts are kube-apiserver's secure port and etcd's client and peer
// ports (etcd's peer port is free of envtest's choice only by a flag).
const envtestPorts = 3

func setEnvtestPorts(env *envtest.Environment, p []int) {
	api := env.ControlPlane.GetAPIServer()
	api.SecureServing.Address, api.SecureServing.Port = "127.0.0.1", strconv.Itoa(p[0])
	if env.ControlPlane.Etcd == nil {
		env.ControlPlane.Etcd = &envtest.Etcd{}
	}
	env.ControlPlane.Etcd.URL = &url.URL{Scheme: "http", Host: LocalAddress(p[1])}
	env.ControlPlane.Etcd.Configure().Set("listen-peer-urls", "http://"+LocalAddress(p[2]))
}

// reservePorts is FreePorts without a test, for LaunchAPIServer.
func reservePorts(n int) (*ports.Reservation, error) {
	r, err := ports.Open()
	if err != nil {
		return nil, err
	}
	res, err := r.Reserve(n)
	if err != nil {
		return nil, fmt.Errorf("reserving ports for kube-apiserver and etcd: %w", err)
	}
	return res, nil
}

// Stop stops kube-apiserver and etcd, and then gives their ports back.
func (a *APIServer) Stop() error {
	if err := a.env.Stop(); err != nil {
		// Kept: they may still be bound.
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	return a.ports.Release()
}

// StopAPIServer kills kube-apiserver with SIGKILL, as a crash or the loss
// of its node would, leaving etcd running: clients get connection errors
// until StartAgain. Not SIGTERM: kube-apiserver would keep serving open
// watches, from etcd, while it drains.
func (a *APIServer) StopAPIServer(t testing.TB) {
	t.Helper()
	u, err := url.Parse(a.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := findProcess("kube-apiserver", "--secure-port="+u.Port())
	if err != nil {
		t.Fatalf("finding kube-apiserver: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing kube-apiserver (pid %d): %v", pid, err)
	}
	// envtest notices the exit and has nothing left to stop; this resets
	// its state for StartAgain.
	if err := a.env.ControlPlane.APIServer.Stop(); err != nil {
		t.Fatalf("stopping kube-apiserver: %v", err)
	}
	t.Logf("killed kube-apiserver at %s (pid %d)", a.Config.Host, pid)
}

// findProcess returns the pid of the process whose program is called name
// and whose arguments include arg.
func findProcess(name, arg string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile, or not ours to read
		}
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if filepath.Base(argv[0]) == name && slices.Contains(argv[1:], arg) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s process with %s", name, arg)
}

// StartAgain starts the stopped kube-apiserver again, on the same address,
// with the same certificates and the same etcd, and waits until it is
// healthy.
func (a *APIServer) StartAgain(t testing.TB) {
	t.Helper()
	start := time.Now()
	if err := a.env.ControlPlane.APIServer.Start(); err != nil {
		t.Fatalf("starting kube-apiserver again: %v", err)
	}
	t.Logf("kube-apiserver back at %s: took %s", a.Config.Host, time.Since(start).Round(time.Millisecond))
}

// StartSecond starts another kube-apiserver on the same etcd, with
// envtest's flags but a port, certificates and users of its own, stopped
// when the test ends. Objects written through either are seen by both: it
// changes the cluster behind the back of the first one's clients.
func (a *APIServer) StartSecond(t testing.TB) kubernetes.Interface {
	t.Helper()
	first := a.env.ControlPlane.APIServer
	second := &envtest.APIServer{
		Path:         first.Path,
		EtcdURL:      first.EtcdURL,
		CertDir:      t.TempDir(),
		StartTimeout: 2 * time.Minute,
		StopTimeout:  30 * time.Second,
	}
	second.SecureServing.Address, second.SecureServing.Port = "127.0.0.1", strconv.Itoa(FreePort(t)) // as in LaunchAPIServer
	start := time.Now()
	if err := second.Start(); err != nil {
		t.Fatalf("starting a second kube-apiserver: %v", err)
	}
	t.Cleanup(func() {
		if err := second.Stop(); err != nil {
			t.Errorf("stopping the second kube-apiserver: %v", err)
		}
	})
	plane := &envtest.ControlPlane{APIServer: second, Etcd: a.env.ControlPlane.Etcd}
	user, err := plane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatalf("a user of the second kube-apiserver: %v", err)
	}
	client, err := kubernetes.NewForConfig(user.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second kube-apiserver on the same etcd at %s: took %s", user.Config().Host, time.Since(start).Round(time.Millisecond))
	return client
}
