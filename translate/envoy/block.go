package envoy

import (
	configrbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// blockFilter is the RBAC filter of a listener's request block (the
// ConfigMap's block-user-agents and block-referers), beside the routes'
// own RBAC filter (iprules.go): a name of its own, so that no route's
// configuration replaces its rules.
const blockFilter = "envoy.filters.http.rbac.block"

// blockListenerConfig denies (403) the requests l's block names, on every
// route: nginx's map of the header, then return 403 in every server.
func blockListenerConfig(l *ir.Listener) proto.Message {
	var rules []*configrbacv3.Permission
	for _, h := range l.Block.Headers {
		rules = append(rules, headerBlockRules(h)...)
	}
	return &rbacv3.RBAC{Rules: &configrbacv3.RBAC{
		Action: configrbacv3.RBAC_DENY,
		Policies: map[string]*configrbacv3.Policy{"block": {
			Permissions: []*configrbacv3.Permission{{Rule: &configrbacv3.Permission_OrRules{OrRules: &configrbacv3.Permission_Set{Rules: rules}}}},
			Principals:  []*configrbacv3.Principal{{Identifier: &configrbacv3.Principal_Any{Any: true}}},
		}},
	}}
}

// headerBlockRules are the permissions that match a request h refuses.
func headerBlockRules(h ir.HeaderBlock) []*configrbacv3.Permission {
	if h.All {
		return []*configrbacv3.Permission{{Rule: &configrbacv3.Permission_Any{Any: true}}}
	}
	header := func(m *matcherv3.StringMatcher, missingIsEmpty bool) *configrbacv3.Permission {
		return &configrbacv3.Permission{Rule: &configrbacv3.Permission_Header{Header: &routev3.HeaderMatcher{
			Name:                      h.Header,
			HeaderMatchSpecifier:      &routev3.HeaderMatcher_StringMatch{StringMatch: m},
			TreatMissingHeaderAsEmpty: missingIsEmpty,
		}}}
	}
	regex := func(re string) *matcherv3.StringMatcher {
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: re}}}
	}
	var out []*configrbacv3.Permission
	for _, v := range h.Values {
		// nginx's map looks its strings up lower-cased; its "" is the
		// value of a missing header too.
		out = append(out, header(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v}, IgnoreCase: true}, v == ""))
	}
	for _, re := range h.Regexes {
		// nginx searches the value (Envoy matches the whole of it), and
		// tries no expression on an empty one.
		out = append(out, &configrbacv3.Permission{Rule: &configrbacv3.Permission_AndRules{AndRules: &configrbacv3.Permission_Set{Rules: []*configrbacv3.Permission{
			header(regex("(?s).+"), false),
			header(regex("(?s).*(?:"+re+").*"), false),
		}}}})
	}
	return out
}
