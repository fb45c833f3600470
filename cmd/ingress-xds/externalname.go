package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// externalNameFlags are how the control plane resolves ExternalName
// Services (with --enable-external-name): Envoy is handed the checked
// addresses, never the name (kube.ResolvingSource).
type externalNameFlags struct {
	dnsServer  string
	refresh    time.Duration
	allowLocal bool
}

func (e *externalNameFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.dnsServer, "external-name-dns-server", "", "HOST:PORT of the DNS server ExternalName Services' names are asked of, following the records' TTL (default: the system's resolver, /etc/hosts included, every --external-name-refresh)")
	fs.DurationVar(&e.refresh, "external-name-refresh", 30*time.Second, "look each ExternalName up again at least this often (the system's resolver gives no TTL; a longer TTL is cut to this)")
	fs.BoolVar(&e.allowLocal, "external-name-allow-local", false, "let ExternalName Services resolve to loopback, link-local (cloud metadata), unspecified and this node's own addresses, which are refused otherwise")
}

func (e *externalNameFlags) validate() error {
	if e.refresh < time.Second {
		return fmt.Errorf("--external-name-refresh %s is under a second", e.refresh)
	}
	if e.dnsServer != "" {
		if _, _, err := net.SplitHostPort(e.dnsServer); err != nil {
			return fmt.Errorf("--external-name-dns-server %q is not HOST:PORT: %w", e.dnsServer, err)
		}
	}
	return nil
}

func (e *externalNameFlags) resolver() kube.Resolver {
	if e.dnsServer != "" {
		return kube.DNSResolver{Server: e.dnsServer}
	}
	return kube.SystemResolver{}
}

// resolving wraps source so that the control plane resolves ExternalName
// Services, when they are enabled. With a client (cluster mode), the
// Nodes' addresses are refused too, unless local addresses are allowed.
func (t *translateFlags) resolving(source kube.Source, client kubernetes.Interface, logger *slog.Logger) kube.Source {
	if !t.enableExternalName {
		return source
	}
	e := &t.externalName
	s := &kube.ResolvingSource{Source: source, Resolver: e.resolver(), Policy: kube.AddressPolicy{AllowLocal: e.allowLocal},
		MaxInterval: e.refresh, Logger: logger.With("component", "external-names"),
		// Mirror targets' names too: Envoy gets their checked addresses.
		ExtraNames: ingress.MirrorNames(t.annotationsPrefix)}
	if client != nil && !e.allowLocal {
		s.Nodes = &kube.NodeAddresses{Client: client}
	}
	return s
}

// resolveOnce is resolving for translate -f: each name looked up once.
func (t *translateFlags) resolveOnce(ctx context.Context, st *kube.State) *kube.State {
	if !t.enableExternalName {
		return st
	}
	e := &t.externalName
	return kube.ResolveNames(ctx, st, e.resolver(), kube.AddressPolicy{AllowLocal: e.allowLocal}, ingress.MirrorNames(t.annotationsPrefix))
}
