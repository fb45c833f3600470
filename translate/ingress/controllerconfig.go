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
	// retryAll is the route policy of an Ingress that sets nothing under
	// retry-non-idempotent (memo.defaultPolicy's otherwise); nil: unset.
	retryAll *ir.RoutePolicy
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
	return c.retryAll
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
	if name.Name != "" {
		cm = st.ConfigMaps[name]
	}
	if m.config != nil && m.config.cm == cm && m.configName == name {
		return m.config
	}
	if m.configTable == nil {
		m.configTable = configmap.New(m.reg)
	}
	c := &controllerConfig{cm: cm}
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
		if c.settings.RetryNonIdempotent {
			c.retryAll = &ir.RoutePolicy{Retries: defaultRetries(true)}
		}
		for _, is := range c.settings.Issues {
			c.problems = append(c.problems, ir.Problem{Kind: "ConfigMap", Namespace: name.Namespace, Name: name.Name,
				Reason: is.Reason, Message: truncate(is.Message)})
		}
	}
	m.config, m.configName = c, name
	return c
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
// Ingress is there to apply it to.
func WithConfigMap(refs func(*networkingv1.Ingress) []kube.Reference, name types.NamespacedName) kube.Refs {
	if name.Name == "" {
		return kube.Refs{Ingress: refs}
	}
	config := kube.Reference{Kind: kube.KindConfigMap, NamespacedName: name}
	return kube.Refs{Ingress: func(ing *networkingv1.Ingress) []kube.Reference {
		return append(slices.Clip(refs(ing)), config)
	}}
}
