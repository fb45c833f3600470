package translate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// TestTranslatorMatchesFreshTranslation drives one Translator through a
// long random series of changes (Ingresses edited, added and deleted,
// Services and EndpointSlices replaced or removed, Secrets rotated) and
// checks after every step that its output is byte for byte what a fresh
// translation of the same state gives: caching must never show.
func TestTranslatorMatchesFreshTranslation(t *testing.T) {
	st := mergedGoldenState(t)
	tr := translate.NewTranslator(goldenOptions)
	rng := rand.New(rand.NewSource(1))
	if _, err := tr.Translate(st); err != nil { // warm: the fast path builds on a translation
		t.Fatal(err)
	}
	// What a cluster source says of EndpointSlices (kube.SliceChanges):
	// the map of the last full build, and the Services whose slices moved
	// since.
	slicesBase, moved := st.EndpointSlices, []types.NamespacedName{}
	for step := 0; step < 300; step++ {
		desc := mutate(rng, st)
		var got *translate.Result
		svc, isEndpoints := endpointChange(desc)
		if isEndpoints {
			moved = append(moved, svc)
		}
		if isEndpoints && step%2 == 0 {
			// The endpoint fast path must give what a full build gives.
			var fast bool
			got, fast = tr.UpdateEndpoints(map[types.NamespacedName][]*kube.EndpointSlice{svc: st.EndpointSlices[svc]})
			if !fast {
				t.Fatalf("step %d: no fast path after a full translation", step)
			}
		} else {
			st.SlicesSince = nil
			if rng.Intn(3) > 0 {
				st.SlicesSince = &kube.SliceChanges{Base: slicesBase, Services: slices.Clone(moved)}
			}
			var err error
			if got, err = tr.Translate(st); err != nil {
				t.Fatal(err)
			}
			slicesBase, moved = st.EndpointSlices, moved[:0]
		}
		want := sameAsFresh(t, got, st, goldenOptions, fmt.Sprintf("step %d (%s)", step, desc))
		if !reflect.DeepEqual(got.Problems, want.Problems) {
			t.Fatalf("step %d (%s): incremental problems differ from a fresh translation's:\n got %v\nwant %v", step, desc, got.Problems, want.Problems)
		}
	}
}

// endpointChange recognises mutate's description of an endpoint-only change.
func endpointChange(desc string) (types.NamespacedName, bool) {
	rest, ok := strings.CutPrefix(desc, "change endpoints of ")
	if !ok {
		return types.NamespacedName{}, false
	}
	ns, name, _ := strings.Cut(rest, "/")
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// mergedGoldenState is every golden case's objects in one state, with
// the Gateway API front-end's cases (of which, for a name two share, the
// later is kept).
func mergedGoldenState(t *testing.T) *kube.State {
	t.Helper()
	var all []byte
	gateway, err := filepath.Glob(filepath.Join("gatewayapi", "testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, input := range append(goldenCases(t), gateway...) {
		data, err := os.ReadFile(input)
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, data...), "\n---\n"...)
	}
	var objs kube.Objects
	if err := kube.DecodeManifests(bytes.NewReader(all), "golden cases", &objs); err != nil {
		t.Fatal(err)
	}
	st := objs.StateWith(kube.ClassFilter{WatchClassless: true}, kube.Refs{Ingress: frontend.References})
	for i, ing := range st.Ingresses {
		ing.Generation = 1 // as the API server sets it
		ing.UID = types.UID(fmt.Sprintf("uid-%d", i))
	}
	return st
}

// mutate applies one random change the way sources do: changed objects
// are new pointers, never modified in place, in a new list or map (see
// kube.State); Ingresses stay unique by namespace and name.
func mutate(rng *rand.Rand, st *kube.State) string {
	switch rng.Intn(10) {
	case 0: // edit an Ingress: drop its last path or rule
		if len(st.Ingresses) == 0 {
			return "nothing"
		}
		i := rng.Intn(len(st.Ingresses))
		ing := st.Ingresses[i].DeepCopy()
		ing.Generation++ // the API server counts spec changes
		if n := len(ing.Spec.Rules); n > 0 {
			if r := ing.Spec.Rules[n-1].HTTP; r != nil && len(r.Paths) > 1 {
				r.Paths = r.Paths[:len(r.Paths)-1]
			} else {
				ing.Spec.Rules = ing.Spec.Rules[:n-1]
			}
		}
		st.Ingresses = slices.Clone(st.Ingresses)
		st.Ingresses[i] = ing
		return "edit ingress " + ing.Name
	case 1: // add an Ingress reusing an existing backend on a new host
		if len(st.Ingresses) == 0 {
			return "nothing"
		}
		ing := st.Ingresses[rng.Intn(len(st.Ingresses))].DeepCopy()
		ing.Name = fmt.Sprintf("%s-copy-%d", ing.Name, rng.Intn(1000))
		for i := range ing.Spec.Rules {
			ing.Spec.Rules[i].Host = fmt.Sprintf("copy%d.example.com", rng.Intn(50))
		}
		if slices.ContainsFunc(st.Ingresses, func(o *networkingv1.Ingress) bool { return o.Namespace == ing.Namespace && o.Name == ing.Name }) {
			return "nothing"
		}
		st.Ingresses = append(slices.Clip(st.Ingresses), ing)
		return "add ingress " + ing.Name
	case 2: // delete an Ingress
		if len(st.Ingresses) < 3 {
			return "nothing"
		}
		i := rng.Intn(len(st.Ingresses))
		name := st.Ingresses[i].Name
		st.Ingresses = slices.Delete(slices.Clone(st.Ingresses), i, i+1)
		return "delete ingress " + name
	case 3: // replace a Service, sometimes dropping its ports
		key := randomKey(rng, st.Services)
		if key == nil {
			return "nothing"
		}
		svc := *st.Services[*key]
		if rng.Intn(3) == 0 {
			svc.Ports = nil
		}
		// Sources hand over a new map for a part that changed.
		st.Services = maps.Clone(st.Services)
		st.Services[*key] = &svc
		return "replace service " + key.String()
	case 4: // delete a Service
		key := randomKey(rng, st.Services)
		if key == nil {
			return "nothing"
		}
		st.Services = maps.Clone(st.Services)
		delete(st.Services, *key)
		return "delete service " + key.String()
	case 5: // change an EndpointSlice: drop or add an endpoint
		key := randomKey(rng, st.EndpointSlices)
		if key == nil {
			return "nothing"
		}
		slices := append([]*kube.EndpointSlice(nil), st.EndpointSlices[*key]...)
		i := rng.Intn(len(slices))
		s := *slices[i]
		if len(s.Ready) > 1 && rng.Intn(2) == 0 {
			s.Ready = s.Ready[1:]
		} else {
			s.Ready = append(s.Ready[:len(s.Ready):len(s.Ready)], fmt.Sprintf("10.99.0.%d", rng.Intn(250)))
		}
		slices[i] = &s
		st.EndpointSlices = maps.Clone(st.EndpointSlices)
		st.EndpointSlices[*key] = slices
		return "change endpoints of " + key.String()
	case 7: // write an Ingress's status: a new object, the same spec
		if len(st.Ingresses) == 0 {
			return "nothing"
		}
		i := rng.Intn(len(st.Ingresses))
		ing := st.Ingresses[i].DeepCopy()
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: fmt.Sprintf("192.0.2.%d", rng.Intn(250))}}
		st.Ingresses = slices.Clone(st.Ingresses)
		st.Ingresses[i] = ing
		return "write status of ingress " + ing.Name
	case 8: // toggle an annotation the translator reads (the generation stays)
		if len(st.Ingresses) == 0 {
			return "nothing"
		}
		i := rng.Intn(len(st.Ingresses))
		ing := st.Ingresses[i].DeepCopy()
		a := toggledAnnotations[rng.Intn(len(toggledAnnotations))]
		if _, set := ing.Annotations[a.key]; set {
			delete(ing.Annotations, a.key)
		} else {
			if ing.Annotations == nil {
				ing.Annotations = map[string]string{}
			}
			ing.Annotations[a.key] = a.value
		}
		st.Ingresses = slices.Clone(st.Ingresses)
		st.Ingresses[i] = ing
		return "toggle " + a.key + " of ingress " + ing.Name
	case 9: // edit an HTTPRoute (its rules or hostnames), copy it or delete it
		g := st.Gateway
		if g.Empty() || len(g.HTTPRoutes) == 0 {
			return "nothing"
		}
		next := *g
		next.HTTPRoutes = slices.Clone(g.HTTPRoutes)
		i := rng.Intn(len(next.HTTPRoutes))
		r := next.HTTPRoutes[i].DeepCopy()
		st.Gateway = &next
		switch n := len(r.Spec.Rules); {
		case n > 1 && rng.Intn(3) == 0:
			r.Spec.Rules = r.Spec.Rules[:n-1]
			next.HTTPRoutes[i] = r
			return "edit httproute " + r.Name
		case rng.Intn(3) == 0:
			// A hostname of another HTTPRoute or of an Ingress (which
			// keeps it), or a new one.
			host := gwapiv1.Hostname(fmt.Sprintf("route-%d.example.com", rng.Intn(5)))
			if o := next.HTTPRoutes[rng.Intn(len(next.HTTPRoutes))]; len(o.Spec.Hostnames) > 0 && rng.Intn(2) == 0 {
				host = o.Spec.Hostnames[0]
			} else if len(st.Ingresses) > 0 && rng.Intn(2) == 0 {
				if ing := st.Ingresses[rng.Intn(len(st.Ingresses))]; len(ing.Spec.Rules) > 0 && ing.Spec.Rules[0].Host != "" {
					host = gwapiv1.Hostname(ing.Spec.Rules[0].Host)
				}
			}
			if len(r.Spec.Hostnames) > 0 && rng.Intn(2) == 0 {
				r.Spec.Hostnames[rng.Intn(len(r.Spec.Hostnames))] = host
			} else {
				r.Spec.Hostnames = append(r.Spec.Hostnames, host)
			}
			next.HTTPRoutes[i] = r
			return "edit httproute " + r.Name + " hostnames"
		case rng.Intn(2) == 0:
			r.Name = fmt.Sprintf("%s-copy-%d", r.Name, rng.Intn(1000))
			if !slices.ContainsFunc(next.HTTPRoutes, func(o *gwapiv1.HTTPRoute) bool { return o.Namespace == r.Namespace && o.Name == r.Name }) {
				next.HTTPRoutes = append(next.HTTPRoutes, r)
			}
			return "add httproute " + r.Name
		}
		next.HTTPRoutes = slices.Delete(next.HTTPRoutes, i, i+1)
		return "delete httproute " + r.Name
	default: // rotate or remove a Secret, or a ConfigMap
		if rng.Intn(3) == 0 {
			key := randomKey(rng, st.ConfigMaps)
			if key == nil {
				return "nothing"
			}
			st.ConfigMaps = maps.Clone(st.ConfigMaps)
			if rng.Intn(4) == 0 {
				delete(st.ConfigMaps, *key)
				return "delete configmap " + key.String()
			}
			cm := st.ConfigMaps[*key].DeepCopy()
			cm.Data = maps.Clone(cm.Data)
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data["X-Frame-Options"] = fmt.Sprintf("ALLOW-FROM https://%d.example.com", rng.Intn(100))
			if *key == goldenOptions.ConfigMap && rng.Intn(2) == 0 {
				k, v := toggledBlockKey(rng) // block_test.go
				cm.Data[k] = v
			}
			if *key == goldenOptions.ConfigMap && rng.Intn(3) == 0 {
				// use-gzip: every Ingress's routes compressed, or none.
				if cm.Data["use-gzip"] == "true" {
					delete(cm.Data, "use-gzip")
				} else {
					cm.Data["use-gzip"], cm.Data["gzip-level"] = "true", strconv.Itoa(1+rng.Intn(9))
				}
			}
			if *key == goldenOptions.ConfigMap {
				// The controller ConfigMap's listener and cluster keys.
				k, v := toggledConnectionKey(rng)
				cm.Data[k] = v
			}
			st.ConfigMaps[*key] = cm
			return "change configmap " + key.String()
		}
		key := randomKey(rng, st.Secrets)
		if key == nil {
			return "nothing"
		}
		st.Secrets = maps.Clone(st.Secrets)
		if rng.Intn(4) == 0 {
			delete(st.Secrets, *key)
			return "delete secret " + key.String()
		}
		st.Secrets[*key] = st.Secrets[*key].DeepCopy()
		return "rotate secret " + key.String()
	}
}

func randomKey[V any](rng *rand.Rand, m map[types.NamespacedName]V) *types.NamespacedName {
	if len(m) == 0 {
		return nil
	}
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Map order is random: sort for a reproducible run.
	sortKeys(keys)
	k := keys[rng.Intn(len(keys))]
	return &k
}

func sortKeys(keys []types.NamespacedName) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j].String() < keys[j-1].String(); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

// TestEndpointFastPathFindsEachService changes the endpoints of each
// Service in turn through the fast path, in a state where Service names
// prefix each other (web, web-2, web2) and ExternalName backends (which
// have no load assignment) sort before, between and after the others, and
// checks each result against a fresh translation: the fast path must find
// exactly the Service's own load assignments.
func TestEndpointFastPathFindsEachService(t *testing.T) {
	manifest := `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: default}
spec:
  rules:
  - host: app.example.com
    http:
      paths:
      - {path: /a, pathType: Prefix, backend: {service: {name: aaa-external, port: {number: 80}}}}
      - {path: /b, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /c, pathType: Prefix, backend: {service: {name: web, port: {number: 81}}}}
      - {path: /d, pathType: Prefix, backend: {service: {name: web-2, port: {number: 80}}}}
      - {path: /e, pathType: Prefix, backend: {service: {name: web-external, port: {number: 80}}}}
      - {path: /f, pathType: Prefix, backend: {service: {name: web2, port: {number: 80}}}}
      - {path: /g, pathType: Prefix, backend: {service: {name: zzz-external, port: {number: 80}}}}
`
	for _, ext := range []string{"aaa-external", "web-external", "zzz-external"} {
		manifest += "---\napiVersion: v1\nkind: Service\nmetadata: {name: " + ext + "}\nspec: {type: ExternalName, externalName: " + ext + ".example.net, ports: [{port: 80}]}\n"
	}
	services := []string{"web", "web-2", "web2"}
	for i, svc := range services {
		manifest += fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec: {ports: [{port: 80}, {port: 81, name: alt}]}\n", svc)
		manifest += fmt.Sprintf("---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: %s-1, labels: {kubernetes.io/service-name: %s}}\naddressType: IPv4\nports: [{port: 8080}, {port: 8081, name: alt}]\nendpoints: [{addresses: [10.0.%d.1]}]\n", svc, svc, i)
	}
	st, err := kube.ManifestState(strings.NewReader(manifest), "fast path case", kube.ClassFilter{WatchClassless: true}, kube.Refs{})
	if err != nil {
		t.Fatal(err)
	}
	opts := goldenOptions
	opts.EnableExternalName = true
	tr := translate.NewTranslator(opts)
	if _, err := tr.Translate(st); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		for i, name := range services {
			svc := types.NamespacedName{Namespace: "default", Name: name}
			slice := *st.EndpointSlices[svc][0]
			slice.Ready = []string{fmt.Sprintf("10.1.%d.%d", i, round)}
			st.EndpointSlices = maps.Clone(st.EndpointSlices)
			st.EndpointSlices[svc] = []*kube.EndpointSlice{&slice}
			got, fast := tr.UpdateEndpoints(map[types.NamespacedName][]*kube.EndpointSlice{svc: st.EndpointSlices[svc]})
			if !fast {
				t.Fatal("no fast path after a full translation")
			}
			sameAsFresh(t, got, st, opts, fmt.Sprintf("round %d, %s", round, svc))
		}
	}
}

// sameAsFresh fails the test unless got renders byte for byte as a fresh
// translation of st does, and returns that translation.
func sameAsFresh(t *testing.T, got *translate.Result, st *kube.State, opts translate.Options, at string) *translate.Result {
	t.Helper()
	want, err := translate.Translate(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := translate.RenderJSON(got)
	wantJSON, _ := translate.RenderJSON(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("%s: incremental output differs from a fresh translation:\n%s", at, golden.Diff(string(wantJSON), string(gotJSON)))
	}
	// The incremental IR, the one cached values make up, keeps the
	// contract too, and is the fresh one.
	if err := got.IR().Validate(); err != nil {
		t.Fatalf("%s: the incremental IR breaks its contract: %v", at, err)
	}
	gotIR, _ := json.Marshal(got.IR())
	wantIR, _ := json.Marshal(want.IR())
	if !bytes.Equal(gotIR, wantIR) {
		t.Fatalf("%s: incremental IR differs from a fresh one:\n%s", at, golden.Diff(string(wantIR), string(gotIR)))
	}
	return want
}

// forceSSLRedirect is an annotation the random changes toggle.
const forceSSLRedirect = "ingress-xds.io/force-ssl-redirect"

// toggledAnnotations are the annotations the random changes set and unset,
// one at a time: every annotation that shapes the IR has a row, so that
// the caches are held to it (a rewrite or a regex also changes every other
// route of its host).
var toggledAnnotations = []struct{ key, value string }{
	{forceSSLRedirect, "true"},
	{"nginx.ingress.kubernetes.io/use-regex", "true"},
	{"nginx.ingress.kubernetes.io/rewrite-target", "/new/$1"},
	{"nginx.ingress.kubernetes.io/x-forwarded-prefix", "/prefix"},
	{"nginx.ingress.kubernetes.io/server-alias", "alias.example.org, another.alias.example"},
	// Proxy keys: a connect timeout moves the Ingress's routes to a
	// cluster of their own; a body bound adds an HTTP filter.
	{"nginx.ingress.kubernetes.io/proxy-connect-timeout", "5"},
	{"nginx.ingress.kubernetes.io/proxy-body-size", "1k"},
	{"nginx.ingress.kubernetes.io/proxy-read-timeout", "120"},
	// Response rewrites: the Lua filter, on the Ingress's routes only.
	{"nginx.ingress.kubernetes.io/proxy-redirect-from", "http://internal/"},
	{"nginx.ingress.kubernetes.io/proxy-redirect-to", "https://example.com/"},
	{"nginx.ingress.kubernetes.io/proxy-cookie-path", "/one/ /"},
	// A mirror target: reported without --enable-external-name (these
	// options); ingress's TestMirrorIncremental holds the caches to
	// applied ones.
	{"nginx.ingress.kubernetes.io/mirror-target", "https://test.example.com$request_uri"},
	// Redirects: from-to-www adds a host another Ingress may own, and
	// ssl-redirect depends on the host's certificate.
	{"nginx.ingress.kubernetes.io/from-to-www-redirect", "true"},
	{"nginx.ingress.kubernetes.io/ssl-redirect", "true"},
	{"nginx.ingress.kubernetes.io/app-root", "/app"},
	{"nginx.ingress.kubernetes.io/permanent-redirect", "https://moved.example.com"},
	// Canaries: "canary" turns an Ingress into alternative backends of
	// its hosts' mainline routes (header, cookie and weight routes ahead
	// of them), and off again.
	{"nginx.ingress.kubernetes.io/canary", "true"},
	{"nginx.ingress.kubernetes.io/canary-by-header", "X-Canary"},
	{"nginx.ingress.kubernetes.io/canary-by-cookie", "canary"},
	{"nginx.ingress.kubernetes.io/canary-weight", "30"},
	// Affinity: a session cookie per route (its own Path), an HTTP filter.
	{"nginx.ingress.kubernetes.io/affinity", "cookie"},
	{"nginx.ingress.kubernetes.io/session-cookie-name", "SERVERID"},
	// Upstream keys: a protocol, TLS with a CA and client certificate
	// read from a Secret (503 where that Secret is of another namespace),
	// a Service's cluster IP, ring hashing, the Host sent: clusters of
	// their own and route policies.
	{"nginx.ingress.kubernetes.io/backend-protocol", "GRPCS"},
	// AUTO_HTTP: each route names a second cluster, over TLS, for the
	// HTTPS side (with default-backend an aggregate of its own, with a
	// canary the canary's over TLS).
	{"nginx.ingress.kubernetes.io/backend-protocol", "AUTO_HTTP"},
	{"nginx.ingress.kubernetes.io/proxy-ssl-secret", "shop/upstream-ca"},
	{"nginx.ingress.kubernetes.io/proxy-ssl-verify", "on"},
	{"nginx.ingress.kubernetes.io/service-upstream", "true"},
	{"nginx.ingress.kubernetes.io/upstream-hash-by", "$remote_addr"},
	{"nginx.ingress.kubernetes.io/upstream-vhost", "internal.example.com"},
	// Fallback: an aggregate of each route's cluster and shop/web's (the
	// Service is missing in other namespaces, and in shop when deleted).
	{"nginx.ingress.kubernetes.io/default-backend", "web"},
	// Error pages: an error route first on each host, a filter.
	{"nginx.ingress.kubernetes.io/custom-http-errors", "404,503"},
	// Basic auth: the ext_authz filter and the authorisation service's
	// cluster, per route, with the user file of shop/staff (basicauth.yaml;
	// 503 in the namespaces without it, and when it is deleted or loses
	// its key); auth-secret alone does nothing.
	{"nginx.ingress.kubernetes.io/auth-type", "basic"},
	{"nginx.ingress.kubernetes.io/auth-secret", "staff"},
	{"nginx.ingress.kubernetes.io/auth-realm", "random realm"},
	// Source ranges and rate limits: RBAC and the local rate limit on
	// the Ingress's routes, the shadow RBAC for the exempt; a range that
	// does not parse refuses the Ingress.
	{"nginx.ingress.kubernetes.io/allowlist-source-range", "10.0.0.0/8, 2001:db8::/32"},
	{"nginx.ingress.kubernetes.io/denylist-source-range", "10.1.0.0/16"},
	{"nginx.ingress.kubernetes.io/whitelist-source-range", "10.0.0.0/33"},
	// Snippets: a configuration-snippet's routes before each path's, a
	// server-snippet on every route of its hosts (the oldest Ingress's)
	// with a location of its own, one refused by its directive.
	{"nginx.ingress.kubernetes.io/configuration-snippet", "more_set_headers \"X-A: 1\"; if ($http_x_b = 1) { return 403; }"},
	{"nginx.ingress.kubernetes.io/server-snippet", "more_set_headers \"X-S: 1\"; location = /healthz { return 200 \"ok\"; }"},
	{"nginx.ingress.kubernetes.io/server-snippet", "proxy_pass http://elsewhere;"},
	// Compression (gzip.go): a location's gzip over the ConfigMap's
	// use-gzip, a server's over every route of its hosts, resolved
	// again in the host's merge.
	{"nginx.ingress.kubernetes.io/configuration-snippet", "gzip on; gzip_types application/json;"},
	{"nginx.ingress.kubernetes.io/server-snippet", "gzip off; gzip_comp_level 7;"},
	// Cookie flags (cookie.go): the Lua filter's rules on the response
	// rewrite beside proxy-cookie-path; a server-snippet's Set-Cookie
	// refuses them on its hosts, in the host's merge.
	{"nginx.ingress.kubernetes.io/configuration-snippet", "proxy_cookie_flags sid nosecure; proxy_cookie_flags ~ secure httponly samesite=lax;"},
	{"nginx.ingress.kubernetes.io/server-snippet", "more_set_headers \"Set-Cookie: srv=1\";"},
	{"nginx.ingress.kubernetes.io/limit-rps", "10"},
	{"nginx.ingress.kubernetes.io/limit-rpm", "600"},
	{"nginx.ingress.kubernetes.io/limit-allowlist", "10.0.0.0/8"},
	// limit-connections: the ext_proc filter and the authorisation
	// service's cluster, per route.
	{"nginx.ingress.kubernetes.io/limit-connections", "8"},
	// limit-rate: the fault filter's pace on the Ingress's routes.
	{"nginx.ingress.kubernetes.io/limit-rate", "10"},
	{"nginx.ingress.kubernetes.io/limit-rate-after", "100"},
	// External auth: the ext_authz filter and the authorisation
	// service's cluster, per route; a cache scope per route; $host in
	// the URL is refused where a rule has no exact host.
	{"nginx.ingress.kubernetes.io/auth-url", "http://$host/verify"},
	{"nginx.ingress.kubernetes.io/auth-cache-key", "$remote_user"},
	// ssl-ciphers: the host's HTTPS filter chain offers its own suites.
	{"nginx.ingress.kubernetes.io/ssl-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"},
	// satisfy any: the source ranges join the authentication (the
	// route's RBAC rules go) where both are set.
	{"nginx.ingress.kubernetes.io/satisfy", "any"},
	// CORS: routes for OPTIONS and for allowed origins ahead of each
	// route; custom-headers reads a ConfigMap (503 where it is missing).
	{"nginx.ingress.kubernetes.io/enable-cors", "true"},
	{"nginx.ingress.kubernetes.io/cors-allow-origin", "https://a.example.com, http://*.example.org"},
	{"nginx.ingress.kubernetes.io/custom-headers", "shop/response-headers"},
	{"nginx.ingress.kubernetes.io/connection-proxy-header", "close"},
	// Refusal: the Ingress's paths answer 503 and nothing else of it
	// stays (a canary's alternatives, its certificates and redirects).
	{"nginx.ingress.kubernetes.io/configuration-snippet", "deny all;"},
	// Client certificates (per host: the oldest Ingress asking sets them;
	// refused outside shop, whose Secret has the CA) and passthrough (a
	// filter chain of its own, plain HTTP over TLS).
	{"nginx.ingress.kubernetes.io/auth-tls-secret", "shop/upstream-ca"},
	{"nginx.ingress.kubernetes.io/auth-tls-verify-client", "optional_no_ca"},
	{"nginx.ingress.kubernetes.io/auth-tls-match-cn", "CN=client"},
	{"nginx.ingress.kubernetes.io/ssl-passthrough", "true"},
}
