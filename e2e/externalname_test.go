package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// externalNameManifests are an ExternalName Service of name, reached on
// port, and an Ingress of host sending to it.
func externalNameManifests(svc, name string, port int, host string) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: default}
spec: {type: ExternalName, externalName: %[2]s}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s, namespace: default}
spec:
  rules: [{host: %[4]s, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: %[1]s, port: {number: %[3]d}}}}]}}]
`, svc, name, port, host)
}

// logHas waits for the control plane's log to hold every part on one line.
func logHas(t *testing.T, cp *framework.ControlPlane, parts ...string) {
	t.Helper()
	framework.Eventually(t, convergeTimeout, "log line with "+strings.Join(parts, ", "), func() error {
		data, err := os.ReadFile(cp.LogPath)
		if err != nil {
			return err
		}
	lines:
		for _, line := range strings.Split(string(data), "\n") {
			for _, p := range parts {
				if !strings.Contains(line, p) {
					continue lines
				}
			}
			return nil
		}
		return fmt.Errorf("no such line in %s", cp.LogPath)
	})
}

// TestExternalNameResolvedAddresses checks, through a real Envoy, that
// whatever Envoy connects to for an ExternalName Service is checked by
// address, not only by name (the class of Contour's GHSA-5ph6-qq5x-7jwc):
// the control plane resolves the name and hands Envoy the addresses, so
// Envoy does no DNS of its own. A name served by a real DNS server is
// served while it points at a backend in a network namespace, refused
// (503, ExternalNameRefused) once it is re-pointed at loopback, where a
// local echo backend listens that must never be reached, and served again
// when it points away; a name resolving to loopback from the start is
// refused too. ingress-nginx's test/e2e/servicebackend/service_externalname.go
// serves ExternalName Services through its own resolver (its balancer's
// DNS), which checks no address.
func TestExternalNameResolvedAddresses(t *testing.T) {
	local := echoBackends(t, "local")[0]
	netns := framework.NewNetns(t)
	remote := netns.IP + ":8080"
	framework.StartProcess(t, "echo-netns", netns.Command(framework.EchoBinary(t), "-listen", remote+"=netns-echo"))
	framework.Eventually(t, convergeTimeout, "echo in the namespace answers", func() error {
		return framework.Expect(remote, "direct", "/", http.StatusOK, "netns-echo")
	})
	localPort := local.Port

	d := framework.StartDNS(t, 1)
	d.Set("app.ext.test", netns.IP)
	d.Set("loop.ext.test", "127.0.0.1")
	dir := t.TempDir()
	writeManifest(t, dir, "ext.yaml", externalNameManifests("app", "app.ext.test", 8080, "app.example")+
		externalNameManifests("loop", "loop.ext.test", localPort, "loop.example"))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--enable-external-name",
		"--external-name-dns-server", d.Address, "--external-name-refresh", "2s")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })

	framework.Eventually(t, convergeTimeout, "the name's backend served", func() error {
		return envoy.Expect("app.example", "/", http.StatusOK, "netns-echo")
	})
	if err := envoy.Expect("loop.example", "/", http.StatusServiceUnavailable, ""); err != nil {
		t.Error(err)
	}
	logHas(t, cp, "reason=ExternalNameRefused", "loop.ext.test", "resolves to 127.0.0.1, a loopback address")

	t.Run("re-pointed at loopback after the first resolution", func(t *testing.T) {
		d.Set("app.ext.test", "127.0.0.1")
		took := framework.Eventually(t, convergeTimeout, "refused", func() error {
			return envoy.Expect("app.example", "/", http.StatusServiceUnavailable, "")
		})
		t.Logf("measured: DNS change to refusal in %s (TTL 1 s)", took.Round(time.Millisecond))
		logHas(t, cp, "reason=ExternalNameRefused", "app.ext.test", "resolves to 127.0.0.1")
		d.Set("app.ext.test", netns.IP)
		framework.Eventually(t, convergeTimeout, "served again", func() error {
			return envoy.Expect("app.example", "/", http.StatusOK, "netns-echo")
		})
	})
	t.Run("the link-local metadata address", func(t *testing.T) {
		d.Set("app.ext.test", netns.IP, "169.254.169.254")
		framework.Eventually(t, convergeTimeout, "refused", func() error {
			return envoy.Expect("app.example", "/", http.StatusServiceUnavailable, "")
		})
		d.Set("app.ext.test", netns.IP)
		framework.Eventually(t, convergeTimeout, "served again", func() error {
			return envoy.Expect("app.example", "/", http.StatusOK, "netns-echo")
		})
	})
	if n := local.Requests(); n != 0 {
		t.Errorf("the local backend got %d requests through an ExternalName", n)
	}
}

// TestExternalNameFromHostsFile checks the case a new user tries first: a
// name that /etc/hosts maps to loopback, through the system's resolver
// (serve's default), is refused, where a local backend listens.
func TestExternalNameFromHostsFile(t *testing.T) {
	name := loopbackHostsName(t)
	local := echoBackends(t, "local")[0]
	localPort := local.Port
	dir := t.TempDir()
	writeManifest(t, dir, "ext.yaml", externalNameManifests("hosts", name, localPort, "hosts.example"))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--enable-external-name")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	logHas(t, cp, "reason=ExternalNameRefused", name, "a loopback address")
	if err := envoy.Expect("hosts.example", "/", http.StatusServiceUnavailable, ""); err != nil {
		t.Error(err)
	}
	if n := local.Requests(); n != 0 {
		t.Errorf("the local backend got %d requests", n)
	}
}

// loopbackHostsName is a name other than localhost that /etc/hosts maps to
// a loopback address, or skips the test.
func loopbackHostsName(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/etc/hosts")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.SplitN(sc.Text(), "#", 2)[0])
		if len(fields) < 2 {
			continue
		}
		if ip, err := netip.ParseAddr(fields[0]); err != nil || !ip.IsLoopback() {
			continue
		}
		for _, n := range fields[1:] {
			if n != "localhost" && !strings.HasSuffix(n, ".localhost") && !strings.Contains(n, "localhost") {
				return n
			}
		}
	}
	t.Skip("/etc/hosts maps no name but localhost to loopback")
	return ""
}
