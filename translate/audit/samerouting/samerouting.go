// Package samerouting compares what two IRs route for one source each:
// the routes an Ingress became through the Ingress front-end, and those
// the HTTPRoutes converted from it became through the Gateway API
// front-end. It is the check behind `ingress-xds audit --to-gateway-api`.
//
// It compares routing, not bytes: per protocol (what plain HTTP is
// answered, what HTTPS is) and host, each route's match (path, headers,
// query), then what the route does: the backends and their shares of
// the requests, a redirect's Location and status, a direct answer, and
// the request's edits (rewrites, header changes, mirrors, CORS), and who
// may reach the backends (authentication, address rules, limits), which
// a conversion must not drop unseen. The
// policies each front-end defaults differently (timeouts, retries,
// access-log names, the clusters' settings) are left out, and so are
// cluster names: two routes that send to the same Service port send to
// the same backend, whatever cluster carries them. Regular expressions
// are compared in RE2's simplified form, so that two spellings of one
// expression are one.
package samerouting

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Difference is one thing the two sides route differently.
type Difference struct {
	// Where is the protocol and host, and the route's match when it is
	// about one route.
	Where string `json:"where"`
	// Ingress and GatewayAPI say what each side does there.
	Ingress    string `json:"ingress"`
	GatewayAPI string `json:"gatewayAPI"`
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: through the Ingress front-end %s; through Gateway API %s", d.Where, d.Ingress, d.GatewayAPI)
}

// Compare lists what the routes of ing from ingSources and the routes of
// gw from gwSources route differently, none when they route the same,
// and how many routes of ing's (per protocol and host) it compared.
func Compare(ing *ir.IR, ingSources func(ir.Object) bool, gw *ir.IR, gwSources func(ir.Object) bool) ([]Difference, int) {
	a, b := viewOf(ing, ingSources), viewOf(gw, gwSources)
	var out []Difference
	compared := 0
	for _, v := range a {
		compared += len(v.matches)
	}
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y hostKey) int {
		return cmp.Or(strings.Compare(x.host, y.host), strings.Compare(string(x.protocol), string(y.protocol)))
	})
	for _, k := range keys {
		out = append(out, compareHost(k, a[k], b[k])...)
	}
	return out, compared
}

// hostKey is a host as one protocol's listeners serve it.
type hostKey struct {
	protocol ir.Protocol
	host     string
}

func (k hostKey) String() string { return string(k.protocol) + " " + k.host }

// hostView is what a side serves of one host on one protocol.
type hostView struct {
	// facts are about the host: its certificate, how deep its wildcard
	// goes.
	facts []string
	// matches in match order, each with what its route does.
	matches []string
	does    map[string]string
}

func compareHost(k hostKey, a, b *hostView) []Difference {
	switch {
	case a == nil:
		return []Difference{{Where: k.String(), Ingress: "serves none of its routes", GatewayAPI: fmt.Sprintf("serves %d", len(b.matches))}}
	case b == nil:
		return []Difference{{Where: k.String(), Ingress: fmt.Sprintf("serves %d routes", len(a.matches)), GatewayAPI: "serves none"}}
	}
	var out []Difference
	if fa, fb := strings.Join(a.facts, ", "), strings.Join(b.facts, ", "); fa != fb {
		out = append(out, Difference{Where: k.String(), Ingress: orNone(fa), GatewayAPI: orNone(fb)})
	}
	var common []string
	for _, m := range a.matches {
		where := k.String() + " " + m
		switch db, ok := b.does[m]; {
		case !ok:
			out = append(out, Difference{Where: where, Ingress: a.does[m], GatewayAPI: "no such route"})
		case db != a.does[m]:
			out = append(out, Difference{Where: where, Ingress: a.does[m], GatewayAPI: db})
			common = append(common, m)
		default:
			common = append(common, m)
		}
	}
	var commonB []string
	for _, m := range b.matches {
		if _, ok := a.does[m]; !ok {
			out = append(out, Difference{Where: k.String() + " " + m, Ingress: "no such route", GatewayAPI: b.does[m]})
		} else {
			commonB = append(commonB, m)
		}
	}
	// Routes are tried in order, the first that matches winning: the
	// same routes in another order route some requests elsewhere.
	if !slices.Equal(common, commonB) {
		out = append(out, Difference{Where: k.String() + " (match order)",
			Ingress: strings.Join(common, " | "), GatewayAPI: strings.Join(commonB, " | ")})
	}
	return out
}

func orNone(s string) string { return cmp.Or(s, "nothing") }

// viewOf is what an IR serves of the routes of the sources chosen, per
// protocol and host.
func viewOf(m *ir.IR, from func(ir.Object) bool) map[hostKey]*hostView {
	backendOf := map[string]string{}
	for _, c := range m.Clusters {
		backendOf[c.Name] = c.Backend
	}
	d := describer{backendOf: backendOf}
	out := map[hostKey]*hostView{}
	for _, vh := range m.VirtualHosts {
		for _, p := range []ir.Protocol{ir.HTTP, ir.HTTPS} {
			if p == ir.HTTPS && vh.Certificate == "" {
				continue // served over plain HTTP only
			}
			var v *hostView
			for _, r := range vh.Routes {
				if r.Source == nil || !from(*r.Source) || r.Only != "" && r.Only != p {
					continue
				}
				if v == nil {
					v = &hostView{does: map[string]string{}, facts: hostFacts(vh, p)}
				}
				m := d.match(r.Match)
				for n := 2; v.does[m] != ""; n++ {
					m = fmt.Sprintf("%s (#%d)", d.match(r.Match), n) // a second route of one match is never reached
				}
				v.matches = append(v.matches, m)
				v.does[m] = d.does(r, vh, p)
			}
			if v != nil {
				out[hostKey{protocol: p, host: vh.Host}] = v
			}
		}
	}
	return out
}

// hostFacts are what a host's routes share on a protocol.
func hostFacts(vh *ir.VirtualHost, p ir.Protocol) []string {
	var out []string
	if p == ir.HTTPS {
		out = append(out, "certificate "+vh.Certificate)
	}
	if strings.HasPrefix(vh.Host, "*.") {
		if vh.AnyDepth {
			out = append(out, "the wildcard covers one label or more")
		} else {
			out = append(out, "the wildcard covers one label")
		}
	}
	for _, a := range vh.Aliases {
		out = append(out, "alias "+a)
	}
	return out
}
