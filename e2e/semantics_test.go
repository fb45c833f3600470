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
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "alpha", "beta", "gamma")...)},
		manifest{"hosts.yaml", hostsYAML},
		manifest{"merge.yaml", mergeYAML},
		manifest{"paths.yaml", pathsYAML},
		manifest{"classes.yaml", classesYAML},
		manifest{"ingressclasses.yaml", ingressClassesYAML("ingress-xds.io/controller")})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "first route served", func() error {
		return envoy.Expect("exact.example.com", "/", http.StatusOK, "alpha")
	})

	t.Run("hosts", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{
			// An exact host beats a wildcard that also covers it.
			{Host: "exact.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "exact.example.com", Path: "/deep/path", Status: http.StatusOK, Backend: "alpha"},
			// Hosts are case-insensitive, and the port in Host is ignored.
			{Host: "EXACT.Example.COM", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "exact.example.com:8080", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "Exact.EXAMPLE.com:1", Path: "/x", Status: http.StatusOK, Backend: "alpha"},
			// *.example.com covers exactly one label.
			{Host: "a.example.com", Path: "/", Status: http.StatusOK, Backend: "beta"},
			{Host: "other-name.example.com", Path: "/y", Status: http.StatusOK, Backend: "beta"},
			{Host: "A.EXAMPLE.COM:65535", Path: "/", Status: http.StatusOK, Backend: "beta"},
			{Host: "a.b.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "a.b.example.com:8080", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "aexample.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			// An exact host is only itself.
			{Host: "x.exact.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "exact.example.org", Path: "/", Status: http.StatusNotFound, Backend: ""},
		})
	})

	t.Run("ingresses on one host merge, the oldest wins a conflict", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{
			// Each Ingress's own paths.
			{Host: "shared.example.com", Path: "/old", Status: http.StatusOK, Backend: "alpha"},
			{Host: "shared.example.com", Path: "/new", Status: http.StatusOK, Backend: "beta"},
			{Host: "shared.example.com", Path: "/new/sub", Status: http.StatusOK, Backend: "beta"},
			{Host: "shared.example.com", Path: "/undated", Status: http.StatusOK, Backend: "gamma"},
			// Claimed by all three: the oldest by creationTimestamp wins,
			// although its name sorts last and the undated one counts as
			// the newest.
			{Host: "shared.example.com", Path: "/conflict", Status: http.StatusOK, Backend: "alpha"},
			{Host: "shared.example.com", Path: "/conflict/x", Status: http.StatusOK, Backend: "alpha"},
			// Same path, different type: not a conflict, Exact beats Prefix.
			{Host: "shared.example.com", Path: "/both", Status: http.StatusOK, Backend: "beta"},
			{Host: "shared.example.com", Path: "/both/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "shared.example.com", Path: "/nothing", Status: http.StatusNotFound, Backend: ""},
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
		expectAll(t, envoy, []framework.RouteCase{
			// Prefix /aaa/bbb/ ignores its trailing slash, by segment.
			{Host: "paths.example.com", Path: "/aaa/bbb", Status: http.StatusOK, Backend: "alpha"},
			{Host: "paths.example.com", Path: "/aaa/bbb/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "paths.example.com", Path: "/aaa/bbb/ccc", Status: http.StatusOK, Backend: "alpha"},
			{Host: "paths.example.com", Path: "/aaa/bbbc", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/aaa", Status: http.StatusNotFound, Backend: ""},
			// Exact /foo/ is exactly that.
			{Host: "paths.example.com", Path: "/foo/", Status: http.StatusOK, Backend: "beta"},
			{Host: "paths.example.com", Path: "/foo", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/foo/x", Status: http.StatusNotFound, Backend: ""},
			// Paths are case-sensitive, for both types.
			{Host: "paths.example.com", Path: "/Case", Status: http.StatusOK, Backend: "gamma"},
			{Host: "paths.example.com", Path: "/case", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/CASE", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/Upper/x", Status: http.StatusOK, Backend: "beta"},
			{Host: "paths.example.com", Path: "/upper/x", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/UPPER", Status: http.StatusNotFound, Backend: ""},
			// Query strings never take part in matching.
			{Host: "paths.example.com", Path: "/foo/?x=1", Status: http.StatusOK, Backend: "beta"},
			{Host: "paths.example.com", Path: "/foo?x=/", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/Case?q=a&r=b", Status: http.StatusOK, Backend: "gamma"},
			{Host: "paths.example.com", Path: "/aaa/bbb?next=/elsewhere", Status: http.StatusOK, Backend: "alpha"},
			{Host: "paths.example.com", Path: "/aaa?/bbb", Status: http.StatusNotFound, Backend: ""},
			// ImplementationSpecific is Prefix: segments, trailing slash.
			{Host: "paths.example.com", Path: "/impl", Status: http.StatusOK, Backend: "gamma"},
			{Host: "paths.example.com", Path: "/impl/", Status: http.StatusOK, Backend: "gamma"},
			{Host: "paths.example.com", Path: "/impl/deeper", Status: http.StatusOK, Backend: "gamma"},
			{Host: "paths.example.com", Path: "/implx", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/slash", Status: http.StatusOK, Backend: "alpha"},
			{Host: "paths.example.com", Path: "/slash/x", Status: http.StatusOK, Backend: "alpha"},
			// No pathType at all is ImplementationSpecific too.
			{Host: "paths.example.com", Path: "/untyped/x", Status: http.StatusOK, Backend: "beta"},
			{Host: "paths.example.com", Path: "/untypedx", Status: http.StatusNotFound, Backend: ""},
			// The root is not covered on this host.
			{Host: "paths.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
		})
		// Repeated slashes are merged before routing, as nginx's
		// merge_slashes does before it chooses a location: /foo// is the
		// Exact /foo/. The backend gets the merged path, where nginx
		// forwards the path as sent (docs/annotations.md's preface).
		r, err := envoy.Get("paths.example.com", "/foo//")
		if err != nil || r.Status != http.StatusOK || r.Backend != "beta" || r.Echo.Path != "/foo/" {
			t.Errorf("GET paths.example.com/foo//: %d from %q (it saw %q), %v; want 200 from beta, which sees /foo/", r.Status, r.Backend, r.Echo.Path, err)
		}
	})

	if !t.Run("classes", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{
			{Host: "class-name.example.net", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "class-annotation.example.net", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "class-ours-by-controller.example.net", Path: "/", Status: http.StatusOK, Backend: "beta"},
			{Host: "class-annotation-by-controller.example.net", Path: "/", Status: http.StatusOK, Backend: "beta"},
			// Files have no cluster default class: class-less is served.
			{Host: "class-less.example.net", Path: "/", Status: http.StatusOK, Backend: "gamma"},
			// Not ours.
			{Host: "class-other.example.net", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "class-other-annotation.example.net", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "class-unknown.example.net", Path: "/", Status: http.StatusNotFound, Backend: ""},
			// spec.ingressClassName wins over the legacy annotation.
			{Host: "class-name-over-annotation.example.net", Path: "/", Status: http.StatusNotFound, Backend: ""},
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
		expectAll(t, envoy, []framework.RouteCase{
			{Host: "class-name.example.net", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "class-less.example.net", Path: "/", Status: http.StatusOK, Backend: "gamma"},
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
