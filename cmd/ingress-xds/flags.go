package main

import (
	"flag"
	"fmt"

	"github.com/ingress-xds/ingress-xds/translate"
)

// translateFlags registers the flags that shape translation, shared by
// serve and translate so that translate prints exactly what serve publishes.
type translateFlags struct {
	httpPort           uint
	httpsPort          uint
	enableExternalName bool
}

func (t *translateFlags) register(fs *flag.FlagSet) {
	fs.UintVar(&t.httpPort, "http-port", 8080, "port of Envoy's HTTP listener")
	fs.UintVar(&t.httpsPort, "https-port", 8443, "port of Envoy's HTTPS listener (0 disables TLS)")
	fs.BoolVar(&t.enableExternalName, "enable-external-name", false, "allow ExternalName Services as backends (any namespace can then reach any DNS name)")
}

func (t *translateFlags) validate() error {
	if t.httpPort == 0 || t.httpPort > 65535 {
		return fmt.Errorf("--http-port %d is not a port", t.httpPort)
	}
	if t.httpsPort > 65535 || t.httpsPort == t.httpPort {
		return fmt.Errorf("--https-port %d is not a port distinct from --http-port", t.httpsPort)
	}
	return nil
}

func (t *translateFlags) options() translate.Options {
	return translate.Options{
		HTTPPort:           uint32(t.httpPort),
		HTTPSPort:          uint32(t.httpsPort),
		EnableExternalName: t.enableExternalName,
	}
}
