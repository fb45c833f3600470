// Package configmap reads ingress-nginx's controller ConfigMap (serve
// --configmap): its one table (keys.go) gives every key of ingress-nginx's
// ConfigMap a verdict, as the annotation registry does for annotations,
// and Parse turns a ConfigMap's data into the typed settings the front-end
// applies. Most of the keys that change what a client sees are the
// defaults of annotations (ingress-nginx's annotation parsers take the
// ConfigMap's value as their default): those are parsed by the
// annotation's own parser into annotations.Defaults, which every Ingress
// that does not set the annotation itself gets.
package configmap

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Key is one row of the table.
type Key struct {
	Name string
	// NginxDefault is ingress-nginx's default, as its documentation
	// writes it.
	NginxDefault string
	// served says that serve --nginx-defaults gives every Ingress this
	// default (NginxDefaults): ingress-nginx's differs from Envoy's, and
	// ingress-xds honours the key.
	served bool
	// nginxValue is the default as a value, where NginxDefault, which
	// docs/configmap.md shows, abbreviates it; otherwise it is
	// NginxDefault without its quotes.
	nginxValue string
	// Annotation is the annotation (without prefix) this key is the
	// default of; empty for a key of its own.
	Annotation string
	// Note says the difference, or why the key is ignored or refused.
	Note    string
	verdict annotations.Verdict
	// check, when set, says whether ingress-xds does what the value asks
	// (an error: reported, and the key treated as unset).
	check func(string) error
	// refuses, when set, says whether the value asks for an access
	// control ingress-xds does not apply: every Ingress is then refused.
	refuses func(string) bool
	// apply, when set, reads a key of its own into the settings; its
	// error says what became of the key.
	apply func(t *Table, s *Settings, name, value string) error
	// late keys are read after the others, whose settings they read (a
	// snippet's return reads default-type and relative-redirects), in
	// the order of their names among themselves (the http-snippet's
	// zones first).
	late bool
}

// Table is the table with each key's verdict resolved against the
// annotation registry (a key that is an annotation's default has that
// annotation's verdict).
type Table struct {
	reg  *annotations.Registry
	keys []Key
	// verdicts and notes are by key, resolved.
	byName map[string]int
}

// New returns the table, resolved against reg.
func New(reg *annotations.Registry) *Table {
	t := &Table{reg: reg, keys: table(), byName: map[string]int{}}
	for i := range t.keys {
		k := &t.keys[i]
		if _, dup := t.byName[k.Name]; dup {
			panic(fmt.Sprintf("configmap: %s is listed twice", k.Name))
		}
		t.byName[k.Name] = i
		if k.Annotation == "" {
			continue
		}
		v, ok := reg.DefinedVerdict(k.Annotation)
		switch {
		case !ok || v == annotations.NotYet:
			k.verdict, k.Annotation = annotations.NotYet, ""
			k.Note = "The default of the annotation of the same name, which ingress-xds does not honour yet."
		case v == annotations.Refused:
			k.verdict, k.Annotation = annotations.NotYet, ""
			k.Note = "The default of the annotation of the same name, which ingress-xds refuses (docs/annotations.md): not honoured yet."
		default:
			k.verdict = v
			k.Note = fmt.Sprintf("The default of the annotation %s for every Ingress that does not set it, read as that annotation is (docs/annotations.md: %s). An Ingress's own annotation overrides it.", k.Annotation, v)
		}
	}
	return t
}

// Keys lists the table's keys, in its order.
func (t *Table) Keys() []Key { return slices.Clone(t.keys) }

// Verdict is a key's verdict (annotations.Unknown for a key ingress-nginx
// does not have).
func (t *Table) Verdict(name string) (annotations.Verdict, string) {
	i, ok := t.byName[name]
	if !ok {
		return annotations.Unknown, "Not a key of ingress-nginx's ConfigMap: reported and ignored."
	}
	k := t.keys[i]
	return k.verdictOrDefault(), k.Note
}

func (k Key) verdictOrDefault() annotations.Verdict {
	if k.verdict == "" {
		return annotations.Honoured
	}
	return k.verdict
}

// Issue is a ConfigMap key that could not be applied as written; it is
// reported as a Warning on the ConfigMap. Its message starts with the key
// (then "=" and the value, or ":").
type Issue struct {
	Key, Reason, Message string
}

// Settings are a ConfigMap's keys, parsed: what the front-end applies.
type Settings struct {
	// Defaults are the annotations' defaults (nil when none is set).
	Defaults *annotations.Defaults
	// snippets are allow-snippet-annotations and annotations-risk-level
	// (SnippetAnnotations).
	snippets snippetSettings
	// Snippets are location-snippet and server-snippet, translated.
	Snippets ConfigSnippets
	// RealIP says that ingress-nginx's template would turn nginx's realip
	// module on (set_real_ip_from, with use-forwarded-headers or
	// enable-real-ip): the client's address is read from a header.
	RealIP bool
	Issues []Issue
	// AllowedResponseHeaders are the header names custom-headers may set
	// (global-allowed-response-headers), besides serve's flag's.
	AllowedResponseHeaders []string
	// GlobalAuth is the external authentication of every Ingress
	// without its own (global-auth-url and its keys), as the auth-*
	// annotations' values; nil: none. enable-global-auth "false" exempts
	// an Ingress, NoAuthLocations its paths.
	GlobalAuth *annotations.Defaults
	// RetryNonIdempotent says that every location's proxy_next_upstream
	// takes non_idempotent (retry-non-idempotent).
	RetryNonIdempotent bool
	// DefaultType is the Content-Type of a snippet's return text
	// (default-type); empty: text/html.
	DefaultType string
	// RelativeRedirects sends every permanent-redirect and
	// temporal-redirect to a path as it is (relative-redirects).
	RelativeRedirects bool
	// DisableIPv6 is disable-ipv6: the listeners take IPv4 alone, where
	// serve --listen-address :: would take both.
	DisableIPv6 bool
	// BlockedWords are annotation-value-word-blocklist's words: an
	// Ingress with an annotation value that holds one is refused.
	BlockedWords []string
	// BlockCIDRs are the clients refused (403) everywhere (block-cidrs).
	BlockCIDRs []string
	// LimitReqStatus is the status of a request over a rate limit
	// (limit-req-status-code); 0: unset.
	LimitReqStatus int
	// LimitConnStatus is the status of a request over limit-connections
	// (limit-conn-status-code); 0: unset.
	LimitConnStatus int
	// HTTPRedirectCode is the status of the redirects to HTTPS
	// (http-redirect-code); 0: unset.
	HTTPRedirectCode int
	// HSTS is the Strict-Transport-Security value of every HTTPS
	// response (the hsts keys); empty: none.
	HSTS string
	// TrustedHops is how many proxies in front of Envoy are trusted with
	// X-Forwarded-For (use-forwarded-headers); 0: unset.
	TrustedHops uint32
	// NoTLSRedirect are no-tls-redirect-locations' paths; nil: unset
	// (NoTLSRedirectLocations gives the default).
	NoTLSRedirect []string
	// Block is what every listener refuses (block-user-agents,
	// block-referers; block.go); nil: nothing.
	Block *ir.RequestBlock
	// Connections are the listeners' and clusters' settings
	// (connections.go).
	Connections
	// Tracing is the listeners' OpenTelemetry tracing (tracing.go); nil:
	// no collector.
	Tracing *ir.Tracing
	// LogNames are the route variables the access log's format reads
	// ($namespace, $service_name, ...): the front-end gives every route
	// those names (ir.RouteLog).
	LogNames LogNames

	// Brotli is every route's brotli compression (enable-brotli and its
	// keys: brotli.go); nil: none.
	Brotli *ir.Compression
	// Gzip is the http level's gzip (use-gzip and its keys: gzip.go),
	// under which the snippets' apply; zero without use-gzip.
	Gzip snippet.Gzip
	// Compression is what Gzip asks of a location that sets no gzip
	// directive of its own; nil: none.
	Compression *ir.Compression

	// AddHeaders are add-headers' response headers, set on every
	// response; nil: none (ReadHeaderMaps).
	AddHeaders *ir.HeaderChanges
	// ProxySetHeaders are proxy-set-headers' request headers, each
	// translated whole for some location (snippet.ProxySetHeaders, which
	// every location asks again); nil: none (ReadHeaderMaps).
	ProxySetHeaders map[string]string

	// addHeadersFrom and proxySetHeadersFrom are the ConfigMaps
	// add-headers and proxy-set-headers name.
	addHeadersFrom, proxySetHeadersFrom types.NamespacedName
	hsts                                hstsKeys
	gzip                                gzipKeys
	brotli                              brotliKeys
	globalAuth                          *annotations.Defaults // global-auth-*, until finishGlobalAuth
	noAuth                              []string              // no-auth-locations; nil: unset
	blocks                              blockKeys
	tracing                             tracingKeys
	// base are the values under the ConfigMap's (NginxDefaults), which a
	// refused value falls back to.
	base map[string]string
}

// NginxDefaults are ingress-nginx's defaults where they differ from
// Envoy's and ingress-xds honours the key (serve --nginx-defaults): the
// values a ConfigMap that does not set these keys has in ingress-nginx.
// They are the table's: each key marked served, with its NginxDefault.
func NginxDefaults() map[string]string {
	out := map[string]string{}
	for _, k := range table() {
		if k.served {
			out[k.Name] = k.defaultValue()
		}
	}
	return out
}

// defaultValue is ingress-nginx's default as a ConfigMap value.
func (k *Key) defaultValue() string {
	if k.nginxValue != "" {
		return k.nginxValue
	}
	return strings.Trim(k.NginxDefault, "\"")
}

// ParseOver is Parse of data over base (data's keys win): a ConfigMap's
// over NginxDefaults.
func (t *Table) ParseOver(base, data map[string]string) *Settings {
	merged := maps.Clone(base)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, data)
	return t.parse(base, merged)
}

// Parse reads a ConfigMap's data. A value that does not parse, and a key
// not honoured, are issues and otherwise treated as unset; never an error.
func (t *Table) Parse(data map[string]string) *Settings { return t.parse(nil, data) }

// parse is Parse of data, which holds base's keys where the ConfigMap has
// none: a key whose value is refused as a whole falls back to base's.
func (t *Table) parse(base, data map[string]string) *Settings {
	s := &Settings{Defaults: t.reg.NewDefaults(), base: base, snippets: snippetSettings{level: annotations.RiskHigh}}
	names := slices.Sorted(maps.Keys(data))
	slices.SortStableFunc(names, func(a, b string) int { return cmpBool(t.late(a), t.late(b)) })
	for _, name := range names {
		value := data[name]
		i, ok := t.byName[name]
		if !ok {
			s.Issues = append(s.Issues, Issue{Key: name, Reason: "UnknownConfigMapKey",
				Message: fmt.Sprintf("%s: not a key of ingress-nginx's ConfigMap: ignored (docs/configmap.md)", name)})
			continue
		}
		k := t.keys[i]
		switch {
		case k.apply != nil:
			if err := k.apply(t, s, name, value); err != nil {
				s.Issues = append(s.Issues, Issue{Key: name, Reason: "InvalidConfigMapValue",
					Message: fmt.Sprintf("%s=%q: %v", name, value, err)})
			}
		case k.refuses != nil:
			if k.refuses(value) {
				s.Defaults.RefuseAll(name, k.Note)
				s.Issues = append(s.Issues, Issue{Key: name, Reason: "ConfigMapRefused",
					Message: fmt.Sprintf("%s=%q: not applied by ingress-xds: every Ingress is refused while it is set (docs/configmap.md)", name, value)})
			}
		case k.Annotation != "":
			if err := s.Defaults.Set(k.Annotation, value); err != nil {
				msg := fmt.Sprintf("%s=%q: %v: treated as unset", name, value, err)
				if s.Defaults.Refuses(k.Annotation) {
					msg = fmt.Sprintf("%s=%q: %v: an access control, so every Ingress that does not set %s itself is refused", name, value, err, k.Annotation)
				}
				s.Issues = append(s.Issues, Issue{Key: name, Reason: "InvalidConfigMapValue", Message: msg})
			}
		case k.check != nil:
			if err := k.check(value); err != nil {
				s.Issues = append(s.Issues, Issue{Key: name, Reason: "InvalidConfigMapValue",
					Message: fmt.Sprintf("%s=%q: %v: treated as unset (docs/configmap.md)", name, value, err)})
			}
		case k.verdictOrDefault() == annotations.NotYet:
			s.Issues = append(s.Issues, Issue{Key: name, Reason: "UnsupportedConfigMapKey",
				Message: fmt.Sprintf("%s: a key of ingress-nginx's ConfigMap that ingress-xds does not honour yet: ignored (docs/configmap.md)", name)})
		}
	}
	s.HSTS = s.hsts.header()
	s.finishGzip()
	s.Brotli = s.brotli.compression()
	s.Block = s.blocks.requestBlock()
	s.finishConnections()
	s.finishSnippets()
	s.Tracing = s.finishTracing()
	s.finishGlobalAuth(t.reg)
	return s
}

// late says whether the key name is read after the others (Key.late).
func (t *Table) late(name string) bool {
	i, ok := t.byName[name]
	return ok && t.keys[i].late
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
