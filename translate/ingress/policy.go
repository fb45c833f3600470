package ingress

import (
	"reflect"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// readAnnotations parses the Ingress's annotations through the registry,
// reports what cannot be honoured as problems of the Ingress, and builds
// the route policy that every route of the Ingress shares, the cluster
// policy of its clusters and what it asks of its hosts. Each group of
// annotations has a parser of its own, in a file of its own, that returns
// its result and its problems (groups.go); the problems are reported here,
// in the groups' order, and mergeGroups (merge.go) applies the results.
// The groups still written as methods of the builder (fill p, or shape the
// routes) come first and in this order: readSatisfy reads what the
// address and authentication groups wrote.
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
	env := groupEnv{namespace: f.ing.Namespace, opts: &f.opts, objects: f}
	f.readRewrite(values)
	f.readAliases(values)
	f.readCanary(values)
	f.readAffinity(values)
	f.readFallback(values)
	var p ir.RoutePolicy
	var g groups
	var problems []problem
	f.redirectAnnotations(values, &p)
	g.proxy, problems = parseProxy(values)
	f.report(problems)
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
	g.upstream, problems = parseUpstream(values, env)
	f.report(problems)
	g.passthrough, problems = parsePassthrough(values, &f.opts)
	f.report(problems)
	g.clientCert, problems = parseClientCert(values, env)
	f.report(problems)
	g.sslCiphers = parseSSLCiphers(values)
	f.apply(mergeGroups(&g, &p))
	if !reflect.ValueOf(p).IsZero() {
		f.policy = &p
	}
}
