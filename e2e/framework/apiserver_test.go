package framework

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube-apiserver and etcd listen on reserved ports, outside the kernel's
// ephemeral range (envtest's own choice would be inside it), and serve.
func TestAPIServerOnReservedPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd: skipped with -short")
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skip(err)
	}
	f := strings.Fields(string(b))
	lo, _ := strconv.Atoi(f[0])
	hi, _ := strconv.Atoi(f[1])
	a := StartAPIServer(t)
	if _, err := a.Client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	api, err := url.Parse(a.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]*url.URL{"kube-apiserver": api, "etcd": a.env.ControlPlane.Etcd.URL} {
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			t.Fatalf("%s at %s: %v", name, u, err)
		}
		if port >= lo && port <= hi {
			t.Errorf("%s listens on %d, in the ephemeral range %d-%d", name, port, lo, hi)
		}
	}
}
