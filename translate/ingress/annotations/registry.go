// Package annotations is the one table of the Ingress annotations
// ingress-xds knows: each key is declared once (keys.go), with the prefixes
// it is read under, its scope, a parser that returns a typed value or an
// error, and a line of documentation. Everything else derives from that
// table: parsing an Ingress's annotations (Parse), the problems for values
// that do not parse and keys that are not known, and docs/annotations.md
// (Markdown).
package annotations

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The prefixes annotations are read under.
const (
	// OwnPrefix is ingress-xds's own.
	OwnPrefix = "ingress-xds.io"
	// NginxPrefix is ingress-nginx's default --annotations-prefix.
	NginxPrefix = "nginx.ingress.kubernetes.io"
	// LegacyPrefix is the prefix of the first Ingress controllers, which
	// some Ingresses still carry.
	LegacyPrefix = "ingress.kubernetes.io"
)

// Family names a group of prefixes a key is read under.
type Family uint8

const (
	// Own is OwnPrefix.
	Own Family = 1 << iota
	// Nginx is the configured ingress-nginx prefix (NginxPrefix by
	// default).
	Nginx
	// Legacy is LegacyPrefix.
	Legacy
)

// Scope says what a key applies to.
type Scope string

const (
	// ScopeRoute keys apply to each route (path) of the Ingress.
	ScopeRoute Scope = "route"
	// ScopeHost keys apply to the Ingress's hosts.
	ScopeHost Scope = "host"
	// ScopeCluster keys apply to the clusters the Ingress's routes send to.
	ScopeCluster Scope = "cluster"
)

// Verdict is what ingress-xds does with a key.
type Verdict string

const (
	// Honoured: the key does what it does in ingress-nginx, as a client
	// sees it.
	Honoured Verdict = "honoured"
	// HonouredWithDifference: it does, but for the difference its note
	// states.
	HonouredWithDifference Verdict = "honoured, with a difference"
	// Ignored: it has no meaning for Envoy (buffer sizes and the like);
	// the note says why.
	Ignored Verdict = "ignored"
	// Refused: an Ingress carrying it is not served; the note says why.
	Refused Verdict = "refused"
	// NotYet: an ingress-nginx key ingress-xds does not honour yet: it is
	// reported and otherwise ignored.
	NotYet Verdict = "not honoured yet"
)

// definition is one row of the table.
type definition struct {
	name    string // without prefix
	aliases []string
	under   Family
	scope   Scope
	doc     string
	verdict Verdict // Honoured when empty
	note    string  // the difference, or why it is ignored or refused
	// parse is the key's typed parser (Key.parse) with its value boxed,
	// so that the table can hold keys of every type: set by key alone.
	parse func(string) (any, error)
	// refers is the kind of object the value names ("namespace/name"):
	// KindSecret, KindConfigMap, or empty for none. References lists them.
	refers string
}

// The kinds of object a key may name.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// Referenced is an object an annotation names; an empty Namespace is the
// annotated object's.
type Referenced struct {
	Kind, Namespace, Name string
}

// References lists the objects an object's annotations name (those that
// parse, under the key that wins), in key order, so that the caller can
// keep those objects at hand for the translator.
func (r *Registry) References(annotations map[string]string) []Referenced {
	values, _ := r.Parse(annotations)
	var out []Referenced
	for _, d := range r.defs {
		raw, ok := values.parsed[d]
		if d.refers == "" || !ok {
			continue
		}
		ns, name, ok := strings.Cut(raw.(string), "/")
		if !ok {
			// A name alone (auth-secret's) is of the object's own
			// namespace, which the caller knows.
			ns, name = "", raw.(string)
		}
		out = append(out, Referenced{Kind: d.refers, Namespace: ns, Name: name})
	}
	return out
}

func (d *definition) verdictOrDefault() Verdict {
	if d.verdict == "" {
		return Honoured
	}
	return d.verdict
}

// Key is a known annotation whose value parses to a T: its row of the
// table and its parser, declared together by key.
type Key[T any] struct {
	def   *definition
	parse func(string) (T, error)
}

// key declares an annotation: its row of the table (without parser) and
// its parser, whose result is the key's type. The row's boxed parser is
// made from it here, and nowhere else, so that a value stored under the
// row is always a T.
func key[T any](d *definition, parse func(string) (T, error)) Key[T] {
	d.parse = boxed(parse)
	return Key[T]{def: d, parse: parse}
}

// boxed is parse with its value boxed, for the table's rows.
func boxed[T any](parse func(string) (T, error)) func(string) (any, error) {
	return func(s string) (any, error) {
		v, err := parse(s)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// Get returns the key's parsed value and whether the Ingress set it (with a
// value that parsed).
func (k Key[T]) Get(v *Values) (T, bool) {
	raw, ok := v.parsed[k.def]
	if !ok {
		var zero T
		return zero, false
	}
	return raw.(T), true // stored by k.def.parse, which key made from k.parse
}

// Parse parses value as the key's value is parsed: for the ConfigMap's keys
// of their own that take an annotation's form (block-cidrs takes
// denylist-source-range's).
func (k Key[T]) Parse(value string) (T, error) { return k.parse(value) }

// Invalid reports whether the Ingress set the key with a value that did
// not parse (and was reported): for keys whose absence would be less safe
// than refusing, such as the Secret a verification needs.
func (k Key[T]) Invalid(v *Values) bool { return v.invalid[k.def] }

// Name is the key without its prefix.
func (k Key[T]) Name() string { return k.def.name }

// Values are an object's annotations, parsed.
type Values struct {
	parsed  map[*definition]any
	invalid map[*definition]bool
}

// Issue is an annotation that could not be honoured as written.
type Issue struct {
	Key, Value string
	// Reason is CamelCase, as in a Kubernetes Event.
	Reason  string
	Message string
	// Refusal, when set, says why the issue refuses the Ingress (an
	// access control not applied: refusal.go); Message then says what is
	// wrong, and the front-end what becomes of the Ingress.
	Refusal string
}

// Registry reads annotations through the table.
type Registry struct {
	nginxPrefix string
	defs        []*definition
	// catalogue is ingress-nginx's keys, by name.
	catalogue map[string]nginxKey
	// byKey maps every full key (prefix/name, for each prefix and alias)
	// to its definition, with its rank: where one key is set under two
	// names, the lower rank wins.
	byKey map[string]rankedDef
	// access are the keys that guard access, and why (refusal.go).
	access map[string]string
}

type rankedDef struct {
	def  *definition
	rank int
}

// New returns the registry of every known key, reading ingress-nginx's keys
// under nginxPrefix (NginxPrefix when empty).
func New(nginxPrefix string) *Registry {
	if nginxPrefix == "" {
		nginxPrefix = NginxPrefix
	}
	r := &Registry{nginxPrefix: nginxPrefix, defs: table(), byKey: map[string]rankedDef{}, catalogue: map[string]nginxKey{}, access: accessControls()}
	for _, k := range nginxCatalogue() {
		r.catalogue[k.name] = k
	}
	// The old names ingress-nginx still reads.
	r.catalogue["whitelist-source-range"] = r.catalogue["allowlist-source-range"]
	r.catalogue["limit-whitelist"] = r.catalogue["limit-allowlist"]
	for _, d := range r.defs {
		for i, full := range r.fullKeys(d) {
			if _, dup := r.byKey[full]; dup {
				panic(fmt.Sprintf("annotations: %s is declared twice", full))
			}
			r.byKey[full] = rankedDef{def: d, rank: i}
		}
	}
	return r
}

// prefixes lists the prefixes of a family set, in precedence order.
func (r *Registry) prefixes(f Family) []string {
	var out []string
	if f&Own != 0 {
		out = append(out, OwnPrefix)
	}
	if f&Nginx != 0 {
		out = append(out, r.nginxPrefix)
	}
	if f&Legacy != 0 {
		out = append(out, LegacyPrefix)
	}
	return out
}

// fullKeys lists every key a definition is read under, in precedence
// order: prefixes first, then the name before its aliases.
func (r *Registry) fullKeys(d *definition) []string {
	var out []string
	for _, p := range r.prefixes(d.under) {
		for _, name := range append([]string{d.name}, d.aliases...) {
			out = append(out, p+"/"+name)
		}
	}
	return out
}

// NginxPrefix is the prefix ingress-nginx's annotations are read under.
func (r *Registry) NginxPrefix() string { return r.nginxPrefix }

// known reports whether a key is under one of the prefixes we read, where
// a key we do not know is worth telling the user about.
func (r *Registry) known(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	return ok && (prefix == OwnPrefix || prefix == r.nginxPrefix || prefix == LegacyPrefix)
}

// Parse reads an object's annotations. Keys under our prefixes that the
// table does not have, and values that do not parse, are issues; a value
// that does not parse is treated as not set, as ingress-nginx treats it.
func (r *Registry) Parse(annotations map[string]string) (*Values, []Issue) {
	v := &Values{}
	var issues []Issue
	winner := map[*definition]string{} // the full key each value came from
	keys := make([]string, 0, len(annotations))
	for key := range annotations {
		if r.known(key) {
			keys = append(keys, key)
		}
	}
	// By precedence, then name: the outcome never depends on map order.
	slices.SortFunc(keys, func(a, b string) int {
		ra, rb := r.byKey[a], r.byKey[b]
		return cmp.Or(cmp.Compare(ra.rank, rb.rank), strings.Compare(a, b))
	})
	for _, key := range keys {
		value := annotations[key]
		rd, ok := r.byKey[key]
		prefix, name, _ := strings.Cut(key, "/")
		if why := r.refusal(name, rd.def, prefix == r.nginxPrefix); why != "" {
			issues = append(issues, Issue{Key: key, Value: value, Reason: ReasonUnsupportedAccess, Refusal: why,
				Message: "not applied by ingress-xds"})
			continue
		}
		if !ok && prefix == r.nginxPrefix && r.catalogue[name].name != "" {
			issues = append(issues, Issue{Key: key, Value: value, Reason: "UnsupportedAnnotation",
				Message: fmt.Sprintf("ingress-nginx's annotation %s is not honoured yet by ingress-xds: ignored (docs/annotations.md)", key)})
			continue
		}
		if !ok {
			issues = append(issues, Issue{Key: key, Value: value, Reason: "UnknownAnnotation",
				Message: fmt.Sprintf("annotation %s is not known to ingress-xds: ignored (docs/annotations.md lists those it knows)", key)})
			continue
		}
		if first, set := winner[rd.def]; set {
			if annotations[first] != value {
				issues = append(issues, Issue{Key: key, Value: value, Reason: "AnnotationConflict",
					Message: fmt.Sprintf("annotation %s=%q is ignored: %s=%q says otherwise and takes precedence", key, value, first, annotations[first])})
			}
			continue
		}
		winner[rd.def] = key
		parsed, err := rd.def.parse(value)
		if err != nil {
			if why := r.invalidRefuses(rd.def); why != "" {
				issues = append(issues, Issue{Key: key, Value: value, Reason: "InvalidAnnotation", Refusal: why,
					Message: fmt.Sprintf("value %q: %v", value, err)})
			} else {
				issues = append(issues, Issue{Key: key, Value: value, Reason: "InvalidAnnotation",
					Message: fmt.Sprintf("annotation %s=%q: %v: ignored", key, value, err)})
			}
			if v.invalid == nil {
				v.invalid = map[*definition]bool{}
			}
			v.invalid[rd.def] = true
			continue
		}
		if v.parsed == nil {
			v.parsed = map[*definition]any{}
		}
		v.parsed[rd.def] = parsed
	}
	return v, issues
}

// IsSet reports whether any annotation was honoured, or set with a value
// that did not parse (which some keys refuse to do without: Invalid).
func (v *Values) IsSet() bool { return len(v.parsed) > 0 || len(v.invalid) > 0 }

// Keys lists every full key the registry reads (each prefix, each alias),
// sorted: for tests that try them all, and for tools that list them.
func (r *Registry) Keys() []string {
	keys := make([]string, 0, len(r.byKey))
	for k := range r.byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
