package ingress

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// controllerConfig is ingress-nginx's controller ConfigMap (serve
// --configmap), parsed: an input of the translation like the Ingresses,
// read from the State (kube watches it as an object every owned Ingress
// refers to) and parsed once per version of it, never looked up later.
type controllerConfig struct {
	cm       *corev1.ConfigMap // the version parsed; nil: missing
	settings *configmap.Settings
	problems []ir.Problem
	// headerMaps are the versions of the ConfigMaps add-headers and
	// proxy-set-headers name (configmap.NamedConfigMaps, in its order)
	// that it was read with, nil for one missing: a change to either
	// reads the ConfigMap again.
	headerMaps [2]*corev1.ConfigMap
	// plainPolicy is the route policy of an Ingress that sets nothing,
	// where the ConfigMap changes it (retry-non-idempotent,
	// proxy-set-headers); nil: memo.defaultPolicy.
	plainPolicy *ir.RoutePolicy
	// proxyHeaders are proxy-set-headers' request headers for each kind
	// of location that asked, translated once.
	proxyHeaders map[proxyHeadersFor]proxyHeadersResult
}

// proxyHeadersFor is what proxy-set-headers' translation depends on of a
// location.
type proxyHeadersFor struct {
	grpc         bool
	clientHeader string
}

type proxyHeadersResult struct {
	headers *ir.HeaderChanges
	err     error
}

// defaults are the annotations' defaults it sets (nil: none).
func (c *controllerConfig) defaults() *annotations.Defaults {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Defaults
}

// snippetAnnotations is what becomes of the snippet annotations: under
// ingress-nginx's defaults when the ConfigMap is missing.
func (c *controllerConfig) snippetAnnotations() configmap.SnippetAnnotations {
	if c == nil || c.settings == nil {
		return configmap.SnippetsRefused
	}
	return c.settings.SnippetAnnotations()
}

// blockCIDRs are block-cidrs' ranges.
func (c *controllerConfig) blockCIDRs() []string {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.BlockCIDRs
}

// limitStatus is the status of a request over a rate limit.
func (c *controllerConfig) limitStatus() uint32 {
	if c == nil || c.settings == nil || c.settings.LimitReqStatus == 0 {
		return limitStatus
	}
	return uint32(c.settings.LimitReqStatus)
}

// limitConnStatus is the status of a request over limit-connections.
func (c *controllerConfig) limitConnStatus() uint32 {
	if c == nil || c.settings == nil || c.settings.LimitConnStatus == 0 {
		return limitStatus
	}
	return uint32(c.settings.LimitConnStatus)
}

// redirectCode is the status of the redirects to HTTPS.
func (c *controllerConfig) redirectCode() uint32 {
	if c == nil || c.settings == nil || c.settings.HTTPRedirectCode == 0 {
		return httpRedirectCode
	}
	return uint32(c.settings.HTTPRedirectCode)
}

// hsts is the Strict-Transport-Security value of the HTTPS listener.
func (c *controllerConfig) hsts() string {
	if c == nil || c.settings == nil {
		return ""
	}
	return c.settings.HSTS
}

// retryNonIdempotent says whether every location's retries take POST,
// LOCK and PATCH once sent (retry-non-idempotent).
func (c *controllerConfig) retryNonIdempotent() bool {
	return c != nil && c.settings != nil && c.settings.RetryNonIdempotent
}

// defaultPolicy is the route policy of an Ingress that sets nothing,
// where the ConfigMap changes it; nil: memo.defaultPolicy.
func (c *controllerConfig) defaultPolicy() *ir.RoutePolicy {
	if c == nil {
		return nil
	}
	return c.plainPolicy
}

// addHeaders are add-headers' response headers, on every response; nil:
// none.
func (c *controllerConfig) addHeaders() *ir.HeaderChanges {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.AddHeaders
}

// defaultType is the Content-Type of a snippet's return text
// (default-type); empty: text/html.
func (c *controllerConfig) defaultType() string {
	if c == nil || c.settings == nil {
		return ""
	}
	return c.settings.DefaultType
}

// relativeRedirects says whether every Ingress's redirects to a path
// are sent as they are (relative-redirects).
func (c *controllerConfig) relativeRedirects() bool {
	return c != nil && c.settings != nil && c.settings.RelativeRedirects
}

// riskLevel is annotations-risk-level: ingress-nginx's default, High,
// while the ConfigMap is missing or does not set it.
func (c *controllerConfig) riskLevel() annotations.Risk {
	if c == nil || c.settings == nil {
		return annotations.RiskHigh
	}
	return c.settings.RiskLevel()
}

// disableIPv6 is disable-ipv6.
func (c *controllerConfig) disableIPv6() bool {
	return c != nil && c.settings != nil && c.settings.DisableIPv6
}

// blockedWords are annotation-value-word-blocklist's words.
func (c *controllerConfig) blockedWords() []string {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.BlockedWords
}

// brotli is every route's brotli compression (enable-brotli); nil: none.
func (c *controllerConfig) brotli() *ir.Compression {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Brotli
}

// proxySetHeaders are proxy-set-headers' request headers in a location
// where says, the same value for every location alike; nil: none.
func (c *controllerConfig) proxySetHeaders(where snippet.Options) (*ir.HeaderChanges, error) {
	if c == nil || c.settings == nil || c.settings.ProxySetHeaders == nil {
		return nil, nil
	}
	key := proxyHeadersFor{grpc: where.Backend == "GRPC" || where.Backend == "GRPCS", clientHeader: where.ClientHeader}
	r, ok := c.proxyHeaders[key]
	if !ok {
		r.headers, r.err = snippet.ProxySetHeaders(c.settings.ProxySetHeaders, snippet.Options{Backend: where.Backend, ClientHeader: where.ClientHeader})
		if c.proxyHeaders == nil {
			c.proxyHeaders = map[proxyHeadersFor]proxyHeadersResult{}
		}
		c.proxyHeaders[key] = r
	}
	return r.headers, r.err
}

// realIP says whether ingress-nginx's template would turn nginx's realip
// module on (configmap.Settings.RealIP).
func (c *controllerConfig) realIP() bool { return c != nil && c.settings != nil && c.settings.RealIP }

// trustedHops is use-forwarded-headers' trusted proxies (0: unset).
func (c *controllerConfig) trustedHops() uint32 {
	if c == nil || c.settings == nil {
		return 0
	}
	return c.settings.TrustedHops
}

// appliesToEvery says whether it sets something for an Ingress that has
// no annotation.
func (c *controllerConfig) appliesToEvery() bool {
	return c.defaults().Len() > 0 || len(c.blockCIDRs()) > 0 || c.snippets().Location != nil || c.compression() != nil || c.globalAuth() != nil
}

// globalAuth is the external authentication of every Ingress without its
// own (global-auth-url), as the auth-* annotations' values; nil: none.
func (c *controllerConfig) globalAuth() *annotations.Defaults {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.GlobalAuth
}

// allowedResponseHeaders are the ConfigMap's
// global-allowed-response-headers.
func (c *controllerConfig) allowedResponseHeaders() []string {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.AllowedResponseHeaders
}

// noAuth are the Ingress paths the global authentication leaves out
// (no-auth-locations).
func (c *controllerConfig) noAuth() []string { return c.settings.NoAuthLocations() }

// gzip is the http level's gzip (use-gzip and its keys), under which a
// snippet's gzip directives apply; zero without use-gzip.
func (c *controllerConfig) gzip() snippet.Gzip {
	if c == nil || c.settings == nil {
		return snippet.Gzip{}
	}
	return c.settings.Gzip
}

// compression is what the http level's gzip asks of a location that sets
// none of its own: one value, shared by every route; nil: none.
func (c *controllerConfig) compression() *ir.Compression {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Compression
}

// snippets are the ConfigMap's location-snippet and server-snippet,
// translated.
func (c *controllerConfig) snippets() configmap.ConfigSnippets {
	if c == nil || c.settings == nil {
		return configmap.ConfigSnippets{}
	}
	return c.settings.Snippets
}

// serverSnippet is the ConfigMap's server-snippet, translated; nil: none.
func (c *controllerConfig) serverSnippet() *snippet.Result { return c.snippets().Server }

// controllerConfig returns the parsed ConfigMap named (nil when none is),
// parsing it again only when it is a new object.
func (m *memo) controllerConfig(st *kube.State, name types.NamespacedName, nginxDefaults bool) *controllerConfig {
	if name.Name == "" && !nginxDefaults {
		return nil
	}
	var cm *corev1.ConfigMap
	var headerMaps [2]*corev1.ConfigMap
	if name.Name != "" {
		cm = st.ConfigMaps[name]
	}
	if cm != nil {
		for i, n := range configmap.NamedConfigMaps(cm.Data) {
			if i < len(headerMaps) {
				headerMaps[i] = st.ConfigMaps[n]
			}
		}
	}
	if m.config != nil && m.config.cm == cm && m.configName == name && m.config.headerMaps == headerMaps {
		return m.config
	}
	if m.configTable == nil {
		m.configTable = configmap.New(m.reg)
	}
	c := &controllerConfig{cm: cm, headerMaps: headerMaps}
	// A ConfigMap not there applies nothing (but the defaults), and is no
	// object's problem (the audit says it is missing): ingress-nginx
	// starts without one.
	var base, data map[string]string
	if nginxDefaults {
		base = configmap.NginxDefaults()
	}
	if cm != nil {
		data = cm.Data
	}
	if cm != nil || nginxDefaults {
		c.settings = m.configTable.ParseOver(base, data)
		c.settings.ReadHeaderMaps(func(n types.NamespacedName) (map[string]string, bool) {
			if hm := st.ConfigMaps[n]; hm != nil {
				return hm.Data, true
			}
			return nil, false
		})
		c.plainPolicy = c.readPlainPolicy()
		for _, is := range c.settings.Issues {
			c.problems = append(c.problems, ir.Problem{Kind: "ConfigMap", Namespace: name.Namespace, Name: name.Name,
				Reason: is.Reason, Message: truncate(is.Message)})
		}
	}
	m.config, m.configName = c, name
	return c
}

// readPlainPolicy is the route policy of an Ingress that sets nothing,
// where the ConfigMap changes it: retry-non-idempotent's retries, and
// proxy-set-headers' headers in a location that proxies over HTTP; nil:
// it does not.
func (c *controllerConfig) readPlainPolicy() *ir.RoutePolicy {
	var where snippet.Options
	if d := c.downstream(ir.HTTP, false); d != nil {
		where.ClientHeader = d.ClientHeader
	}
	headers, _ := c.proxySetHeaders(where)
	if !c.settings.RetryNonIdempotent && headers == nil {
		return nil
	}
	return &ir.RoutePolicy{Retries: defaultRetries(c.settings.RetryNonIdempotent), RequestHeaders: headers}
}

// truncate bounds a message quoting a ConfigMap's value, as newProblem
// bounds an Ingress's.
func truncate(msg string) string {
	msg = redactUserinfo(msg)
	if len(msg) > maxMessage {
		return strings.ToValidUTF8(msg[:maxMessage], "") + "..."
	}
	return msg
}

// WithConfigMap is refs with the controller ConfigMap name among what
// every Ingress refers to (none when name is empty): its keys are every
// Ingress's defaults, so kube keeps it (and watches it) while some owned
// Ingress is there to apply it to; and so are the ConfigMaps its keys
// name (add-headers, proxy-set-headers: configmap.NamedConfigMaps).
func WithConfigMap(refs func(*networkingv1.Ingress) []kube.Reference, name types.NamespacedName) kube.Refs {
	if name.Name == "" {
		return kube.Refs{Ingress: refs}
	}
	config := kube.Reference{Kind: kube.KindConfigMap, NamespacedName: name}
	return kube.Refs{
		Ingress: func(ing *networkingv1.Ingress) []kube.Reference {
			return append(slices.Clip(refs(ing)), config)
		},
		ConfigMap: func(cm *corev1.ConfigMap) []kube.Reference {
			if cm.Namespace != name.Namespace || cm.Name != name.Name {
				return nil
			}
			var out []kube.Reference
			for _, n := range configmap.NamedConfigMaps(cm.Data) {
				out = append(out, kube.Reference{Kind: kube.KindConfigMap, NamespacedName: n})
			}
			return out
		},
	}
}
