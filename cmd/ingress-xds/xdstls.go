package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"log/slog"

	"github.com/ingress-xds/ingress-xds/xds"
)

// serveTLSFlags are serve's xDS transport security: mutual TLS from three
// PEM files, or plaintext only when asked for by name.
type serveTLSFlags struct {
	files    xds.TLSFiles
	insecure bool
}

func (f *serveTLSFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.files.Cert, "xds-tls-cert", "", "PEM certificate chain of the xDS server (reloaded when it changes)")
	fs.StringVar(&f.files.Key, "xds-tls-key", "", "PEM private key of the xDS server (reloaded when it changes)")
	fs.StringVar(&f.files.CA, "xds-tls-ca", "", "PEM CA certificates that Envoys' client certificates must chain to (reloaded when it changes)")
	fs.BoolVar(&f.insecure, "insecure", false, "serve xDS in plaintext, to any client, without TLS: for local development only")
}

// config returns the server's TLS configuration, or nil with --insecure.
// Without either, serve refuses to start: an xDS server hands out every
// route and certificate of the cluster, and must not do so to anyone by
// accident of a forgotten flag.
func (f *serveTLSFlags) config(logger *slog.Logger) (*tls.Config, error) {
	given := f.files.Cert != "" || f.files.Key != "" || f.files.CA != ""
	switch {
	case f.insecure && given:
		return nil, errors.New("--insecure and --xds-tls-cert/--xds-tls-key/--xds-tls-ca exclude each other")
	case f.insecure:
		logger.Warn("serving xDS WITHOUT TLS (--insecure): any client that reaches the xDS port gets every route and certificate; use only for local development")
		return nil, nil
	case f.files.Cert == "" || f.files.Key == "" || f.files.CA == "":
		return nil, errors.New("xDS needs mutual TLS: give --xds-tls-cert, --xds-tls-key and --xds-tls-ca (write them with `ingress-xds certgen`), or --insecure to serve in plaintext")
	}
	return xds.ServerTLS(f.files, logger)
}

// bootstrapTLSFlags are bootstrap's: the files Envoy connects with.
type bootstrapTLSFlags struct {
	files      xds.TLSFiles
	serverName string
}

func (f *bootstrapTLSFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.files.Cert, "xds-tls-cert", "", "path, as Envoy sees it, of Envoy's PEM client certificate for xDS over mutual TLS")
	fs.StringVar(&f.files.Key, "xds-tls-key", "", "path, as Envoy sees it, of Envoy's PEM client key")
	fs.StringVar(&f.files.CA, "xds-tls-ca", "", "path, as Envoy sees it, of the PEM CA certificate the xDS server's certificate must chain to")
	fs.StringVar(&f.serverName, "xds-server-name", "", "name (or IP address) the xDS server's certificate must be valid for (default: the host of --xds-address)")
}

// apply sets the TLS options: none of the files means plaintext, all three
// mean mutual TLS, and anything in between is a mistake.
func (f *bootstrapTLSFlags) apply(o *xds.BootstrapOptions) error {
	n := 0
	for _, v := range []string{f.files.Cert, f.files.Key, f.files.CA} {
		if v != "" {
			n++
		}
	}
	switch {
	case n == 0 && f.serverName != "":
		return errors.New("--xds-server-name needs --xds-tls-cert, --xds-tls-key and --xds-tls-ca")
	case n == 0:
		return nil
	case n < 3:
		return errors.New("xDS over mutual TLS needs all of --xds-tls-cert, --xds-tls-key and --xds-tls-ca")
	}
	files := f.files
	o.TLS, o.ServerName = &files, f.serverName
	return nil
}
