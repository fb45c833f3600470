package annotations

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ingress-nginx's header keys without a snippet form: custom-headers (its
// CustomHeaders group), connection-proxy-header (Connection) and
// http2-push-preload (HTTP2PushPreload).
// translate/ingress/customheaders.go applies them.

// CustomHeaders names a ConfigMap whose entries become response headers.
var CustomHeaders = key[string](&definition{
	name:   "custom-headers",
	under:  Nginx,
	scope:  ScopeRoute,
	refers: KindConfigMap,
	doc: `A ConfigMap "namespace/name" of the Ingress's own namespace whose entries (header name: value) are set on every response ` +
		`of the Ingress's paths, replacing the backend's own, as nginx's more_set_headers (Envoy's own answers included). As in ingress-nginx's ` +
		`final release, each name must be listed in the controller ConfigMap's global-allowed-response-headers (empty by default) or ` +
		`serve's --global-allowed-response-headers, names are letters, digits, "-" and "_", values ingress-nginx's printable characters. A ConfigMap that is missing, ` +
		`a name not allowed, a name or value that is not valid, or a value that is not "namespace/name" is reported and the Ingress's ` +
		`paths answer 503, as ingress-nginx denies the location. A change of the ConfigMap takes effect at once.`,
	verdict: HonouredWithDifference,
	note: `A ConfigMap of another namespace is refused (503, reported), as ingress-nginx's documentation says, where its code reads ` +
		`it. Headers that make HTTP's framing (Content-Length, Transfer-Encoding, Connection and the other hop-by-hop headers) are ` +
		`refused the same way: Envoy owns them.`,
}, parseConfigMapName)

// ConnectionProxyHeader is the Connection header sent to the backend.
var ConnectionProxyHeader = key[string](&definition{
	name:  "connection-proxy-header",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"keep-alive" or "close" (the only values ingress-nginx takes): the Connection header the backend receives, in place of ` +
		`the default, which passes WebSocket upgrades. With "close" the backend closes each connection after its response, and ` +
		`Envoy opens a new one for the next request; as through nginx, an upgrade on such a path is not passed on.`,
}, parseOneOf("keep-alive", "close"))

// HTTP2PushPreload pushes the resources a response's Link headers preload.
var HTTP2PushPreload = key[bool](&definition{
	name:    "http2-push-preload",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"true": nginx pushes, over HTTP/2, the resources a response's Link: <...>; rel=preload headers name (http2_push_preload).`,
	verdict: Ignored,
	note: `Envoy has no HTTP/2 server push (nor have browsers any more: Chrome and Firefox dropped it, and recent nginx ignores ` +
		`the directive). The Link headers reach the client as they are, which fetches the resources itself: the responses are the same.`,
}, parseBool)

// parseConfigMapName reads "namespace/name", as ingress-nginx looks a
// ConfigMap up (by that key: a name alone is never found).
func parseConfigMapName(s string) (string, error) {
	ns, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", fmt.Errorf(`not a ConfigMap's "namespace/name"`)
	}
	return ns + "/" + name, nil
}

// headerKeys lists the keys of this file, for table.
func headerKeys() []*definition {
	return []*definition{CustomHeaders.def, ConnectionProxyHeader.def, HTTP2PushPreload.def}
}
