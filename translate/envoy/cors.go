package envoy

import (
	"strconv"
	"strings"
	"time"

	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// corsPolicy is the CORS filter's configuration for one route.
func corsPolicy(c *ir.CORS) *corsv3.CorsPolicy {
	out := &corsv3.CorsPolicy{
		AllowMethods:     strings.Join(c.AllowMethods, ","),
		AllowHeaders:     strings.Join(c.AllowHeaders, ","),
		ExposeHeaders:    strings.Join(c.ExposeHeaders, ","),
		AllowCredentials: wrapperspb.Bool(c.AllowCredentials),
	}
	if c.MaxAge > 0 {
		out.MaxAge = strconv.FormatInt(int64(time.Duration(c.MaxAge)/time.Second), 10)
	}
	for _, o := range c.AllowOrigins {
		sm := stringMatcher(o)
		if o.Exact == "*" {
			sm = &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: ".*"}}}
		}
		out.AllowOriginStringMatch = append(out.AllowOriginStringMatch, sm)
	}
	return out
}
