package annotations

// EnableAccessLog turns the access log off for an Ingress's paths.
var EnableAccessLog = key[bool](&definition{
	name:  "enable-access-log",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"false": the Ingress's requests are not written to the access log (the controller ConfigMap's log-format-upstream); ` +
		`"true" (the default): they are.`,
	verdict: Honoured,
	note: `The route carries metadata that the access log's filter reads (Envoy's CEL filter); a request no route takes ` +
		`(a path no rule has) is logged as the host's.`,
}, parseBool)

// EnableRewriteLog writes nginx's rewrite decisions to its error log.
var EnableRewriteLog = key[bool](&definition{
	name:    "enable-rewrite-log",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"true": nginx writes each rewrite it applies to its error log, at notice level.`,
	verdict: Ignored,
	note: `Envoy has no log of its rewrites: a rewrite is route configuration (docs/annotations.md, rewrite-target), which ` +
		"`ingress-xds translate` and the Inspector show; Envoy's own debug log (--log-level debug) shows each request's route.",
}, parseBool)

// logKeys are the access log's keys.
func logKeys() []*definition { return []*definition{EnableAccessLog.def, EnableRewriteLog.def} }
