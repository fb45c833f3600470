package kind

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestImages runs the images hack/project-images.sh built, in this
// machine's Docker engine, before any cluster does: the control plane's
// binary answers, the echo backend answers over a published loopback port,
// and the Envoy image serves a static bootstrap on a read-only root file
// system as the manifests' user, and runs deploy/envoy.yaml's readiness
// probe and preStop hook (which need bash, cat and sleep in the image). It
// needs the images in the local engine, named by the suite's variables.
func TestImages(t *testing.T) {
	images := map[string]string{}
	for _, v := range []string{"INGRESS_XDS_KIND_IMAGE", "INGRESS_XDS_KIND_ENVOY_IMAGE", "INGRESS_XDS_KIND_ECHO_IMAGE"} {
		images[v] = os.Getenv(v)
		if images[v] == "" {
			t.Skipf("%s is not set: run hack/project-images.sh and pass its images (run.sh does)", v)
		}
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker here to run the images in")
	}
	for _, image := range images {
		if out, err := exec.Command("docker", "image", "inspect", "-f", "{{.Config.User}}", image).CombinedOutput(); err != nil {
			t.Skipf("%s is not in the local engine (%v): it was built elsewhere", image, err)
		} else if user := strings.TrimSpace(string(out)); user != "65532:65532" {
			t.Errorf("%s runs as %q, want the manifests' 65532:65532", image, user)
		}
	}

	t.Run("ingress-xds", func(t *testing.T) {
		out := docker(t, "run", "--rm", "--read-only", images["INGRESS_XDS_KIND_IMAGE"], "--help")
		if !strings.Contains(out, "ingress-xds serve") || !strings.Contains(out, "ingress-xds bootstrap") {
			t.Errorf("--help says:\n%s", out)
		}
	})
	t.Run("echo", func(t *testing.T) {
		id := docker(t, "run", "-d", "--read-only", "-p", "127.0.0.1::8080", images["INGRESS_XDS_KIND_ECHO_IMAGE"], "-listen", ":8080=probe")
		address := published(t, id, "8080")
		framework.Eventually(t, converge, "the echo container answers on "+address, func() error {
			return framework.Expect(address, "echo.example.com", "/x", http.StatusOK, "probe")
		})
	})
	t.Run("envoy", func(t *testing.T) {
		image := images["INGRESS_XDS_KIND_ENVOY_IMAGE"]
		if out := docker(t, "run", "--rm", image, "--version"); !strings.Contains(out, "/1.40.") {
			t.Errorf("envoy --version says %q, want 1.40", out)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "envoy.yaml"), []byte(staticBootstrap), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// As deploy/envoy.yaml runs it: its command, a read-only root,
		// every capability dropped.
		id := docker(t, "run", "-d", "--read-only", "--cap-drop", "ALL", "-p", "127.0.0.1::8080", "-v", dir+":/config:ro",
			"--entrypoint", "envoy", image, "--config-path", "/config/envoy.yaml", "--disable-hot-restart", "--drain-time-s", "1")
		address := published(t, id, "8080")
		framework.Eventually(t, converge, "envoy's static listener answers on "+address, func() error {
			r, err := framework.Get(address, "any.example.com", "/")
			if err != nil {
				return err
			}
			if r.Status != http.StatusOK || r.Body != "static bootstrap\n" {
				return fmt.Errorf("got %s", r)
			}
			return nil
		})
		objs := renderDeploy(t)
		var envoy corev1.Container
		for _, obj := range objs {
			if obj.GetKind() == "DaemonSet" && obj.GetName() == "envoy" {
				var ds struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				}
				if err := fromUnstructured(obj, &ds); err != nil {
					t.Fatal(err)
				}
				for _, ct := range ds.Spec.Template.Spec.Containers {
					if ct.Name == "envoy" {
						envoy = ct
					}
				}
			}
		}
		if envoy.ReadinessProbe == nil || envoy.ReadinessProbe.Exec == nil || envoy.Lifecycle == nil || envoy.Lifecycle.PreStop == nil || envoy.Lifecycle.PreStop.Exec == nil {
			t.Fatal("deploy/envoy.yaml's envoy container has no exec readiness probe or preStop hook")
		}
		docker(t, append([]string{"exec", id}, envoy.ReadinessProbe.Exec.Command...)...)
		preStop := replaceAll(envoy.Lifecycle.PreStop.Exec.Command, "sleep 20", "sleep 0")
		docker(t, append([]string{"exec", id}, preStop...)...)
		// After the drain (1 s here), the listener closes: the hook drained it.
		framework.Eventually(t, converge, "envoy's listener closed by the preStop hook's drain", func() error {
			conn, err := net.DialTimeout("tcp", address, time.Second)
			if err != nil {
				return nil
			}
			conn.Close()
			if _, err := framework.Get(address, "any.example.com", "/"); err != nil {
				return nil // published by docker-proxy, which accepts, then closes
			}
			return fmt.Errorf("%s still answers", address)
		})
		if out, err := exec.Command("docker", append([]string{"exec", id}, envoy.ReadinessProbe.Exec.Command...)...).CombinedOutput(); err == nil {
			t.Errorf("the readiness probe passes on a draining envoy: %s", out)
		}
	})
}

// staticBootstrap is an Envoy that answers every request itself, with no
// control plane.
const staticBootstrap = `admin: {address: {socket_address: {address: 127.0.0.1, port_value: 9901}}}
static_resources:
  listeners:
  - name: http
    address: {socket_address: {address: 0.0.0.0, port_value: 8080}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: http
          route_config:
            virtual_hosts:
            - name: all
              domains: ["*"]
              routes: [{match: {prefix: /}, direct_response: {status: 200, body: {inline_string: "static bootstrap\n"}}}]
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
`

// replaceAll replaces old by new in each of args.
func replaceAll(args []string, old, new string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, old, new)
	}
	return out
}

// docker runs docker with args and returns its trimmed output; a container
// it starts with -d is removed when the test ends.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	s := strings.TrimSpace(string(out))
	if len(args) > 1 && args[0] == "run" && args[1] == "-d" {
		t.Cleanup(func() {
			if t.Failed() {
				logs, _ := exec.Command("docker", "logs", "--tail", "40", s).CombinedOutput()
				t.Logf("logs of container %.12s:\n%s", s, logs)
			}
			exec.Command("docker", "rm", "-f", s).Run()
		})
	}
	return s
}

// published is the loopback address docker published container port on.
func published(t *testing.T, id, port string) string {
	t.Helper()
	out := docker(t, "port", id, port+"/tcp")
	address, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(address, "127.0.0.1:") {
		t.Fatalf("container port %s published on %q, want loopback", port, out)
	}
	return address
}
