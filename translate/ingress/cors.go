package ingress

import (
	"regexp"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// parseCORS reads ingress-nginx's CORS keys, with its defaults; nothing
// (nil) without enable-cors, as in ingress-nginx.
func parseCORS(values *annotations.Values) (*ir.CORS, []problem) {
	if on, _ := annotations.EnableCORS.Get(values); !on {
		return nil, nil
	}
	var problems []problem
	c := &ir.CORS{
		AllowMethods:     annotations.DefaultCORSMethods,
		AllowHeaders:     annotations.DefaultCORSHeaders,
		MaxAgeSeconds:    annotations.DefaultCORSMaxAge,
		AllowCredentials: true,
	}
	origins, set := annotations.CORSAllowOrigin.Get(values)
	if !set || origins.Any {
		c.AnyOrigin = true
	} else {
		for _, o := range origins.Skipped {
			problems = append(problems, problemf("InvalidAnnotation", "annotation %s: %q is not an origin (scheme://host[:port]): ignored, as ingress-nginx ignores it",
				annotations.CORSAllowOrigin.Name(), o))
		}
		for _, o := range origins.Origins {
			c.AllowOrigins = append(c.AllowOrigins, originMatch(o))
		}
		if len(c.AllowOrigins) == 0 {
			// ingress-nginx then matches no origin: no CORS header, and
			// OPTIONS goes to the backend.
			problems = append(problems, problemf("InvalidAnnotation", "annotation %s: no origin left: CORS allows no origin (no CORS header is sent, OPTIONS reaches the backend)",
				annotations.CORSAllowOrigin.Name()))
			return nil, problems
		}
	}
	if v, ok := annotations.CORSAllowMethods.Get(values); ok {
		c.AllowMethods = v
	}
	if v, ok := annotations.CORSAllowHeaders.Get(values); ok {
		c.AllowHeaders = v
	}
	if v, ok := annotations.CORSExposeHeaders.Get(values); ok {
		c.ExposeHeaders = v
	}
	if v, ok := annotations.CORSAllowCredentials.Get(values); ok {
		c.AllowCredentials = v
	}
	if v, ok := annotations.CORSMaxAge.Get(values); ok {
		c.MaxAgeSeconds = int64(v)
	}
	return c, problems
}

// originMatch matches one allowed origin as ingress-nginx's
// buildOriginRegex does: as written, but for "*." after the scheme, which
// stands for one label (letters, digits and "-").
func originMatch(origin string) ir.StringMatch {
	if !strings.Contains(origin, "*") {
		return ir.StringMatch{Exact: origin}
	}
	return ir.StringMatch{Regex: strings.Replace(regexp.QuoteMeta(origin), `\*`, `[A-Za-z0-9\-]+`, 1)}
}
