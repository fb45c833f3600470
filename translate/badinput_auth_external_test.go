package translate_test

// externalAuthBadInputCases are the rows of docs/bad-input.md for external
// authentication (auth-url): a value that cannot be used refuses the
// Ingress (its paths answer 503, as ingress-nginx denies the location),
// never drops the check, and never reaches Envoy or the authorisation
// service.
func externalAuthBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	refused := routeAnswers("bad.example.com", 503)
	return []badInputCase{
		{name: "auth-url-userinfo", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://user:secret@auth.default.svc/verify"`, rule),
			check:     refused},
		{name: "auth-url-scheme", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "file:///etc/passwd"`, rule),
			check:     refused},
		{name: "auth-url-control-characters", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://auth/verify\r\nX-Injected: 1\u0000"`, rule),
			check:     refused},
		// The control plane's and the node's own services, and cloud
		// metadata, are never an auth service (the service also refuses
		// them after DNS).
		{name: "auth-url-loopback-link-local", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://169.254.169.254/latest/meta-data"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/auth-url: "http://localhost:9901/quitquitquit"`, simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: refused},
		{name: "auth-url-host-variable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://$http_x_target/verify"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/auth-url: "http://$host/verify"`, simpleRule("", "/", "Prefix", "bad", "{number: 80}")),
			check: refused},
		{name: "auth-url-unknown-variable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://auth/verify?ns=$namespace"`, rule),
			check:     refused},
		{name: "auth-keys-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://auth/verify", nginx.ingress.kubernetes.io/auth-method: "get", nginx.ingress.kubernetes.io/auth-response-headers: "X-User\r\nX: y", nginx.ingress.kubernetes.io/auth-signin: "javascript:alert(1)", nginx.ingress.kubernetes.io/auth-cache-duration: "5m 200"`, rule),
			check:     refused},
		{name: "auth-proxy-set-headers-configmap", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/auth-url: "http://auth/verify", nginx.ingress.kubernetes.io/auth-proxy-set-headers: "default/missing"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/auth-url: "http://auth/verify", nginx.ingress.kubernetes.io/auth-proxy-set-headers: "other/headers"`, simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")) +
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: badheaders, namespace: default}\ndata: {\"X-Bad\": \"a\\r\\nInjected: 1\"}\n---\n" +
				annotated("bad3", `nginx.ingress.kubernetes.io/auth-url: "http://auth/verify", nginx.ingress.kubernetes.io/auth-proxy-set-headers: "default/badheaders"`, simpleRule("bad3.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: refused},
	}
}
