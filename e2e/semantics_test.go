package e2e

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestIngressSemantics checks, through a real Envoy fed by `ingress-xds
// serve --manifests`, the rules README's "How Ingress rules become routes"
// promises: host matching, merging and conflicts between Ingresses, path
// types, and which Ingress classes are served. Every request says which
// backend answered it, so a route to the wrong Service fails as surely as
// a missing one.
func TestIngressSemantics(t *testing.T) {
	framework.Heavy(t)
	framework.FindTools(t)
	alpha := framework.StartBackend(t, "alpha")
	beta := framework.StartBackend(t, "beta")
	gamma := framework.StartBackend(t, "gamma")

	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha, beta, gamma))
	writeManifest(t, dir, "hosts.yaml", hostsYAML)
	writeManifest(t, dir, "merge.yaml", mergeYAML)
	writeManifest(t, dir, "paths.yaml", pathsYAML)
	writeManifest(t, dir, "classes.yaml", classesYAML)
	writeManifest(t, dir, "ingressclasses.yaml", ingressClassesYAML("ingress-xds.io/controller"))
	cp := framework.StartControlPlane(t, "--manifests", dir)
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "first route served", func() error {
		return envoy.Expect("exact.example.com", "/", http.StatusOK, "alpha")
	})

	t.Run("hosts", func(t *testing.T) {
		expectAll(t, envoy, []routeCase{
			// An exact host beats a wildcard that also covers it.
			{"exact.example.com", "/", http.StatusOK, "alpha"},
			{"exact.example.com", "/deep/path", http.StatusOK, "alpha"},
			// Hosts are case-insensitive, and the port in Host is ignored.
			{"EXACT.Example.COM", "/", http.StatusOK, "alpha"},
			{"exact.example.com:8080", "/", http.StatusOK, "alpha"},
			{"Exact.EXAMPLE.com:1", "/x", http.StatusOK, "alpha"},
			// *.example.com covers exactly one label.
			{"a.example.com", "/", http.StatusOK, "beta"},
			{"other-name.example.com", "/y", http.StatusOK, "beta"},
			{"A.EXAMPLE.COM:65535", "/", http.StatusOK, "beta"},
			{"a.b.example.com", "/", http.StatusNotFound, ""},
			{"a.b.example.com:8080", "/", http.StatusNotFound, ""},
			{"example.com", "/", http.StatusNotFound, ""},
			{"aexample.com", "/", http.StatusNotFound, ""},
			// An exact host is only itself.
			{"x.exact.example.com", "/", http.StatusNotFound, ""},
			{"exact.example.org", "/", http.StatusNotFound, ""},
		})
	})

	t.Run("ingresses on one host merge, the oldest wins a conflict", func(t *testing.T) {
		expectAll(t, envoy, []routeCase{
			// Each Ingress's own paths.
			{"shared.example.com", "/old", http.StatusOK, "alpha"},
			{"shared.example.com", "/new", http.StatusOK, "beta"},
			{"shared.example.com", "/new/sub", http.StatusOK, "beta"},
			{"shared.example.com", "/undated", http.StatusOK, "gamma"},
			// Claimed by all three: the oldest by creationTimestamp wins,
			// although its name sorts last and the undated one counts as
			// the newest.
			{"shared.example.com", "/conflict", http.StatusOK, "alpha"},
			{"shared.example.com", "/conflict/x", http.StatusOK, "alpha"},
			// Same path, different type: not a conflict, Exact beats Prefix.
			{"shared.example.com", "/both", http.StatusOK, "beta"},
			{"shared.example.com", "/both/", http.StatusOK, "alpha"},
			{"shared.example.com", "/nothing", http.StatusNotFound, ""},
		})
		// The losers are told, the winner is not (file mode: in the log).
		log := cp.Output()
		for _, loser := range []string{"default/aa-newer", "default/a-undated"} {
			if !regexp.MustCompile(`object=` + loser + ` reason=RuleConflict .*older Ingress default/zz-oldest`).MatchString(log) {
				t.Errorf("no RuleConflict logged for %s", loser)
			}
		}
		if strings.Contains(log, "object=default/zz-oldest reason=RuleConflict") {
			t.Errorf("RuleConflict logged for the oldest Ingress, which wins")
		}
	})

	t.Run("paths", func(t *testing.T) {
		expectAll(t, envoy, []routeCase{
			// Prefix /aaa/bbb/ ignores its trailing slash, by segment.
			{"paths.example.com", "/aaa/bbb", http.StatusOK, "alpha"},
			{"paths.example.com", "/aaa/bbb/", http.StatusOK, "alpha"},
			{"paths.example.com", "/aaa/bbb/ccc", http.StatusOK, "alpha"},
			{"paths.example.com", "/aaa/bbbc", http.StatusNotFound, ""},
			{"paths.example.com", "/aaa", http.StatusNotFound, ""},
			// Exact /foo/ is exactly that.
			{"paths.example.com", "/foo/", http.StatusOK, "beta"},
			{"paths.example.com", "/foo", http.StatusNotFound, ""},
			{"paths.example.com", "/foo/x", http.StatusNotFound, ""},
			{"paths.example.com", "/foo//", http.StatusNotFound, ""},
			// Paths are case-sensitive, for both types.
			{"paths.example.com", "/Case", http.StatusOK, "gamma"},
			{"paths.example.com", "/case", http.StatusNotFound, ""},
			{"paths.example.com", "/CASE", http.StatusNotFound, ""},
			{"paths.example.com", "/Upper/x", http.StatusOK, "beta"},
			{"paths.example.com", "/upper/x", http.StatusNotFound, ""},
			{"paths.example.com", "/UPPER", http.StatusNotFound, ""},
			// Query strings never take part in matching.
			{"paths.example.com", "/foo/?x=1", http.StatusOK, "beta"},
			{"paths.example.com", "/foo?x=/", http.StatusNotFound, ""},
			{"paths.example.com", "/Case?q=a&r=b", http.StatusOK, "gamma"},
			{"paths.example.com", "/aaa/bbb?next=/elsewhere", http.StatusOK, "alpha"},
			{"paths.example.com", "/aaa?/bbb", http.StatusNotFound, ""},
			// ImplementationSpecific is Prefix: segments, trailing slash.
			{"paths.example.com", "/impl", http.StatusOK, "gamma"},
			{"paths.example.com", "/impl/", http.StatusOK, "gamma"},
			{"paths.example.com", "/impl/deeper", http.StatusOK, "gamma"},
			{"paths.example.com", "/implx", http.StatusNotFound, ""},
			{"paths.example.com", "/slash", http.StatusOK, "alpha"},
			{"paths.example.com", "/slash/x", http.StatusOK, "alpha"},
			// No pathType at all is ImplementationSpecific too.
			{"paths.example.com", "/untyped/x", http.StatusOK, "beta"},
			{"paths.example.com", "/untypedx", http.StatusNotFound, ""},
			// The root is not covered on this host.
			{"paths.example.com", "/", http.StatusNotFound, ""},
		})
	})

	if !t.Run("classes", func(t *testing.T) {
		expectAll(t, envoy, []routeCase{
			{"class-name.example.net", "/", http.StatusOK, "alpha"},
			{"class-annotation.example.net", "/", http.StatusOK, "alpha"},
			{"class-ours-by-controller.example.net", "/", http.StatusOK, "beta"},
			{"class-annotation-by-controller.example.net", "/", http.StatusOK, "beta"},
			// Files have no cluster default class: class-less is served.
			{"class-less.example.net", "/", http.StatusOK, "gamma"},
			// Not ours.
			{"class-other.example.net", "/", http.StatusNotFound, ""},
			{"class-other-annotation.example.net", "/", http.StatusNotFound, ""},
			{"class-unknown.example.net", "/", http.StatusNotFound, ""},
			// spec.ingressClassName wins over the legacy annotation.
			{"class-name-over-annotation.example.net", "/", http.StatusNotFound, ""},
		})
	}) {
		return
	}

	t.Run("an IngressClass handed to another controller stops being served", func(t *testing.T) {
		writeManifest(t, dir, "ingressclasses.yaml", ingressClassesYAML("example.com/someone-else"))
		took := framework.Eventually(t, convergeTimeout, "custom-name class no longer ours", func() error {
			if err := envoy.Expect("class-ours-by-controller.example.net", "/", http.StatusNotFound, ""); err != nil {
				return err
			}
			return envoy.Expect("class-annotation-by-controller.example.net", "/", http.StatusNotFound, "")
		})
		t.Logf("measured: IngressClass edit to unrouted traffic in %s", took.Round(time.Millisecond))
		expectAll(t, envoy, []routeCase{
			{"class-name.example.net", "/", http.StatusOK, "alpha"},
			{"class-less.example.net", "/", http.StatusOK, "gamma"},
		})
		writeManifest(t, dir, "ingressclasses.yaml", ingressClassesYAML("ingress-xds.io/controller"))
		framework.Eventually(t, convergeTimeout, "custom-name class ours again", func() error {
			return envoy.Expect("class-ours-by-controller.example.net", "/", http.StatusOK, "beta")
		})
	})
}

const hostsYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: hosts, namespace: default}
spec:
  rules:
  - host: "*.example.com"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
  - host: exact.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
`

// mergeYAML: three Ingresses share shared.example.com. The oldest is named
// so that it sorts last, and one has no creationTimestamp (which counts as
// the newest), so that the winner of /conflict can only be chosen by age.
const mergeYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: zz-oldest, namespace: default, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  rules:
  - host: shared.example.com
    http:
      paths:
      - {path: /old, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /conflict, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /both, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: aa-newer, namespace: default, creationTimestamp: "2024-06-01T00:00:00Z"}
spec:
  rules:
  - host: shared.example.com
    http:
      paths:
      - {path: /conflict, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
      - {path: /new, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
      - {path: /both, pathType: Exact, backend: {service: {name: beta, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: a-undated, namespace: default}
spec:
  rules:
  - host: SHARED.example.com
    http:
      paths:
      - {path: /conflict/, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}
      - {path: /undated, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}
`

const pathsYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: paths, namespace: default}
spec:
  rules:
  - host: paths.example.com
    http:
      paths:
      - {path: /aaa/bbb/, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /foo/, pathType: Exact, backend: {service: {name: beta, port: {number: 80}}}}
      - {path: /Case, pathType: Exact, backend: {service: {name: gamma, port: {number: 80}}}}
      - {path: /Upper, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
      - {path: /impl, pathType: ImplementationSpecific, backend: {service: {name: gamma, port: {number: 80}}}}
      - {path: /slash/, pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /untyped, backend: {service: {name: beta, port: {number: 80}}}}
`

// classesYAML holds one Ingress per way of naming a class, on hosts of
// their own domain so that no wildcard of the other Ingresses covers them. The control
// plane runs with the default --ingress-class ingress-xds; "custom-name"
// is ours through its controller only (see ingressClassesYAML).
var classesYAML = strings.Join([]string{
	classIngress("by-name", "class-name.example.net", "ingressClassName: ingress-xds", "", "alpha"),
	classIngress("by-annotation", "class-annotation.example.net", "", "kubernetes.io/ingress.class: ingress-xds", "alpha"),
	classIngress("by-controller", "class-ours-by-controller.example.net", "ingressClassName: custom-name", "", "beta"),
	classIngress("annotation-by-controller", "class-annotation-by-controller.example.net", "", "kubernetes.io/ingress.class: custom-name", "beta"),
	classIngress("classless", "class-less.example.net", "", "", "gamma"),
	classIngress("other", "class-other.example.net", "ingressClassName: other", "", "alpha"),
	classIngress("other-annotation", "class-other-annotation.example.net", "", "kubernetes.io/ingress.class: other", "alpha"),
	classIngress("unknown", "class-unknown.example.net", "ingressClassName: no-such-class", "", "alpha"),
	classIngress("name-over-annotation", "class-name-over-annotation.example.net", "ingressClassName: other", "kubernetes.io/ingress.class: ingress-xds", "alpha"),
}, "")

func classIngress(name, host, classField, annotation, service string) string {
	annotations := ""
	if annotation != "" {
		annotations = "\n  annotations: {" + annotation + "}"
	}
	return `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ` + name + `
  namespace: default` + annotations + `
spec:
  ` + classField + `
  rules:
  - host: ` + host + `
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: ` + service + `, port: {number: 80}}}}
`
}

// ingressClassesYAML: "other" belongs to someone else; "custom-name"
// belongs to customController.
func ingressClassesYAML(customController string) string {
	return `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: other}
spec: {controller: example.com/other}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: custom-name}
spec: {controller: ` + customController + `}
`
}
