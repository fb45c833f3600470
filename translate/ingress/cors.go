package ingress

import (
	"regexp"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// corsAnnotations reads ingress-nginx's CORS keys into p, with its
// defaults; nothing without enable-cors, as in ingress-nginx.
func (f *fragmentBuilder) corsAnnotations(values *annotations.Values, p *ir.RoutePolicy) {
	if on, _ := annotations.EnableCORS.Get(values); !on {
		return
	}
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
			f.problem("InvalidAnnotation", "annotation %s: %q is not an origin (scheme://host[:port]): ignored, as ingress-nginx ignores it",
				annotations.CORSAllowOrigin.Name(), o)
		}
		for _, o := range origins.Origins {
			c.AllowOrigins = append(c.AllowOrigins, originMatch(o))
		}
		if len(c.AllowOrigins) == 0 {
			// ingress-nginx then matches no origin: no CORS header, and
			// OPTIONS goes to the backend.
			f.problem("InvalidAnnotation", "annotation %s: no origin left: CORS allows no origin (no CORS header is sent, OPTIONS reaches the backend)",
				annotations.CORSAllowOrigin.Name())
			return
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
	p.CORS = c
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
