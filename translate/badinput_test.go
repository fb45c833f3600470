package translate_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/internal/envoytest"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	renderer "github.com/ingress-xds/ingress-xds/translate/envoy"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/xds"
)

// goodObjects is a healthy Ingress that every bad-input case runs beside:
// whatever the bad input, its routing must come out exactly the same.
const goodObjects = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: good, namespace: default, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  tls: [{hosts: [good.example.com], secretName: good-cert}]
  rules:
  - host: good.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: good, port: {number: 80}}}}
      - {path: /api, pathType: Exact, backend: {service: {name: good, port: {name: http}}}}
---
apiVersion: v1
kind: Service
metadata: {name: good, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: good-1, namespace: default, labels: {kubernetes.io/service-name: good}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [10.9.0.1]}]
---
` + "%GOODSECRET%"

// badInputCase is one row of docs/bad-input.md.
type badInputCase struct {
	name string
	// manifests of the bad input; %CERT:NAME:KIND% placeholders are replaced
	// by a TLS Secret named NAME of the given kind (see tlsSecret).
	manifests string
	// reason of the problem reported on the bad Ingress; empty when the input
	// is dropped without a problem on any Ingress (it is not an Ingress's fault).
	reason string
	// check, when set, asserts something more about the result.
	check func(t *testing.T, res *translate.Result)
}

func ingress(name, spec string) string {
	return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s, namespace: default}\nspec:\n%s\n---\n", name, spec)
}

// annotated is ingress with annotations (a YAML flow mapping's entries).
func annotated(name, annotations, spec string) string {
	return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s, namespace: default, annotations: {%s}}\nspec:\n%s\n---\n", name, annotations, spec)
}

func simpleRule(host, path, pathType, svc string, port string) string {
	return fmt.Sprintf("  rules:\n  - host: %q\n    http:\n      paths:\n      - {path: %q, pathType: %s, backend: {service: {name: %s, port: %s}}}", host, path, pathType, svc, port)
}

const badService = "apiVersion: v1\nkind: Service\nmetadata: {name: bad, namespace: default}\nspec: {ports: [{name: http, port: 80}]}\n---\n"

func badInputCases() []badInputCase {
	manyPaths := "  rules:\n  - host: many.example.com\n    http:\n      paths:\n"
	for i := 0; i < frontend.MaxPathsPerIngress+500; i++ {
		manyPaths += fmt.Sprintf("      - {path: /p%d, pathType: Prefix, backend: {service: {name: bad, port: {number: 80}}}}\n", i)
	}
	return append([]badInputCase{
		{name: "unknown-service", reason: "ServiceNotFound",
			manifests: ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "nope", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "unknown-port-number", reason: "ServicePortNotFound",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 81}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "unknown-port-name", reason: "ServicePortNotFound",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "bad", "{name: grpc}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "udp-service-port", reason: "ServicePortNotFound",
			manifests: "apiVersion: v1\nkind: Service\nmetadata: {name: bad, namespace: default}\nspec: {ports: [{name: dns, port: 53, protocol: UDP}]}\n---\n" +
				ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 53}"))},
		{name: "invalid-service-name", reason: "InvalidBackend",
			manifests: ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "Bad_Name", "{number: 80}"))},
		{name: "backend-without-service", reason: "InvalidBackend",
			manifests: ingress("bad", "  rules:\n  - host: bad.example.com\n    http: {paths: [{path: /, pathType: Prefix, backend: {}}]}")},
		{name: "resource-backend", reason: "UnsupportedBackend",
			manifests: ingress("bad", "  rules:\n  - host: bad.example.com\n    http: {paths: [{path: /, pathType: Prefix, backend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: icons}}}]}")},
		{name: "default-backend-unknown-service", reason: "ServiceNotFound",
			manifests: ingress("bad", "  defaultBackend: {service: {name: nope, port: {number: 80}}}")},
		{name: "invalid-hostname", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule("bad_host!.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "host-with-port", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule("bad.example.com:8080", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "host-is-ip-address", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule("192.0.2.1", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "wildcard-not-leftmost", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule("a.*.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "unicode-hostname", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule("bücher.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "control-characters-in-host", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule("bad\x01.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "very-long-hostname", reason: "InvalidHost",
			manifests: badService + ingress("bad", simpleRule(strings.Repeat("a", 300)+".example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "relative-path", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "foo", "Prefix", "bad", "{number: 80}"))},
		{name: "control-characters-in-path", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/a\x00b\r\nX-Injected: 1", "Prefix", "bad", "{number: 80}"))},
		{name: "query-in-path", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/search?q=1", "Exact", "bad", "{number: 80}"))},
		{name: "space-in-path", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/a b", "Prefix", "bad", "{number: 80}"))},
		{name: "regex-in-path", reason: "",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/(.*)[", "ImplementationSpecific", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				// ImplementationSpecific is a literal, segment-wise prefix here:
				// regex characters match themselves and never reach a regex engine.
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				if got := vh.GetRoutes()[0].GetMatch().GetPathSeparatedPrefix(); got != "/(.*)[" {
					t.Errorf("route matches %v, want the literal prefix /(.*)[", vh.GetRoutes()[0].GetMatch())
				}
			}},
		{name: "very-long-path", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/"+strings.Repeat("x", frontend.MaxPathLength), "Prefix", "bad", "{number: 80}"))},
		{name: "empty-exact-path", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "", "Exact", "bad", "{number: 80}"))},
		{name: "duplicate-rule", reason: "DuplicateRule",
			manifests: badService + ingress("bad", "  rules:\n  - host: bad.example.com\n    http: {paths: [{path: /a, pathType: Prefix, backend: {service: {name: bad, port: {number: 80}}}}, {path: /a, pathType: Prefix, backend: {service: {name: nope, port: {number: 80}}}}]}"),
			check:     routeAnswers("bad.example.com", 0)},
		{name: "overlapping-prefixes", reason: "DuplicateRule",
			manifests: badService + ingress("bad", "  rules:\n  - host: bad.example.com\n    http: {paths: [{path: /a, pathType: Prefix, backend: {service: {name: bad, port: {number: 80}}}}, {path: /a/, pathType: Prefix, backend: {service: {name: bad, port: {number: 80}}}}]}")},
		{name: "conflict-with-older-ingress", reason: "RuleConflict",
			manifests: badService + ingress("bad", simpleRule("good.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "too-many-paths", reason: "TooManyPaths",
			manifests: badService + ingress("bad", manyPaths),
			check: func(t *testing.T, res *translate.Result) {
				if n := len(vhostNamed(res, "ingress_http", "many.example.com").GetRoutes()); n != frontend.MaxPathsPerIngress {
					t.Errorf("many.example.com has %d routes, want the first %d", n, frontend.MaxPathsPerIngress)
				}
			}},
		{name: "tls-secret-not-found", reason: "InvalidTLSSecret",
			manifests: badService + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: nope}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-secret-wrong-type", reason: "InvalidTLSSecret",
			manifests: badService + "%CERT:bad-cert:opaque%" + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-secret-missing-key", reason: "InvalidTLSSecret",
			manifests: badService + "%CERT:bad-cert:no-key%" + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-secret-missing-certificate", reason: "InvalidTLSSecret",
			manifests: badService + "%CERT:bad-cert:no-cert%" + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-certificate-garbage", reason: "InvalidTLSSecret",
			manifests: badService + "%CERT:bad-cert:garbage%" + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-key-does-not-match", reason: "InvalidTLSSecret",
			manifests: badService + "%CERT:bad-cert:mismatch%" + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-weak-rsa-key", reason: "InvalidTLSSecret",
			manifests: badService + "%CERT:bad-cert:rsa1024%" + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-without-hosts", reason: "InvalidTLS",
			manifests: badService + "%CERT:bad-cert:good%" + ingress("bad", "  tls: [{secretName: bad-cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-secret-in-other-namespace", reason: "InvalidTLS",
			manifests: badService + ingress("bad", "  tls: [{hosts: [bad.example.com], secretName: other/cert}]\n"+simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     servedOverHTTPOnly("bad.example.com")},
		{name: "tls-host-conflict", reason: "TLSConflict",
			manifests: "%CERT:bad-cert:good%" + ingress("bad", "  tls: [{hosts: [good.example.com], secretName: bad-cert}]")},
		{name: "annotation-value-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `ingress-xds.io/force-ssl-redirect: "yes\r\nX-Injected: 1"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeForwards("bad.example.com")},
		{name: "regex-path-re2-refuses", reason: "InvalidPath",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/use-regex: "true"`, simpleRule("bad.example.com", "/(?=lookahead)", "ImplementationSpecific", "bad", "{number: 80}"))},
		{name: "regex-path-too-costly", reason: "InvalidPath",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/use-regex: "true"`, simpleRule("bad.example.com", "/"+strings.Repeat("(a|b)", 300), "ImplementationSpecific", "bad", "{number: 80}"))},
		{name: "plain-path-on-a-regex-host", reason: "InvalidPath",
			manifests: badService + ingress("bad", simpleRule("bad.example.com", "/a(b", "Prefix", "bad", "{number: 80}")) +
				annotated("regex", `nginx.ingress.kubernetes.io/use-regex: "true"`, simpleRule("bad.example.com", "/r.*", "ImplementationSpecific", "bad", "{number: 80}"))},
		{name: "rewrite-target-variable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/rewrite-target: "/$host/x"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeForwards("bad.example.com")},
		{name: "rewrite-target-absolute-url", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/rewrite-target: "http://evil.example/x"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeForwards("bad.example.com")},
		{name: "x-forwarded-prefix-capture", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/rewrite-target: /x, nginx.ingress.kubernetes.io/x-forwarded-prefix: "/$1"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "annotation-unknown", reason: "UnknownAnnotation",
			manifests: badService + annotated("bad", `ingress-xds.io/no-such-thing: "1", nginx.ingress.kubernetes.io/not-an-nginx-key: "1"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeForwards("bad.example.com")},
		{name: "external-name-disabled", reason: "ExternalNameRefused",
			manifests: "apiVersion: v1\nkind: Service\nmetadata: {name: bad, namespace: default}\nspec: {type: ExternalName, externalName: example.org, ports: [{port: 80}]}\n---\n" +
				ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}"))},
		{name: "endpoint-garbage", reason: "",
			manifests: badService + "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: bad-1, namespace: default, labels: {kubernetes.io/service-name: bad}}\naddressType: IPv4\nports: [{name: http, port: 70000}]\nendpoints: [{addresses: [not-an-ip, 999.1.1.1]}]\n---\n" +
				"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: bad-2, namespace: default, labels: {kubernetes.io/service-name: bad}}\naddressType: IPv4\nports: [{name: http, port: 80}]\nendpoints: [{addresses: [not-an-ip, \"fe80::1%eth0\"]}]\n---\n" +
				ingress("bad", simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				for _, la := range res.Resources.Endpoints {
					if cla := proto.Clone(la).(*endpointv3.ClusterLoadAssignment); cla.ClusterName == "default/bad/80" && len(cla.Endpoints) != 0 {
						t.Errorf("garbage endpoints reached the load assignment: %v", cla)
					}
				}
			}},
		{name: "undecodable-document", reason: "",
			manifests: "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad}\nspec: {rules: 42}\n---\n"},
	}, slices.Concat(proxyBadInputCases(), proxyRewriteBadInputCases(), mirrorBadInputCases(), redirectBadInputCases(), canaryBadInputCases(), upstreamBadInputCases(), affinityBadInputCases(), fallbackBadInputCases(), aliasBadInputCases(), accessBadInputCases(), refusalBadInputCases(), corsBadInputCases(), basicAuthBadInputCases(), authTLSBadInputCases(), externalAuthBadInputCases(), configMapBadInputCases(), observabilityBadInputCases())...)
}

// routeAnswers checks that host's first HTTP route answers status directly
// (0: it routes to a cluster).
func routeAnswers(host string, status uint32) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.Routes) == 0 {
			t.Fatalf("no routes for %s", host)
		}
		got := vh.Routes[0].GetDirectResponse().GetStatus()
		if got != status {
			t.Errorf("%s answers %d directly, want %d", host, got, status)
		}
	}
}

// servedOverHTTPOnly checks that host keeps its HTTP routes and has no
// HTTPS filter chain (never a broken one).
// routeForwards checks that the plain-HTTP route of host forwards to its
// Service, as it would without the bad input.
func routeForwards(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() == "" {
			t.Errorf("%s is not forwarded to its Service: %v", host, vh)
		}
	}
}

func servedOverHTTPOnly(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		if vhostNamed(res, frontend.HTTPListenerName, host) == nil {
			t.Errorf("%s is no longer served over HTTP", host)
		}
		for _, l := range res.Resources.Listeners {
			for _, fc := range l.FilterChains {
				for _, sn := range fc.GetFilterChainMatch().GetServerNames() {
					if sn == host {
						t.Errorf("%s has an HTTPS filter chain despite its broken TLS", host)
					}
				}
			}
		}
	}
}

func vhostNamed(res *translate.Result, routeConfig, host string) *routev3.VirtualHost {
	for _, rc := range res.Resources.Routes {
		if rc.Name != routeConfig {
			continue
		}
		for _, vh := range rc.VirtualHosts {
			if vh.Name == host {
				whole, err := renderer.Expand(vh) // routes are kept encoded
				if err != nil {
					panic(err)
				}
				return whole
			}
		}
	}
	return nil
}

// TestBadInput runs every row of docs/bad-input.md beside a good Ingress and
// checks the promises: no panic, the problem is reported on the bad Ingress,
// the good Ingress is routed exactly as without the bad input, and the
// result passes go-control-plane's validation, makes a consistent snapshot,
// and (unless -short) is accepted by the real Envoy.
func TestBadInput(t *testing.T) {
	certs := newTestCerts(t)
	baseline := translateManifests(t, certs.expand(goodObjects))
	baseHTTP := vhostNamed(baseline, frontend.HTTPListenerName, "good.example.com")
	baseHTTPS := vhostNamed(baseline, renderer.HTTPSRoutePrefix+"good.example.com", "good.example.com")
	if baseHTTP == nil || baseHTTPS == nil {
		t.Fatal("the good Ingress is not served over HTTP and HTTPS on its own")
	}
	var envoy string
	if !testing.Short() {
		envoy = envoytest.Binary(t)
	}
	for _, tc := range badInputCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := translateManifests(t, certs.expand(goodObjects+"---\n"+tc.manifests))
			var reasons []string
			for _, p := range res.Problems {
				if p.Name == "good" {
					t.Errorf("the good Ingress got a problem: %+v", p)
				}
				if p.Name == "bad" || p.Kind == "ConfigMap" { // the controller ConfigMap's (configmap cases)
					reasons = append(reasons, p.Reason)
				}
			}
			if tc.reason != "" && !contains(reasons, tc.reason) {
				t.Errorf("problems on the bad Ingress: %v, want %s", reasons, tc.reason)
			}
			if tc.reason == "" && len(reasons) > 0 {
				t.Errorf("unexpected problems on the bad Ingress: %v", reasons)
			}
			if got := vhostNamed(res, frontend.HTTPListenerName, "good.example.com"); !proto.Equal(got, baseHTTP) {
				t.Errorf("the good Ingress's HTTP routes changed:\n got %v\nwant %v", got, baseHTTP)
			}
			if got := vhostNamed(res, renderer.HTTPSRoutePrefix+"good.example.com", "good.example.com"); !proto.Equal(got, baseHTTPS) {
				t.Errorf("the good Ingress's HTTPS routes changed:\n got %v\nwant %v", got, baseHTTPS)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
			if err := xds.Validate(res.Resources); err != nil {
				t.Errorf("invalid resources: %v", err)
			}
			if _, err := xds.NewSnapshot(res.Resources); err != nil {
				t.Errorf("inconsistent snapshot: %v", err)
			}
			if envoy != "" {
				envoyValidate(t, envoy, res.Resources)
			}
		})
	}
}

// TestBadInputDocumented keeps docs/bad-input.md and the cases in step.
func TestBadInputDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "bad-input.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	cases := badInputCases()
	if len(cases) < 25 {
		t.Errorf("only %d bad-input cases; the table promises at least 25", len(cases))
	}
	for _, tc := range cases {
		if !documented[tc.name] {
			t.Errorf("case %q is not in docs/bad-input.md", tc.name)
		}
		delete(documented, tc.name)
	}
	for name := range documented {
		t.Errorf("docs/bad-input.md lists %q, which no test covers", name)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func translateManifests(t *testing.T, manifests string) *translate.Result {
	t.Helper()
	var objs kube.Objects
	_ = kube.DecodeManifests(strings.NewReader(manifests), "test", &objs) // undecodable documents are skipped, as in serve
	res, err := translate.Translate(objs.StateWith(kube.ClassFilter{WatchClassless: true}, goldenReferences), goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func envoyValidate(t *testing.T, envoy string, r *translate.Resources) {
	t.Helper()
	envoytest.Validate(t, envoy, r)
}

// testCerts are TLS key pairs made for the test run.
type testCerts struct {
	good, other, rsa1024 framework.KeyPair
}

func newTestCerts(t *testing.T) *testCerts {
	t.Helper()
	ca := framework.NewCA(t, "translate bad-input CA")
	return &testCerts{
		good:    ca.Issue(t, "good.example.com", "good.example.com", "bad.example.com"),
		other:   ca.Issue(t, "other.example.com", "other.example.com"),
		rsa1024: ca.IssueWithKey(t, framework.NewRSAKey(t, 1024), "bad.example.com", "bad.example.com"),
	}
}

var certPlaceholder = regexp.MustCompile(`%CERT:([a-z0-9-]+):([a-z0-9-]+)%`)

// expand replaces %GOODSECRET% and %CERT:NAME:KIND% with Secret manifests.
func (c *testCerts) expand(manifests string) string {
	manifests = strings.ReplaceAll(manifests, "%GOODSECRET%", tlsSecret("good-cert", "kubernetes.io/tls", c.good.CertPEM, c.good.KeyPEM))
	return certPlaceholder.ReplaceAllStringFunc(manifests, func(m string) string {
		parts := certPlaceholder.FindStringSubmatch(m)
		name, kind := parts[1], parts[2]
		switch kind {
		case "good":
			return tlsSecret(name, "kubernetes.io/tls", c.good.CertPEM, c.good.KeyPEM)
		case "opaque":
			return tlsSecret(name, "Opaque", c.good.CertPEM, c.good.KeyPEM)
		case "no-key":
			return tlsSecret(name, "kubernetes.io/tls", c.good.CertPEM, nil)
		case "no-cert":
			return tlsSecret(name, "kubernetes.io/tls", nil, c.good.KeyPEM)
		case "garbage":
			return tlsSecret(name, "kubernetes.io/tls", []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), c.good.KeyPEM)
		case "mismatch":
			return tlsSecret(name, "kubernetes.io/tls", c.good.CertPEM, c.other.KeyPEM)
		case "rsa1024":
			return tlsSecret(name, "kubernetes.io/tls", c.rsa1024.CertPEM, c.rsa1024.KeyPEM)
		}
		panic("unknown certificate kind " + kind)
	})
}

func tlsSecret(name, typ string, cert, key []byte) string {
	s := fmt.Sprintf("apiVersion: v1\nkind: Secret\ntype: %s\nmetadata: {name: %s, namespace: default}\ndata:\n", typ, name)
	if cert != nil {
		s += "  tls.crt: " + base64.StdEncoding.EncodeToString(cert) + "\n"
	}
	if key != nil {
		s += "  tls.key: " + base64.StdEncoding.EncodeToString(key) + "\n"
	}
	return s + "---\n"
}
