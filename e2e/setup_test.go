package e2e

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The setups the local suite's tests share. File mode: echo backends, a
// directory of manifests served by `ingress-xds serve --manifests`, and a
// real Envoy bootstrapped from that control plane; each test still says
// which rejections it checks for when it ends, since that depends on what
// it serves. Cluster mode: a real API server for the test to fill before
// it starts the control plane with the flags it is about.

// startClusterMode skips the test under -short, builds ingress-xds first
// (a build failure should not wait for the API server) and starts a real
// kube-apiserver and etcd.
func startClusterMode(t *testing.T) *framework.APIServer {
	t.Helper()
	framework.Heavy(t)
	framework.IngressXDS(t)
	return framework.StartAPIServer(t)
}

// echoBackends skips the test under -short, fails it early when the tools
// are missing, and starts one echo backend per name, in order.
func echoBackends(t *testing.T, names ...string) []*framework.Backend {
	t.Helper()
	framework.Heavy(t)
	framework.FindTools(t)
	backends := make([]*framework.Backend, len(names))
	for i, name := range names {
		backends[i] = framework.StartBackend(t, name)
	}
	return backends
}

// manifest is one file of the served directory.
type manifest struct{ name, content string }

// fileMode is a running file-mode setup.
type fileMode struct {
	dir   string // the served directory: tests edit it with writeManifest
	cp    *framework.ControlPlane
	envoy *framework.Envoy
}

// startFileMode writes files into a new directory, in order, serves it
// (over mutual TLS with certs when not nil, else in plaintext) and returns
// once the control plane is ready and an Envoy has its first configuration.
func startFileMode(t *testing.T, certs *framework.XDSCerts, files ...manifest) *fileMode {
	t.Helper()
	return startFileModeOf(t, certs, nil, files)
}

// startFileModeWith is startFileMode in plaintext with serve's flags
// args besides --manifests.
func startFileModeWith(t *testing.T, args []string, files ...manifest) *fileMode {
	t.Helper()
	return startFileModeOf(t, nil, args, files)
}

// startConfigMapMode is startFileMode in plaintext under the controller
// ConfigMap ingress-nginx/ingress-nginx-controller of data, with the
// check that Envoy rejected nothing at the end; the function it returns
// writes the ConfigMap anew, which serve applies without a restart.
func startConfigMapMode(t *testing.T, data map[string]string, files ...manifest) (*fileMode, func(map[string]string)) {
	t.Helper()
	fm := startFileModeWith(t, []string{"--configmap", "ingress-nginx/ingress-nginx-controller"},
		append(files, manifest{"configmap.yaml", controllerConfigMapYAML(data)})...)
	t.Cleanup(func() {
		assertNoRejections(t, fm.envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	return fm, func(data map[string]string) {
		t.Helper()
		writeManifest(t, fm.dir, "configmap.yaml", controllerConfigMapYAML(data))
	}
}

func startFileModeOf(t *testing.T, certs *framework.XDSCerts, args []string, files []manifest) *fileMode {
	t.Helper()
	m := &fileMode{dir: t.TempDir()}
	for _, f := range files {
		writeManifest(t, m.dir, f.name, f.content)
	}
	args = append([]string{"--manifests", m.dir}, args...)
	if certs == nil {
		m.cp = framework.StartControlPlane(t, args...)
	} else {
		m.cp = framework.StartSecureControlPlane(t, certs, args...)
	}
	m.cp.WaitReady(t)
	m.envoy = framework.StartEnvoy(t, m.cp)
	return m
}

// startHandlerEnvoy serves ingresses in file mode with a backend of its
// own: handler, as the ready endpoint of Service name on port 80. The
// test ends checking that Envoy rejected none of the configuration.
func startHandlerEnvoy(t *testing.T, name string, handler http.HandlerFunc, ingresses string) *framework.Envoy {
	t.Helper()
	backend := httptest.NewServer(handler)
	t.Cleanup(backend.Close)
	b := &framework.Backend{Name: name, Host: "127.0.0.1", Port: backend.Listener.Addr().(*net.TCPAddr).Port}
	envoy := startFileMode(t, nil,
		manifest{"services.yaml", readyServiceYAML(name, b)},
		manifest{"ingresses.yaml", ingresses}).envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	return envoy
}
