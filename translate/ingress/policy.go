package ingress

import (
	"reflect"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// readAnnotations parses the Ingress's annotations through the registry,
// reports what cannot be honoured as problems of the Ingress, and builds
// the route policy that every route of the Ingress shares. Each group of
// annotations has a function of its own, in a file of its own, that reads
// its keys from values into p.
func (f *fragmentBuilder) readAnnotations() {
	if f.opts.ConfigMap.Name != "" {
		f.configMap(f.opts.ConfigMap) // its keys are defaults: a dependency
	}
	values, issues := f.reg.ParseWith(f.ing.Annotations, f.opts.config.defaults())
	for _, is := range issues {
		if is.Refusal != "" {
			f.refuseIssue(is) // refuse.go: an access control not applied
			continue
		}
		f.problem(is.Reason, "%s", is.Message)
	}
	if !values.IsSet() && !f.opts.config.appliesToEvery() {
		f.policy = defaultPolicy // ingress-nginx's default retries (proxy.go)
		return
	}
	f.readRewrite(values)
	f.readAliases(values)
	f.readCanary(values)
	f.readAffinity(values)
	f.readFallback(values)
	var p ir.RoutePolicy
	f.redirectAnnotations(values, &p)
	f.proxyAnnotations(values, &p)
	f.corsAnnotations(values, &p)
	f.customHeaders(values, &p)
	f.connectionHeader(values, &p)
	f.accessAnnotations(values, &p)
	f.connectionLimitAnnotations(values, &p) // connlimit.go
	f.responseRateAnnotations(values, &p)    // responserate.go
	f.readBasicAuth(values, &p)              // auth.go
	f.readExternalAuth(values, &p)
	f.readSatisfy(values, &p) // after the address and authentication checks it chooses between
	f.responseRewriteAnnotations(values, &p)
	f.mirrorAnnotations(values, &p)
	f.upstreamAnnotations(values, &p) // after proxy: it adds to the cluster policy
	f.readPassthrough(values)         // after upstream: it adds TLS to the cluster policy
	f.readClientCert(values)
	f.readSSLCiphers(values) // sslciphers.go
	if !reflect.ValueOf(p).IsZero() {
		f.policy = &p
	}
}
