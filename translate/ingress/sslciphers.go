package ingress

import (
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// The ssl-ciphers annotation is per host in ingress-nginx (its server's
// ssl_ciphers): the oldest Ingress routing a host that sets it sets it for
// the whole host, over the controller ConfigMap's ssl-ciphers.

// parseSSLCiphers reads the annotation, the ciphers of the Ingress's
// hosts; "DEFAULT" sets nothing (empty).
func parseSSLCiphers(values *annotations.Values) string {
	if c, ok := annotations.SSLCiphers.Get(values); ok && len(c) > 0 {
		return strings.Join(c, ":")
	}
	return ""
}

// mergeSSLCiphers gives the host the ciphers of its oldest Ingress that
// sets them.
func (h *hostMerge) mergeSSLCiphers(host string, frags []*fragment) {
	if h.vhost == nil {
		return
	}
	for _, f := range frags {
		if f.sslCiphers != "" && f.canary == nil && routesHost(f, host) {
			h.vhost.TLSCiphers = f.sslCiphers
			return
		}
	}
}
