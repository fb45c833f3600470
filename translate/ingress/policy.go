package ingress

// readAnnotations parses the Ingress's annotations through the registry,
// reports what cannot be honoured as problems of the Ingress, and builds
// the route policy that every route of the Ingress shares, the cluster
// policy of its clusters and what it asks of its hosts. Each group of
// annotations has a parser of its own, in a file of its own, that returns
// its result and its problems (groups.go); the problems are reported here,
// in the groups' order, and mergeGroups (merge.go) applies the results.
func (f *fragmentBuilder) readAnnotations() {
	if f.opts.ConfigMap.Name != "" {
		f.configMap(f.opts.ConfigMap) // its keys are defaults: a dependency
	}
	if f.refuseBlockedWords() || f.refuseRiskyAnnotations() { // wordblocklist.go, risklevel.go
		return
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
		f.policy = f.opts.defaultPolicy // ingress-nginx's default retries (proxy.go)
		return
	}
	env := groupEnv{ing: f.ing, opts: &f.opts, objects: f.objects()}
	// Each group a parser; their problems reported in this order.
	var g groups
	var problems []problem
	// The groups that shape the routes rather than the policies.
	g.rewrite = parseRewrite(values) // regex.go
	g.aliases = parseAliases(values) // alias.go
	g.canary, problems = parseCanary(values)
	f.report(problems)
	g.affinity = parseAffinity(values)
	g.fallback, problems = parseFallback(values, env)
	f.report(problems)
	// The groups of the policies.
	g.redirect = parseRedirect(values, &f.opts)
	g.proxy, problems = parseProxy(values, f.opts.config.retryNonIdempotent())
	f.report(problems)
	g.cors, problems = parseCORS(values)
	f.report(problems)
	g.customHeaders, problems = parseCustomHeaders(values, env)
	f.report(problems)
	g.connection = parseConnectionHeader(values)
	g.access = parseAccess(values, &f.opts)
	g.connections = parseConnectionLimit(values, env)   // connlimit.go
	g.responseRate = parseResponseRate(values)          // responserate.go
	g.basicAuth, problems = parseBasicAuth(values, env) // auth.go
	f.report(problems)
	g.externalAuth, problems = parseExternalAuth(values, env)
	f.report(problems)
	if g.externalAuth == nil && f.appliesGlobalAuth(values) { // globalauth.go
		g.externalAuth, problems = parseExternalAuth(f.globalAuthValues(), env)
		f.report(problems)
		f.globalAuth = g.externalAuth != nil
	}
	g.satisfyAny = parseSatisfy(values)
	g.responseRewrite, problems = parseResponseRewrite(values) // proxyrewrite.go
	f.report(problems)
	g.mirror, problems = parseMirror(values, env)
	f.report(problems)
	g.upstream, problems = parseUpstream(values, env)
	f.report(problems)
	g.passthrough, problems = parsePassthrough(values, &f.opts)
	f.report(problems)
	g.clientCert, problems = parseClientCert(values, env)
	f.report(problems)
	g.sslCiphers = parseSSLCiphers(values)
	g.snippets, problems = parseSnippets(values, f.ing, &f.opts) // snippets.go
	f.report(problems)
	g.noAccessLog = parseLogs(values) // accesslog.go
	g.tracing, problems = parseTracing(values, env)
	f.report(problems)
	f.apply(mergeGroups(&g))
}
