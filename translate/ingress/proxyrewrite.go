package ingress

import (
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// responseRewriteAnnotations reads proxy-redirect-from and -to and
// proxy-cookie-domain and -path into p, as ingress-nginx's template writes
// them into proxy_redirect, proxy_cookie_domain and proxy_cookie_path.
func (f *fragmentBuilder) responseRewriteAnnotations(values *annotations.Values, p *ir.RoutePolicy) {
	var rw ir.ResponseRewrite
	from, _ := annotations.ProxyRedirectFrom.Get(values)
	to, toSet := annotations.ProxyRedirectTo.Get(values)
	// ingress-nginx writes "proxy_redirect off" or "default" for those
	// two, and "proxy_redirect from to" only with a to other than "off".
	// "default" names ingress-nginx's own proxy_pass URL
	// (http://upstream_balancer/), which no backend sends back.
	if from != "" && from != "off" && from != "default" && toSet && to != "off" {
		if f.plainText(annotations.ProxyRedirectFrom.Name(), from) {
			rw.Redirect = &ir.Replace{From: from, To: to}
		}
	}
	if d, _ := annotations.ProxyCookieDomain.Get(values); d != nil && f.plainText(annotations.ProxyCookieDomain.Name(), d.From) {
		// nginx ignores a leading dot in both texts.
		if from := strings.TrimPrefix(d.From, "."); from != "" {
			rw.CookieDomain = &ir.Replace{From: from, To: strings.TrimPrefix(d.To, ".")}
		}
	}
	if c, _ := annotations.ProxyCookiePath.Get(values); c != nil && f.plainText(annotations.ProxyCookiePath.Name(), c.From) {
		rw.CookiePath = &ir.Replace{From: c.From, To: c.To}
	}
	if rw != (ir.ResponseRewrite{}) {
		p.ResponseRewrite = &rw
	}
}

// plainText reports whether from is plain text, and reports a regular
// expression (nginx's "~" and "~*"), which is not applied.
func (f *fragmentBuilder) plainText(key, from string) bool {
	if strings.HasPrefix(from, "~") {
		f.problem("UnsupportedAnnotationValue", "annotation %s: %q is a regular expression, which ingress-xds does not apply to response headers: not applied", key, from)
		return false
	}
	return true
}
