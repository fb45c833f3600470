package ingress

import (
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// parseResponseRewrite reads proxy-redirect-from and -to and
// proxy-cookie-domain and -path (nil: none), as ingress-nginx's template
// writes them into proxy_redirect, proxy_cookie_domain and
// proxy_cookie_path.
func parseResponseRewrite(values *annotations.Values) (*ir.ResponseRewrite, []problem) {
	var rw ir.ResponseRewrite
	var problems []problem
	plainText := func(key, from string) bool {
		if strings.HasPrefix(from, "~") {
			// nginx's "~" and "~*".
			problems = append(problems, problemf("UnsupportedAnnotationValue", "annotation %s: %q is a regular expression, which ingress-xds does not apply to response headers: not applied", key, from))
			return false
		}
		return true
	}
	from, _ := annotations.ProxyRedirectFrom.Get(values)
	to, toSet := annotations.ProxyRedirectTo.Get(values)
	// ingress-nginx writes "proxy_redirect off" or "default" for those
	// two, and "proxy_redirect from to" only with a to other than "off".
	// "default" names ingress-nginx's own proxy_pass URL
	// (http://upstream_balancer/), which no backend sends back.
	if from != "" && from != "off" && from != "default" && toSet && to != "off" {
		if plainText(annotations.ProxyRedirectFrom.Name(), from) {
			rw.Redirect = &ir.Replace{From: from, To: to}
		}
	}
	if d, _ := annotations.ProxyCookieDomain.Get(values); d != nil && plainText(annotations.ProxyCookieDomain.Name(), d.From) {
		// nginx ignores a leading dot in both texts.
		if from := strings.TrimPrefix(d.From, "."); from != "" {
			rw.CookieDomain = &ir.Replace{From: from, To: strings.TrimPrefix(d.To, ".")}
		}
	}
	if c, _ := annotations.ProxyCookiePath.Get(values); c != nil && plainText(annotations.ProxyCookiePath.Name(), c.From) {
		rw.CookiePath = &ir.Replace{From: c.From, To: c.To}
	}
	if rw.Redirect == nil && rw.CookieDomain == nil && rw.CookiePath == nil {
		return nil, problems
	}
	return &rw, problems
}
