package e2e

import (
	"context"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/internal/snippetcorpus"
)

// TestAPIFuzz writes random Ingresses, Services, EndpointSlices, Secrets
// and ConfigMaps through a real kube-apiserver, so that only what the API
// server admits arrives, while `ingress-xds serve --kubeconfig` feeds a
// real Envoy: annotations with good and bad values (the real-world
// snippets of ../shared/snippets among them), garbage certificates,
// Services of every type, endpoints that come and go. The fuzzer never
// touches the good Ingresses, and throughout the control plane stays
// ready, each good host answers from its backend, and Envoy rejects no
// update (docs/bad-input.md: one broken object never affects another).
//
// INGRESS_XDS_FUZZ_WRITES sets how many writes (default 1000, what make
// test runs); the seed is logged, and INGRESS_XDS_FUZZ_SEED replays it.
func TestAPIFuzz(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()
	writes := 1000
	if v, err := strconv.Atoi(os.Getenv("INGRESS_XDS_FUZZ_WRITES")); err == nil && v > 0 {
		writes = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("INGRESS_XDS_FUZZ_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (INGRESS_XDS_FUZZ_SEED=%d replays this run), %d writes", seed, seed, writes)

	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	startNetnsEcho(t, kc, framework.NewNetns(t), "good", 8080)
	goodHosts := []string{"good-0.example.com", "good-1.example.com"}
	for i, host := range goodHosts {
		create(t, kc.NetworkingV1().Ingresses(namespace), ingress(fmt.Sprintf("good-%d", i), ptr(ourClass), host, prefix("/", "good")))
	}

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig)
	framework.Eventually(t, 60*time.Second, "ingress-xds /readyz returns 200", cp.Ready)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	goodServed := func() error {
		if err := cp.Ready(); err != nil {
			return fmt.Errorf("control plane: %w", err)
		}
		// Checked as it goes: a rejected resource the fuzzer then
		// deletes takes its statistic with it.
		stats, err := envoy.Stats(`update_rejected$`)
		if err != nil {
			return err
		}
		for name, v := range stats {
			if v != 0 {
				return fmt.Errorf("envoy rejected configuration: %s = %d", name, v)
			}
		}
		for _, host := range goodHosts {
			for _, path := range []string{"/", "/x/y?z=1"} {
				if err := envoy.Expect(host, path, http.StatusOK, "good"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	framework.Eventually(t, convergeTimeout, "the good hosts served", goodServed)

	f := &apiFuzzer{kc: kc, r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), admitted: map[string]int{}, refused: map[string]int{}}
	// A certificate that works, so that HTTPS hosts come and go too.
	ca := framework.NewCA(t, "fuzz CA")
	f.cert = ca.Issue(t, "fuzz", "fuzz-0.example.net", "*.example.net")
	f.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	for _, e := range snippetcorpus.Read(t) {
		f.snippets = append(f.snippets, e.Snippet)
	}
	for i := range writes {
		f.write(ctx, t)
		if i%20 == 19 {
			// Never Eventually: a good host must not fail even once.
			if err := goodServed(); err != nil {
				t.Fatalf("after %d writes (seed %d): %v", i+1, seed, err)
			}
		}
	}
	// Whatever the fuzzer left, the good hosts are served, and every
	// update was taken (the Cleanup checks Envoy's rejections).
	if err := goodServed(); err != nil {
		t.Fatalf("after the last write (seed %d): %v", seed, err)
	}
	t.Logf("admitted by the API server: %v; refused by it: %v", f.admitted, f.refused)
}

// apiFuzzer writes random objects of a few names each, so that writes
// create, replace and delete the same objects.
type apiFuzzer struct {
	kc       kubernetes.Interface
	r        *rand.Rand
	snippets []string
	cert     framework.KeyPair
	caPEM    []byte
	admitted map[string]int
	refused  map[string]int
}

func (f *apiFuzzer) pick(list ...string) string { return list[f.r.IntN(len(list))] }

// write makes one random write: an object created or replaced, or
// deleted. The API server refusing an object is expected (it is how only
// what it admits arrives); any other error fails the test.
func (f *apiFuzzer) write(ctx context.Context, t *testing.T) {
	t.Helper()
	var kind string
	var err error
	switch n := f.r.IntN(10); {
	case n < 5:
		kind = "Ingress"
		err = apply(ctx, f.kc.NetworkingV1().Ingresses(namespace), f.ingress(), f.r.IntN(8) == 0)
	case n < 6:
		kind = "Service"
		err = apply(ctx, f.kc.CoreV1().Services(namespace), f.service(), f.r.IntN(8) == 0)
	case n < 8:
		kind = "EndpointSlice"
		err = apply(ctx, f.kc.DiscoveryV1().EndpointSlices(namespace), f.endpointSlice(), f.r.IntN(8) == 0)
	case n < 9:
		kind = "Secret"
		err = apply(ctx, f.kc.CoreV1().Secrets(namespace), f.secret(), f.r.IntN(8) == 0)
	default:
		kind = "ConfigMap"
		err = apply(ctx, f.kc.CoreV1().ConfigMaps(namespace), f.configMap(), f.r.IntN(8) == 0)
	}
	switch {
	case err == nil:
		f.admitted[kind]++
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		f.refused[kind]++
	default:
		t.Fatalf("writing a %s: %v", kind, err)
	}
}

// client is what apply needs of a typed client.
type client[T metav1.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// apply creates obj, replaces the object of its name, or deletes it.
func apply[T metav1.Object](ctx context.Context, c client[T], obj T, remove bool) error {
	if remove {
		return c.Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
	}
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Update without a resourceVersion replaces whatever is there.
		_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
	}
	return err
}

// annotationValues are values of every shape the annotations take, and
// broken ones.
var annotationValues = []string{
	"true", "false", "0", "1", "-1", "5", "100", "999999999999", "abc", "",
	"10.0.0.0/8", "10.0.0.0/33", "1.2.3.4, 2001:db8::/32", "0.0.0.0/0", "not-a-cidr",
	"/", "/app", "/$1", "/new/$2", "(", "^/api/(.*)", "http://auth.e2e.svc.cluster.local/check", "https://", "ftp://x",
	"GRPC", "HTTPS", "AUTO_HTTP", "FCGI", "H2C", "cookie", "$request_uri", "$binary_remote_addr $http_x",
	namespace + "/secret-0", namespace + "/cm-0", "other/secret-1", "svc-0", "svc-1:80",
	"good-0.example.com", "fuzz-0.example.net, good-1.example.com", "*.example.com",
	"X-A: b", "a\r\nb", "\x00", strings.Repeat("x", 5000), "10s", "1h", "60", "2m",
	"404,503", "200", "1000", "any", "all", "https://fuzz-1.example.net/$1",
}

// annotationKeys are keys of every group of ingress-nginx's annotations,
// access controls and snippets among them.
var annotationKeys = []string{
	"rewrite-target", "use-regex", "ssl-redirect", "force-ssl-redirect", "app-root", "permanent-redirect",
	"temporal-redirect", "from-to-www-redirect", "whitelist-source-range", "allowlist-source-range",
	"denylist-source-range", "limit-rps", "limit-rpm", "limit-connections", "limit-burst-multiplier",
	"limit-allowlist", "canary", "canary-weight", "canary-by-header", "canary-by-cookie", "auth-url",
	"auth-signin", "auth-type", "auth-secret", "auth-realm", "auth-tls-secret", "auth-tls-verify-client",
	"backend-protocol", "proxy-body-size", "proxy-read-timeout", "proxy-connect-timeout",
	"proxy-next-upstream-tries", "enable-cors", "cors-allow-origin", "custom-headers", "upstream-vhost",
	"affinity", "session-cookie-name", "session-cookie-path", "default-backend", "custom-http-errors",
	"proxy-ssl-secret", "proxy-ssl-verify", "mirror-target", "upstream-hash-by", "x-forwarded-prefix",
	"server-alias", "satisfy", "service-upstream", "ssl-passthrough", "enable-access-log",
	"configuration-snippet", "server-snippet", "auth-snippet",
}

func (f *apiFuzzer) ingress() *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ing-%d", f.r.IntN(10)), Namespace: namespace}}
	switch f.r.IntN(8) {
	case 0:
	case 1:
		ing.Spec.IngressClassName = ptr("other")
	default:
		ing.Spec.IngressClassName = ptr(ourClass)
	}
	backend := func() networkingv1.IngressBackend {
		port := networkingv1.ServiceBackendPort{Number: f.port()}
		if f.r.IntN(4) == 0 {
			port = networkingv1.ServiceBackendPort{Name: f.pick("http", "missing", "https")}
		}
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: f.pick("svc-0", "svc-1", "svc-2", "missing"), Port: port}}
	}
	for range f.r.IntN(3) {
		rule := networkingv1.IngressRule{Host: f.pick("fuzz-0.example.net", "fuzz-1.example.net", "*.example.net", "")}
		if f.r.IntN(10) == 0 {
			rule.Host = f.pick("FUZZ-2.example.net", "fuzz-3.example.net.", "*.*.example.net")
		}
		var paths []networkingv1.HTTPIngressPath
		for range 1 + f.r.IntN(3) {
			pt := []networkingv1.PathType{networkingv1.PathTypePrefix, networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific}[f.r.IntN(3)]
			paths = append(paths, networkingv1.HTTPIngressPath{
				Path:     f.path(pt),
				PathType: &pt,
				Backend:  backend(),
			})
		}
		rule.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: paths}
		ing.Spec.Rules = append(ing.Spec.Rules, rule)
	}
	if f.r.IntN(6) == 0 || len(ing.Spec.Rules) == 0 {
		b := backend()
		ing.Spec.DefaultBackend = &b
	}
	if f.r.IntN(4) == 0 {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{f.pick("fuzz-0.example.net", "fuzz-1.example.net", "*.example.net")}, SecretName: f.pick("secret-0", "secret-1", "missing")}}
	}
	ing.Annotations = map[string]string{}
	for range f.r.IntN(5) {
		key := f.pick(annotationKeys...)
		value := f.pick(annotationValues...)
		if strings.HasSuffix(key, "-snippet") && len(f.snippets) > 0 && f.r.IntN(4) != 0 {
			value = f.snippets[f.r.IntN(len(f.snippets))]
		}
		ing.Annotations[nginxKey+key] = value
	}
	return ing
}

func (f *apiFuzzer) service() *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: f.pick("svc-0", "svc-1", "svc-2"), Namespace: namespace}}
	switch f.r.IntN(5) {
	case 0:
		svc.Spec.Type = corev1.ServiceTypeExternalName
		svc.Spec.ExternalName = f.pick("svc-0.e2e.svc.cluster.local", "localhost", "127.0.0.1", "example.invalid", "a..b")
	default:
		for i := range 1 + f.r.IntN(2) {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: []string{"http", "https"}[i], Port: f.port(),
				Protocol: corev1.Protocol(f.pick("TCP", "TCP", "UDP")),
			})
		}
	}
	return svc
}

func (f *apiFuzzer) endpointSlice() *discoveryv1.EndpointSlice {
	svc := f.pick("svc-0", "svc-1", "svc-2")
	var eps []discoveryv1.Endpoint
	for range f.r.IntN(4) {
		ip := fmt.Sprintf("198.51.100.%d", f.r.IntN(256))
		switch f.r.IntN(3) {
		case 0:
			eps = append(eps, notReady(ip))
		default:
			eps = append(eps, ready(ip))
		}
	}
	s := endpointSlice(svc+"-"+f.pick("1", "2"), svc, f.port(), eps...)
	if f.r.IntN(4) == 0 {
		s.Ports[0].Name = ptr(f.pick("http", "https", "other"))
	}
	return s
}

func (f *apiFuzzer) secret() *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.pick("secret-0", "secret-1"), Namespace: namespace}, Data: map[string][]byte{}}
	garbage := [][]byte{nil, []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"), []byte("x"), make([]byte, 3000)}
	switch f.r.IntN(3) {
	case 0:
		s.Type = corev1.SecretTypeTLS
		s.Data[corev1.TLSCertKey] = garbage[f.r.IntN(len(garbage))]
		s.Data[corev1.TLSPrivateKeyKey] = garbage[f.r.IntN(len(garbage))]
	case 1:
		s.Type = corev1.SecretTypeTLS
		s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey] = f.cert.CertPEM, f.cert.KeyPEM
	}
	for _, k := range []string{"ca.crt", "auth", "ca.crl"} {
		switch f.r.IntN(3) {
		case 0:
			s.Data[k] = garbage[f.r.IntN(len(garbage))]
		case 1:
			if k == "ca.crt" {
				s.Data[k] = f.caPEM
			}
		}
	}
	return s
}

func (f *apiFuzzer) configMap() *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.pick("cm-0", "cm-1"), Namespace: namespace}, Data: map[string]string{}}
	for range f.r.IntN(4) {
		cm.Data[f.pick("X-A", "X-Frame-Options", "Host", "Content-Length", "x-envoy-foo", "bad name")] = f.pick(annotationValues...)
	}
	if len(cm.Data) > 0 && f.r.IntN(3) == 0 {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range cm.Data {
				if !yield(k) {
					return
				}
			}
		})
		delete(cm.Data, keys[0])
	}
	return cm
}

// path is mostly one the API server admits for pt (a regular expression
// only for ImplementationSpecific), sometimes one it refuses.
func (f *apiFuzzer) path(pt networkingv1.PathType) string {
	if f.r.IntN(6) == 0 {
		return f.pick("/x y", "relative", "/{x}", "/a/../b", "", "/a%2Fb")
	}
	if pt == networkingv1.PathTypeImplementationSpecific && f.r.IntN(2) == 0 {
		return f.pick("/api/(.*)", "/v[0-9]+/x", "/(a|b", "/.*\\.php$")
	}
	return f.pick("/", "/a", "/a/b/", "/.well-known/x", "/a%20b", "/app")
}

// port is a port number, now and then 0, which the API server refuses.
func (f *apiFuzzer) port() int32 {
	if f.r.IntN(12) == 0 {
		return 0
	}
	return []int32{80, 8080, 443}[f.r.IntN(3)]
}
