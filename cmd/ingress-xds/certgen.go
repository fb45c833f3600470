package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/xds/certs"
)

func runCertgen(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("certgen", flag.ContinueOnError)
	out := fs.String("out", "", "write the certificates under this directory (server/ and client/, each with tls.crt, tls.key, ca.crt)")
	kube := fs.Bool("kube", false, "write the certificates as kubernetes.io/tls Secrets instead, with your kubeconfig's rights")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file for --kube (default: $KUBECONFIG, else in-cluster config)")
	namespace := fs.String("namespace", "ingress-xds", "namespace of the Secrets, and of the ingress-xds Service named in the default --hosts")
	serverSecret := fs.String("server-secret", certs.DefaultServerSecret, "name of the control plane's Secret (--kube)")
	clientSecret := fs.String("client-secret", certs.DefaultClientSecret, "name of the Envoys' Secret (--kube)")
	hosts := fs.String("hosts", "", "comma-separated DNS names and IP addresses of the server certificate (default: ingress-xds.NAMESPACE.svc, ingress-xds.NAMESPACE.svc.cluster.local, localhost, 127.0.0.1)")
	validity := fs.Duration("validity", 365*24*time.Hour, "how long the certificates are valid")
	overwrite := fs.Bool("overwrite", false, "replace existing certificates (rotation)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*out != "") == *kube {
		return errors.New("give exactly one of --out DIR and --kube")
	}
	serverHosts := splitList(*hosts)
	if len(serverHosts) == 0 {
		serverHosts = certs.DefaultServerHosts(*namespace)
	}
	bundle, err := certs.Generate(certs.Options{ServerHosts: serverHosts, Validity: *validity})
	if err != nil {
		return err
	}
	if *out != "" {
		if err := certs.WriteFiles(*out, bundle, *overwrite); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote a new CA and certificates for %v:\n  serve     --xds-tls-cert %s --xds-tls-key %s --xds-tls-ca %s\n  bootstrap --xds-tls-cert %s --xds-tls-key %s --xds-tls-ca %s\n",
			serverHosts,
			filepath.Join(*out, certs.ServerDir, certs.CertFile), filepath.Join(*out, certs.ServerDir, certs.KeyFile), filepath.Join(*out, certs.ServerDir, certs.CAFile),
			filepath.Join(*out, certs.ClientDir, certs.CertFile), filepath.Join(*out, certs.ClientDir, certs.KeyFile), filepath.Join(*out, certs.ClientDir, certs.CAFile))
		return nil
	}
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating kubernetes client: %w", err)
	}
	names := certs.SecretNames{Namespace: *namespace, Server: *serverSecret, Client: *clientSecret}
	if err := certs.WriteSecrets(ctx, client, names, bundle, *overwrite); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote a new CA and certificates for %v into Secrets %s/%s (control plane) and %s/%s (Envoy)\n",
		serverHosts, *namespace, *serverSecret, *namespace, *clientSecret)
	return nil
}
