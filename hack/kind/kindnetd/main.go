// Command kindnetd stands in for kind's kindnetd in the locally built node
// image (hack/kind-images.sh, docs/kind.md): kind's own is neither on a
// registry reachable here nor on the Go module proxy (it is a nested module
// of kind's repository, never tagged). It runs from kind's unchanged default
// CNI manifest (a hostNetwork DaemonSet given HOST_IP and POD_SUBNET, with
// the node's /etc/cni/net.d mounted) and does what kindnetd does for
// pod-to-pod traffic:
//   - writes this node's CNI configuration, ptp + host-local over the node's
//     spec.podCIDR, chained with portmap for hostPorts;
//   - keeps a route to every other node's podCIDR through that node's
//     InternalIP (the nodes share one docker network).
//
// Unlike kindnetd it masquerades nothing: pods reach other pods and the
// nodes, which is all a cluster with no way out needs; it enforces no
// NetworkPolicy either.
package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const cniConfPath = "/etc/cni/net.d/10-kindnet.conflist"

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("kindnetd stand-in failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	hostIP, err := netip.ParseAddr(os.Getenv("HOST_IP"))
	if err != nil {
		return fmt.Errorf("HOST_IP: %w", err)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster config: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	factory := informers.NewSharedInformerFactory(client, 0)
	nodes := factory.Core().V1().Nodes()
	kick := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, n any) { notify(n) },
		DeleteFunc: notify,
	}); err != nil {
		return fmt.Errorf("node handler: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	log.Info("watching nodes", "hostIP", hostIP)

	// A periodic pass as well as the events: a route deleted behind our back
	// comes back.
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		if err := reconcile(log, nodes.Lister(), hostIP); err != nil {
			log.Warn("reconcile", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-tick.C:
		}
	}
}

// reconcile writes this node's CNI configuration and routes the other nodes'
// pod CIDRs through them.
func reconcile(log *slog.Logger, lister listersv1.NodeLister, hostIP netip.Addr) error {
	all, err := lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	var errs []error
	for _, n := range all {
		ip, ok := internalIP(n)
		if !ok || n.Spec.PodCIDR == "" {
			continue // not registered fully yet; its update comes
		}
		cidr, err := netip.ParsePrefix(n.Spec.PodCIDR)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s podCIDR: %w", n.Name, err))
			continue
		}
		if ip == hostIP {
			changed, err := writeIfChanged(cniConfPath, cniConf(cidr))
			if err != nil {
				errs = append(errs, err)
			} else if changed {
				log.Info("wrote CNI configuration", "path", cniConfPath, "podCIDR", cidr)
			}
			continue
		}
		if out, err := exec.Command("ip", "route", "replace", cidr.String(), "via", ip.String()).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("route %s via %s (node %s): %w: %s", cidr, ip, n.Name, err, out))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d nodes: %v", len(errs), errs)
	}
	return nil
}

func internalIP(n *corev1.Node) (netip.Addr, bool) {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}

// cniConf is kindnetd's configuration: a veth pair per pod (ptp) with an
// address from this node's range, and portmap for the pods' hostPorts.
func cniConf(podCIDR netip.Prefix) []byte {
	return fmt.Appendf(nil, `{
  "cniVersion": "0.4.0",
  "name": "kindnet",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "routes": [{"dst": "0.0.0.0/0"}],
        "ranges": [[{"subnet": %q}]]
      },
      "mtu": 1500
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, podCIDR.String())
}

// writeIfChanged replaces path atomically (the container runtime reads the
// directory at any time) when its content differs.
func writeIfChanged(path string, content []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return false, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kindnet-*")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}
