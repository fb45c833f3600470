package envoy

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	mutationrulesv3 "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	earlymutationv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/early_header_mutation/header_mutation/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Route scopes (serve --route-scopes N, issue 18). Envoy builds a route
// configuration's whole table again on every update of it, whatever
// changed: with one plain-HTTP route configuration of every host, an
// Ingress change at 10,000 Ingresses costs each Envoy the rebuilding of
// 20,000 virtual hosts, over VHDS as over RDS. With Options.RouteScopes,
// the plain-HTTP listener routes through Envoy's scoped routes instead:
// N route configurations ("ingress_http/0" ... "ingress_http/N-1"), each
// holding the exact hosts whose names hash to it, so that a change updates,
// and Envoy rebuilds, the one that holds the host changed.
//
// Routing stays Envoy's own, and the same: a scope holds, besides its exact
// hosts, every wildcard virtual host (*.example.com) and the catch-all
// ("*"), so that for any Host the scope it hashes to holds every virtual
// host the one route configuration could have matched it to (the exact
// host of that name, if any, and all the wildcards), and Envoy's choice
// among them (exact, then the longest wildcard, then "*") is the same. A
// host with aliases (server-alias) is in the scope of each of its names.
//
// Envoy picks a scope by an exact key taken from a header, which must be
// there before the connection manager first routes the request: that
// first route decides which of the filters that are off by default
// (disabled, turned on by a route's per-filter configuration:
// authentication, limits, rewrites) the request's filter chain holds, so
// a scope chosen later, by a filter, would serve the right route without
// them. Nothing in Envoy hashes a header, but the connection manager's
// early header mutation, which runs before routing, takes CEL: the key is
// RouteScope's hash written as CEL (routeScopeExpression), set over any
// value the client sent. The hash is one CEL can compute, two regular
// expressions a bit: bit k of the scope is the parity of how many of the
// Host's characters are in the k-th of log2(N) fixed sets of DNS
// characters, flipped when the character a fixed number of places from
// the end of the Host's first label is in a k-th set of its own. The
// parity sees every character but not where it is, so names that differ by
// the order of their characters, or by a digit repeated ("ing-00011" and
// "ing-00000"), would share a scope; the character from the end of the
// first label, where numbered names differ, tells those apart. Both read
// the Host from its start to its first ':' (so a port does not count), in
// either case, and neither counts the dots (so a trailing dot does not
// count), as Envoy's domain matching ignores them.
// Each route configuration removes the header before a request goes
// upstream (and to a mirror). That takes it off the request itself, and a
// request Envoy runs again (custom-http-errors' error page, errorpages.go),
// on which the early header mutation does not run, sets it again.
//
// The scopes come over SRDS, their route configurations over RDS (see
// scopedRoutes): both SotW and delta Envoys take them, unlike VHDS. The
// price is the expression, evaluated on every request of the listener
// (docs/benchmarks.md, "Route scopes").

// RouteScopeHeader carries a request's scope from the early header
// mutation to Envoy's scope selection.
const RouteScopeHeader = "x-ingress-xds-route-scope"

// MaxRouteScopes bounds Options.RouteScopes: each scope is a route
// configuration and an RDS subscription in every Envoy, and each of its
// log2 two regular expressions run on every request.
const MaxRouteScopes = 4096

// ValidRouteScopes says whether n is a number of route scopes: 0 for none,
// else a power of two up to MaxRouteScopes (each scope is a number of
// log2(n) bits).
func ValidRouteScopes(n int) bool {
	return n == 0 || n > 0 && n <= MaxRouteScopes && n&(n-1) == 0
}

// routeScopeBits is the bits of a scope's number with n scopes.
func routeScopeBits(n int) int { return bits.TrailingZeros(uint(n)) }

// routeScopeSet is the characters whose count's parity is bit k of a
// scope: two runs of letters, one of digits, and perhaps '-', chosen by a
// fixed pseudo-random sequence (splitmix64 of k), so that the sets differ
// and each holds about half of a host name's characters. Runs rather than
// scattered characters, because Envoy bounds the size of a CEL regular
// expression, and each run is one range of its class.
type routeScopeSet struct {
	runs []string // "a-e": the class's ranges, lower case
	dash bool
}

func scopeSet(k int) routeScopeSet {
	return randomScopeSet(uint64(k+1), true)
}

// labelSet is the characters of bit k's character from the end of the
// first label: a sequence of its own, so that the two sets of a bit
// differ, and five digits scattered rather than a run of them, so that
// each bit parts the digits of a number its own way (the regular
// expression holds one class, so its scattered ranges fit Envoy's bound).
func labelSet(k int) routeScopeSet {
	return randomScopeSet(uint64(k+1)<<32, true)
}

// labelPlace is how many places from the end of the Host's first label
// bit k's character is: 0 (the last) to 7, by turns, so that the bits
// together see the label's last eight characters, where numbered names
// keep their numbers.
func labelPlace(k int) int { return k % 8 }

// randomScopeSet is the set the pseudo-random sequence seeded with seed
// chooses: two runs of letters, and a run of digits or five scattered
// ones.
func randomScopeSet(seed uint64, scatterDigits bool) routeScopeSet {
	x := seed * 0x9e3779b97f4a7c15
	next := func(n uint64) uint64 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return (z ^ (z >> 31)) % n
	}
	run := func(first byte, size, minLen, maxLen uint64) string {
		length := minLen + next(maxLen-minLen+1)
		start := next(size - length + 1)
		return string([]byte{first + byte(start), '-', first + byte(start+length-1)})
	}
	// Two letter runs, one in each half of the alphabet, so that they
	// neither overlap nor touch.
	set := routeScopeSet{runs: []string{run('a', 13, 3, 9), run('n', 13, 3, 9)}}
	if !scatterDigits {
		set.runs = append(set.runs, run('0', 10, 3, 7))
	} else {
		digits := []byte("0123456789")
		for i := range 5 { // the first five of a shuffle
			j := i + int(next(uint64(len(digits)-i)))
			digits[i], digits[j] = digits[j], digits[i]
		}
		chosen := digits[:5]
		slices.Sort(chosen)
		for i := 0; i < len(chosen); {
			j := i
			for j+1 < len(chosen) && chosen[j+1] == chosen[j]+1 {
				j++
			}
			set.runs = append(set.runs, string([]byte{chosen[i], '-', chosen[j]}))
			i = j + 1
		}
	}
	set.dash = next(2) == 1
	return set
}

// has says whether c, in either case, is in the set.
func (s routeScopeSet) has(c byte) bool {
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	if c == '-' {
		return s.dash
	}
	for _, r := range s.runs {
		if r[0] <= c && c <= r[2] {
			return true
		}
	}
	return false
}

// class is the set as the inside of a regular expression's class: its
// runs in both cases, '-' last, where it is itself.
func (s routeScopeSet) class() string {
	var b strings.Builder
	for _, r := range s.runs {
		b.WriteString(r)
		if 'a' <= r[0] && r[0] <= 'z' {
			b.WriteString(strings.ToUpper(r))
		}
	}
	if s.dash {
		b.WriteByte('-')
	}
	return b.String()
}

// RouteScope is the scope, of n (a power of two), whose route
// configuration holds host's virtual host: bit k is the parity of the
// characters of host before its first ':' that are in scopeSet(k), in
// either case, flipped when the first label's character labelPlace(k)
// places from its end is in labelSet(k). It is routeScopeExpression's value
// for that Host.
func RouteScope(host string, n int) int {
	table := routeScopeTable(n)
	return table.scope(host)
}

// scopeTable is, for each byte, the bits of a scope it flips, and for each
// place from the end of the first label, the bits a byte there flips.
type scopeTable struct {
	parity [256]uint16
	label  [8][256]uint16
}

// routeScopeTable is the table of n scopes.
func routeScopeTable(n int) *scopeTable {
	var t scopeTable
	for k := range routeScopeBits(n) {
		set, place := scopeSet(k), labelSet(k)
		for c := range 256 {
			if set.has(byte(c)) {
				t.parity[c] |= 1 << k
			}
			if place.has(byte(c)) {
				t.label[labelPlace(k)][c] |= 1 << k
			}
		}
	}
	return &t
}

// scope is RouteScope with the table of its n.
func (t *scopeTable) scope(host string) int {
	if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	var v uint16
	for i := 0; i < len(host); i++ {
		v ^= t.parity[host[i]]
	}
	label := host
	if i := strings.IndexByte(host, '.'); i >= 0 {
		label = host[:i]
	}
	for i := 0; i < len(label); i++ {
		if !isLabelByte(label[i]) {
			return int(v) // the expression's label class does not match it
		}
	}
	for place := range min(len(label), len(t.label)) {
		v ^= t.label[place][label[len(label)-1-place]]
	}
	return int(v)
}

// labelClass is the characters the expression takes for a first label's:
// printable ASCII but '.' and ':' (three ranges, so that eight of them fit
// the bound Envoy puts on a CEL regular expression's program, which a
// negated class, spanning Unicode, would not). A Host whose first label
// has other characters names no exact virtual host, so any scope serves
// it: it gets its parity alone.
const labelClass = "[!--/-9;-~]"

// isLabelByte says whether c is in labelClass.
func isLabelByte(c byte) bool {
	return '!' <= c && c <= '~' && c != '.' && c != ':'
}

// routeScopeExpression is RouteScope of the request's Host in CEL: for
// each bit, a regular expression (RE2) that matches a Host with an even
// count of the set's characters before its first ':', and one that
// matches a Host whose first label has a character of the label set at
// the bit's place from its end; the bit is set when both match or
// neither does. A request without a Host is in scope 0.
func routeScopeExpression(n int) string {
	k := routeScopeBits(n)
	if k == 0 {
		return "0"
	}
	terms := make([]string, k)
	for bit := range k {
		class := scopeSet(bit).class()
		in, others := "["+class+"]", "[^:"+class+"]*"
		even := "^" + others + "(?:" + in + others + in + others + ")*(?::.*)?$"
		place := "^" + labelClass + "*[" + labelSet(bit).class() + "]" + strings.Repeat(labelClass, labelPlace(bit)) + "(?:[.:]|$)"
		terms[bit] = fmt.Sprintf("(request.host.matches('%s') == request.host.matches('%s') ? %d : 0)", even, place, 1<<bit)
	}
	return "has(request.host) ? " + strings.Join(terms, " + ") + " : 0"
}

// routeScopeHeader sets RouteScopeHeader to the request's scope, over any
// value it had.
func routeScopeHeader(n int) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: RouteScopeHeader, Value: "%CEL(" + routeScopeExpression(n) + ")%"},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

// routeScopeMutation is the connection manager's early header mutation
// that sets RouteScopeHeader to the request's scope, over whatever the
// client sent (removed first, so that a client's value never stays
// should the expression give nothing).
func routeScopeMutation(n int) ([]*corev3.TypedExtensionConfig, error) {
	cfg, err := anypb.New(&earlymutationv3.HeaderMutation{Mutations: []*mutationrulesv3.HeaderMutation{
		{Action: &mutationrulesv3.HeaderMutation_Remove{Remove: RouteScopeHeader}},
		{Action: &mutationrulesv3.HeaderMutation_Append{Append: routeScopeHeader(n)}},
	}})
	if err != nil {
		return nil, fmt.Errorf("packing the route scope's header mutation: %w", err)
	}
	return []*corev3.TypedExtensionConfig{{Name: "ingress-xds.route-scope", TypedConfig: cfg}}, nil
}

// ScopeRouteName is the name of scope i's route configuration of the
// listener named listener.
func ScopeRouteName(listener string, i int) string {
	return listener + "/" + strconv.Itoa(i)
}

// scopeList is the route scopes of the listener named listener, n of
// them, each naming its route configuration and keyed by its number.
func scopeList(listener string, n int) []*routev3.ScopedRouteConfiguration {
	scopes := make([]*routev3.ScopedRouteConfiguration, n)
	for i := range scopes {
		name := ScopeRouteName(listener, i)
		scopes[i] = &routev3.ScopedRouteConfiguration{
			Name:                   name,
			RouteConfigurationName: name,
			Key: &routev3.ScopedRouteConfiguration_Key{Fragments: []*routev3.ScopedRouteConfiguration_Key_Fragment{{
				Type: &routev3.ScopedRouteConfiguration_Key_Fragment_StringKey{StringKey: strconv.Itoa(i)},
			}}},
		}
	}
	return scopes
}

// scopedRoutes is the connection manager's route specifier with route
// scopes: keyed by the header the early header mutation sets, the scopes over SRDS and
// their route configurations over RDS, all on the ADS stream. Envoy takes
// neither a route configuration over RDS from a list of scopes in the
// listener ("not supported with inline scoped routes") nor, sensibly, every
// route configuration inline in the listener, where any change would
// replace the listener: so the scopes come over SRDS, where they never
// change while the number of scopes does not.
func scopedRoutes(listener string) *hcmv3.HttpConnectionManager_ScopedRoutes {
	return &hcmv3.HttpConnectionManager_ScopedRoutes{ScopedRoutes: &hcmv3.ScopedRoutes{
		Name: listener,
		ScopeKeyBuilder: &hcmv3.ScopedRoutes_ScopeKeyBuilder{Fragments: []*hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder{{
			Type: &hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_{
				HeaderValueExtractor: &hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor{
					Name:        RouteScopeHeader,
					ExtractType: &hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_Index{Index: 0},
				},
			},
		}}},
		RdsConfigSource: adsSource(),
		ConfigSpecifier: &hcmv3.ScopedRoutes_ScopedRds{ScopedRds: &hcmv3.ScopedRds{ScopedRdsConfigSource: adsSource()}},
	}}
}

// scopesOf is the route scopes of the listener named listener: the same
// list every time, so that the xDS layer finds it unchanged at a glance.
func (c *Renderer) scopesOf(listener string) []*routev3.ScopedRouteConfiguration {
	if c.scopeLists == nil {
		c.scopeLists = map[string][]*routev3.ScopedRouteConfiguration{}
	}
	list, ok := c.scopeLists[listener]
	if !ok {
		list = scopeList(listener, c.routeScopes)
		c.scopeLists[listener] = list
	}
	return list
}

// scopeEntry is a scope's route configuration as last rendered, and the
// virtual hosts and settings it was made of.
type scopeEntry struct {
	vhosts []*routev3.VirtualHost
	msg    *routev3.RouteConfiguration
}

// scopedRouteConfigurations splits a plain-HTTP route configuration just
// made (rc, whose virtual hosts are vhosts' renderings, in order) into
// c.routeScopes. A scope whose virtual hosts and settings are those
// of its previous rendering is that same message, so that the xDS layer
// finds it unchanged by identity and sends nothing for it.
func (c *Renderer) scopedRouteConfigurations(rc *routev3.RouteConfiguration, vhosts []*ir.VirtualHost) []*routev3.RouteConfiguration {
	n := c.routeScopes
	if c.scopeTable == nil {
		c.scopeTable = routeScopeTable(n)
	}
	settings := proto.Clone(withoutVirtualHosts(rc)).(*routev3.RouteConfiguration)
	settings.RequestHeadersToRemove = append(settings.RequestHeadersToRemove, RouteScopeHeader)
	scoped := make([][]*routev3.VirtualHost, n)
	seen := make([]int, 0, 4)
	for i, vh := range vhosts {
		msg := rc.VirtualHosts[i]
		if isWildcard(vh.Host) {
			for s := range scoped {
				scoped[s] = append(scoped[s], msg)
			}
			continue
		}
		seen = seen[:0]
		for _, name := range append([]string{vh.Host}, vh.Aliases...) {
			s := c.scopeTable.scope(name)
			if !slices.Contains(seen, s) {
				seen = append(seen, s)
				scoped[s] = append(scoped[s], msg)
			}
		}
	}
	same := c.scopeSettings != nil && proto.Equal(c.scopeSettings, settings)
	if !same {
		c.scopeSettings = settings
	}
	if len(c.scopes) != n {
		c.scopes = make([]scopeEntry, n)
	}
	out := make([]*routev3.RouteConfiguration, n)
	for s, vhs := range scoped {
		e := &c.scopes[s]
		if !same || e.msg == nil || !slices.Equal(e.vhosts, vhs) {
			msg := proto.Clone(c.scopeSettings).(*routev3.RouteConfiguration)
			msg.Name = ScopeRouteName(rc.Name, s)
			msg.VirtualHosts = vhs
			*e = scopeEntry{vhosts: vhs, msg: msg}
		}
		out[s] = e.msg
	}
	return out
}

// isWildcard says whether a virtual host's name matches more than itself:
// "*" or "*.example.com".
func isWildcard(host string) bool { return strings.HasPrefix(host, "*") }

// withoutVirtualHosts is a route configuration's settings: a shallow copy
// of every field but its virtual hosts.
func withoutVirtualHosts(rc *routev3.RouteConfiguration) *routev3.RouteConfiguration {
	out := &routev3.RouteConfiguration{}
	dst := out.ProtoReflect()
	rc.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != "virtual_hosts" {
			dst.Set(fd, v)
		}
		return true
	})
	return out
}
