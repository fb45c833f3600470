package ingress

import (
	"regexp"
	"slices"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// resolveClientVerify decides the snippets' conditions on
// $ssl_client_verify (snippet.ClientVerifyMatch) on the host, once its
// client certificate policy is known. nginx's variable is empty over
// plain HTTP, and over TLS "NONE" without a certificate, "SUCCESS" for
// one that verifies, "FAILED:reason" for one that does not
// (ngx_http_ssl_variable in src/http/modules/ngx_http_ssl_module.c,
// ngx_ssl_get_client_verify in src/event/ngx_event_openssl.c). Over TLS it
// is one value for every request where the host's auth-tls leaves one
// possible: without auth-tls-secret, or with auth-tls-verify-client off,
// nginx asks for no certificate (NONE); with on, a request without a
// certificate that verifies is answered 400 before any location
// (ngx_http_process_request in src/http/ngx_http_request.c), so the
// snippet sees SUCCESS. Each condition is then decided for each listener:
// a route whose conditions hold on both keeps them without it, on one only
// is served on that one (Route.Only), on neither is left out. Under
// optional and optional_no_ca the value depends on the client's
// certificate, which is not translated: the paths of the host of the
// Ingress whose snippet asks answer 503, and it is told.
func (out *hostMerge) resolveClientVerify(host string, frags []*fragment) {
	if out.vhost == nil || !slices.ContainsFunc(out.vhost.Routes, readsClientVerify) {
		return
	}
	overTLS := "NONE"
	if c := out.vhost.ClientCert; c != nil {
		switch c.Verify {
		case ir.VerifyOn:
			overTLS = "SUCCESS"
		case ir.VerifyOptional, ir.VerifyOptionalNoCA:
			out.refuseClientVerify(host, frags, c.Verify)
			return
		}
	}
	routes := out.vhost.Routes[:0:0]
	for _, r := range out.vhost.Routes {
		if !readsClientVerify(r) {
			routes = append(routes, r)
			continue
		}
		overHTTP, overHTTPS := r.Only != ir.HTTPS, r.Only != ir.HTTP
		var headers []ir.HeaderMatch
		for _, h := range r.Match.Headers {
			if h.Name != snippet.ClientVerifyMatch {
				headers = append(headers, h)
				continue
			}
			overHTTP = overHTTP && holds(h, "")
			overHTTPS = overHTTPS && holds(h, overTLS)
		}
		c := *r
		c.Match.Headers = headers
		switch {
		case overHTTP && overHTTPS:
			c.Only = ""
		case overHTTP:
			c.Only = ir.HTTP
		case overHTTPS:
			c.Only = ir.HTTPS
		default:
			continue // never taken
		}
		routes = append(routes, &c)
	}
	out.vhost.Routes = routes
	out.clusters = usedClusters(out.clusters, out.vhost.Routes)
}

func readsClientVerify(r *ir.Route) bool {
	return slices.ContainsFunc(r.Match.Headers, func(h ir.HeaderMatch) bool { return h.Name == snippet.ClientVerifyMatch })
}

// holds says whether a condition's match takes the value, as Envoy's
// header matcher would (the whole value; an absent one as empty).
func holds(h ir.HeaderMatch, value string) bool {
	var matched bool
	switch {
	case h.Value.Regex != "":
		matched = regexp.MustCompile(`^(?:` + h.Value.Regex + `)$`).MatchString(value)
	case h.Value.Exact != "":
		matched = value == h.Value.Exact
	default:
		matched = value != "" || h.MissingIsEmpty
	}
	return matched != h.Invert
}

// refuseClientVerify refuses on the host the Ingresses whose snippets
// read $ssl_client_verify: their paths answer 503. A condition from the
// ConfigMap's snippets answers 503 where it would be decided.
func (out *hostMerge) refuseClientVerify(host string, frags []*fragment, verify ir.ClientVerify) {
	refused := map[ir.Object]bool{}
	for _, r := range out.vhost.Routes {
		if readsClientVerify(r) && r.Source != nil {
			refused[*r.Source] = true
		}
	}
	for i, r := range out.vhost.Routes {
		if r.Source == nil || !refused[*r.Source] && !readsClientVerify(r) {
			continue
		}
		c := *r
		c.Match.Headers = slices.DeleteFunc(slices.Clone(r.Match.Headers), func(h ir.HeaderMatch) bool { return h.Name == snippet.ClientVerifyMatch })
		c.Policy = nil
		c.Action = ir.Action{Direct: &ir.DirectResponse{Status: 503, Body: refusedBody}}
		out.vhost.Routes[i] = &c
	}
	for _, f := range frags {
		if refused[ir.Object{Kind: "Ingress", Namespace: f.ingress.Namespace, Name: f.ingress.Name}] && routesHost(f, host) {
			out.problems = append(out.problems, newProblem(f.ingress, "AnnotationRefused",
				"a snippet's condition on $ssl_client_verify: on host %q, whose auth-tls-verify-client is %s, its value depends on the client's certificate: not translated (the Ingress's paths of the host answer 503)",
				host, verify))
		}
	}
	out.clusters = usedClusters(out.clusters, out.vhost.Routes)
}
