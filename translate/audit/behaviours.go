package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Behaviour is one of ingress-nginx's surprising behaviours (the Kubernetes
// blog post "Before You Migrate: Five Surprising Ingress-NGINX Behaviors",
// 2026-02-27) as it applies to an Ingress, and what ingress-xds does.
type Behaviour struct {
	// ID is stable, for scripts.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Where says which hosts and paths of the Ingress it applies to.
	Where        string `json:"where,omitempty"`
	IngressNginx string `json:"ingressNginx"`
	IngressXDS   string `json:"ingressXds"`
	// Same is true when ingress-xds behaves as ingress-nginx does.
	Same bool `json:"same"`
}

// The behaviours' IDs.
const (
	RegexPrefix     = "regex-prefix-case-insensitive"
	HostWideRegex   = "host-wide-regex"
	RewriteRegex    = "rewrite-implies-regex"
	TrailingSlash   = "trailing-slash-redirect"
	URLNormalised   = "url-normalisation"
	regexNginx      = "A regular expression path is matched case-insensitively and anchored at its start only (`location ~* \"^<path>\"`): /[A-Z]{3} also matches /uuid and /abcd."
	regexXDS        = "The same: the path is matched as the RE2 expression (?i)(?:<path>).* (translate/ingress/regex.go), longest path first as nginx orders its locations; an expression RE2 does not accept (backreferences, lookaround) is a problem and its path is ignored."
	hostWideNginx   = "When one location of a host uses a regular expression or a rewrite, every location of that host, from every Ingress, becomes a case-insensitive prefix regular expression: an Exact /HEAD also matches /headers, a Prefix /foo also /foobar."
	rewriteNginx    = "rewrite-target other than the path itself puts the path in regex mode without use-regex, and with it the whole host."
	trailingNginx   = "A request for the path without its trailing slash gets a 301 to the path with it (nginx's redirect for a location ending in / that proxies), outside regex mode."
	normalisedNginx = "The path is normalised before a location is chosen: . and .. segments are resolved (/ip/abc/../../uuid is /uuid) and repeated slashes merged (////uuid is /uuid)."
	normalisedXDS   = "The same before a route is chosen: Envoy's normalize_path (RFC 3986) and merge_slashes on every listener, so a request cannot slip past one path's route (its source ranges, its authentication) to another's; the backend receives the normalised path. An encoded slash (/admin%2Fx), which nginx decodes to choose the location but forwards as sent, gets a 307 to the decoded path (serve --escaped-slashes=redirect, the default; keep forwards it as sent and routes it as sent too)."
)

// everyIngress are the behaviours every Ingress has alike.
func everyIngress() []Behaviour {
	return []Behaviour{{ID: URLNormalised, Title: "URL normalisation", IngressNginx: normalisedNginx, IngressXDS: normalisedXDS, Same: true}}
}

// placed is a route of the IR with the virtual host it is in.
type placed struct {
	vhost *ir.VirtualHost
	route *ir.Route
}

// routesBySource lists the IR's routes by the Ingress they came from.
func routesBySource(m *ir.IR) map[ir.Object][]placed {
	out := map[ir.Object][]placed{}
	for _, vh := range m.VirtualHosts {
		for _, rt := range vh.Routes {
			if rt.Source != nil {
				out[*rt.Source] = append(out[*rt.Source], placed{vh, rt})
			}
		}
	}
	return out
}

// regexMode reports whether the front-end made a host's routes regular
// expressions: ingress-nginx's regex mode, which the front-end decides.
func regexMode(vh *ir.VirtualHost) bool {
	return slices.ContainsFunc(vh.Routes, func(rt *ir.Route) bool { return rt.Match.PathType == ir.PathRegex })
}

// vhostName is the virtual host a rule's host is in: the front-end's
// names are lower case, and a rule without a host is the wildcard.
func vhostName(host string) string {
	if host == "" {
		return ir.WildcardHost
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// regexIntent is what an Ingress's annotations ask of its paths, as the
// front-end reads them (translate/ingress/regex.go): use-regex, and a
// rewrite-target other than the path.
type regexIntent struct {
	useRegex bool
	target   string
}

func intentOf(reg *annotations.Registry, ing *networkingv1.Ingress) regexIntent {
	values, _ := reg.Parse(ing.Annotations)
	var in regexIntent
	in.useRegex, _ = annotations.UseRegex.Get(values)
	in.target, _ = annotations.RewriteTarget.Get(values)
	return in
}

// rewrites reports whether a path of the Ingress is rewritten.
func (in regexIntent) rewrites(raw string) bool { return in.target != "" && in.target != raw }

// behaviours lists the blog's behaviours that apply to one Ingress.
func behaviours(ing *networkingv1.Ingress, o ir.Object, routes map[ir.Object][]placed, intents map[ir.Object]regexIntent) []Behaviour {
	in := intents[o]
	// The hosts the front-end put in regex mode where this Ingress has a
	// route, and the others' routes there.
	regexHosts := map[string]*ir.VirtualHost{}
	hosts := map[string]*ir.VirtualHost{} // every host the Ingress has a route in
	for _, p := range routes[o] {
		hosts[p.vhost.Host] = p.vhost
		if regexMode(p.vhost) {
			regexHosts[p.vhost.Host] = p.vhost
		}
	}
	var own, rewritten, others []string // "host path" of each kind
	causes := map[string]bool{}
	var trailing []Behaviour
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		host := vhostName(rule.Host)
		for _, p := range rule.HTTP.Paths {
			raw := cmp.Or(p.Path, "/")
			at := host + " " + raw
			vh := regexHosts[host]
			switch {
			case vh == nil:
				if b, ok := trailingSlash(p, raw, at, hosts[host]); ok {
					trailing = append(trailing, b)
				}
			case in.useRegex:
				own = append(own, at)
			case in.rewrites(raw):
				rewritten = append(rewritten, at)
			default:
				others = append(others, at)
				for _, c := range regexCauses(vh, o, intents) {
					causes[c] = true
				}
			}
		}
	}
	var out []Behaviour
	if len(own) > 0 {
		out = append(out, Behaviour{ID: RegexPrefix, Title: "regular expressions match a prefix, case-insensitively", Where: strings.Join(own, ", "),
			IngressNginx: regexNginx, IngressXDS: regexXDS, Same: true})
	}
	if len(rewritten) > 0 {
		out = append(out, Behaviour{ID: RewriteRegex, Title: "rewrite-target implies a regular expression", Where: strings.Join(rewritten, ", "),
			IngressNginx: rewriteNginx, IngressXDS: "The same: the path is matched as a case-insensitive prefix regular expression and rewritten (translate/ingress/regex.go), and its host is in regex mode.", Same: true})
	}
	if own != nil || rewritten != nil {
		if affected := affectedBy(o, regexHosts, intents); len(affected) > 0 {
			out = append(out, Behaviour{ID: HostWideRegex, Title: "regex mode is host-wide", Where: "it puts in regex mode the paths of " + strings.Join(affected, ", "),
				IngressNginx: hostWideNginx, IngressXDS: "The same, host by host: those paths are matched as case-insensitive prefix regular expressions too.", Same: true})
		}
	}
	if len(others) > 0 {
		out = append(out, Behaviour{ID: HostWideRegex, Title: "regex mode is host-wide", Where: strings.Join(others, ", ") + ", because of " + strings.Join(sortedKeys(causes), ", "),
			IngressNginx: hostWideNginx, IngressXDS: "The same, host by host: this Ingress's paths there are matched as case-insensitive prefix regular expressions, though it asks for none.", Same: true})
	}
	return append(out, trailing...)
}

// regexCauses names the Ingresses whose own paths put a host in regex mode.
func regexCauses(vh *ir.VirtualHost, self ir.Object, intents map[ir.Object]regexIntent) []string {
	var out []string
	seen := map[ir.Object]bool{}
	for _, rt := range vh.Routes {
		if rt.Source == nil || *rt.Source == self || seen[*rt.Source] {
			continue
		}
		seen[*rt.Source] = true
		if in := intents[*rt.Source]; in.useRegex || in.target != "" {
			out = append(out, rt.Source.Namespace+"/"+rt.Source.Name)
		}
	}
	return out
}

// affectedBy names the other Ingresses on an Ingress's regex hosts that
// ask for no regular expression themselves.
func affectedBy(self ir.Object, hosts map[string]*ir.VirtualHost, intents map[ir.Object]regexIntent) []string {
	names := map[string]bool{}
	for _, vh := range hosts {
		for _, rt := range vh.Routes {
			if rt.Source == nil || *rt.Source == self {
				continue
			}
			if in := intents[*rt.Source]; !in.useRegex && in.target == "" {
				names[rt.Source.Namespace+"/"+rt.Source.Name+" on "+vh.Host] = true
			}
		}
	}
	return sortedKeys(names)
}

// trailingSlash is the blog's trailing-slash redirect for a path outside
// regex mode that ends in a slash, as the front-end made it in vh (its
// 301 route for the path without the slash, under serve --configmap or
// --nginx-defaults) or not.
func trailingSlash(p networkingv1.HTTPIngressPath, raw, at string, vh *ir.VirtualHost) (Behaviour, bool) {
	if raw == "/" || !strings.HasSuffix(raw, "/") {
		return Behaviour{}, false
	}
	without := strings.TrimRight(raw, "/")
	b := Behaviour{ID: TrailingSlash, Title: "the trailing-slash redirect", Where: at, IngressNginx: trailingNginx}
	if vh != nil && slices.ContainsFunc(vh.Routes, func(rt *ir.Route) bool {
		return rt.Match.PathType == ir.PathExact && rt.Match.Path == without && rt.Action.Redirect != nil && rt.Action.Redirect.Code == 301 && rt.Action.Redirect.Path == raw
	}) {
		b.IngressXDS = fmt.Sprintf("The same (serve --configmap or --nginx-defaults): %s gets a 301 to %s, its query kept.", without, raw)
		b.Same = true
		return b, true
	}
	const how = " serve --configmap or --nginx-defaults adds ingress-nginx's redirect (where no other path of the host is that path)."
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		b.IngressXDS = fmt.Sprintf("Not reproduced: %s does not match the Exact path %s and answers 404 (or another path's backend) where ingress-nginx answers 301 to %s;", without, raw, raw) + how
	} else {
		b.IngressXDS = fmt.Sprintf("Not reproduced: a Prefix path's trailing slash is ignored, so %s is served by the backend as it is where ingress-nginx answers 301 to %s;", without, raw) + how
	}
	return b, true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
