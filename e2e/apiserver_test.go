package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

const (
	namespace = "e2e"
	// ourClass is served because its controller is ours, not because of its
	// name (the control plane runs with the default --ingress-class).
	ourClass   = "xds-e2e"
	otherClass = "other"
)

// wantStatus is what --status-address 203.0.113.7,lb.example.com must write.
var wantStatus = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example.com"}}

// TestClusterMode runs `ingress-xds serve --kubeconfig` against a real
// kube-apiserver and etcd, drives it with client-go, and checks what it
// serves over ADS, the status it writes, and (given root) real traffic
// through Envoy to a backend in a network namespace.
func TestClusterMode(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()

	// State present before the control plane starts: it arrives through
	// the informers' initial list.
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(otherClass, "example.com/other"))
	create(t, kc.CoreV1().Services(namespace), service("coffee", 8080))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("coffee-1", "coffee", 8080, ready("198.51.100.10")))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("other", ptr(otherClass), "other.example.com", prefix("/", "coffee")))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("classless", nil, "classless.example.com", prefix("/", "coffee")))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("cafe", ptr(ourClass), "cafe.example.com",
		prefix("/coffee", "coffee"), exact("/coffee/menu", "missing")))

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--status-address", "203.0.113.7,lb.example.com")
	framework.Eventually(t, 60*time.Second, "ingress-xds /readyz returns 200", cp.Ready)
	ads, err := adsclient.Dial(ctx, cp.XDSAddress, adsclient.Options{NodeID: "e2e-" + t.Name(), Delta: framework.VHDS()}) // VHDS needs delta, as from Envoy
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ads.Close() })

	const coffee = namespace + "/coffee/80"
	if !t.Run("routes, clusters and endpoints over ADS", func(t *testing.T) {
		waitXDS(t, ads, "initial configuration", func(s *adsclient.Snapshot) error {
			return all(
				equal("routes", routeTable(s), map[string][]string{
					"cafe.example.com": {
						"domains cafe.example.com",
						"Exact /coffee/menu -> direct 503", // no such Service
						"Prefix /coffee -> " + coffee,
					},
				}),
				equal("clusters", clusterNames(s), []string{coffee}),
				equal("endpoints", endpoints(s, coffee), []string{"198.51.100.10:8080"}),
				equal("listeners", len(s.Listeners), 1),
			)
		})
	}) {
		return
	}

	t.Run("endpoint slice changes reach the load assignment", func(t *testing.T) {
		// Not ready, ready, and unset (which means ready).
		update(t, kc.DiscoveryV1().EndpointSlices(namespace),
			endpointSlice("coffee-1", "coffee", 8080, notReady("198.51.100.10"), ready("198.51.100.11"), unknown("198.51.100.12")))
		waitXDS(t, ads, "endpoint slice update", func(s *adsclient.Snapshot) error {
			return equal("endpoints", endpoints(s, coffee), []string{"198.51.100.11:8080", "198.51.100.12:8080"})
		})
		// A Service's endpoints are the union of its slices.
		create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("coffee-2", "coffee", 8080, ready("198.51.100.20")))
		waitXDS(t, ads, "second endpoint slice", func(s *adsclient.Snapshot) error {
			return equal("endpoints", endpoints(s, coffee), []string{"198.51.100.11:8080", "198.51.100.12:8080", "198.51.100.20:8080"})
		})
	})

	t.Run("an ingress created later is served", func(t *testing.T) {
		create(t, kc.NetworkingV1().Ingresses(namespace), ingress("tea", ptr(ourClass), "tea.example.com", prefix("/", "coffee")))
		waitXDS(t, ads, "new ingress", func(s *adsclient.Snapshot) error {
			return equal("tea.example.com routes", routeTable(s)["tea.example.com"],
				[]string{"domains tea.example.com", "Prefix / -> " + coffee})
		})
	})

	t.Run("status of owned ingresses only", func(t *testing.T) {
		for _, name := range []string{"cafe", "tea"} {
			framework.Eventually(t, convergeTimeout, "status of "+name, func() error {
				return hasStatus(ctx, kc, name, wantStatus)
			})
		}
		// tea was created last and every status pass covers all Ingresses
		// known: had the others been taken as ours, they would have their
		// status by now.
		for _, name := range []string{"other", "classless"} {
			if err := hasStatus(ctx, kc, name, nil); err != nil {
				t.Error(err)
			}
		}
		for host := range routeTable(ads.Snapshot()) {
			if host != "cafe.example.com" && host != "tea.example.com" {
				t.Errorf("routes served for an Ingress that is not ours: %s", host)
			}
		}
	})

	t.Run("traffic through envoy to a backend in a network namespace", func(t *testing.T) {
		testTrafficToNetns(t, kc, cp)
	})
}

// testTrafficToNetns sends requests through a real Envoy to an echo backend
// whose address comes from an EndpointSlice in the API server.
func testTrafficToNetns(t *testing.T, kc kubernetes.Interface, cp *framework.ControlPlane) {
	netns := framework.NewNetns(t)
	backend := netns.IP + ":8080"
	framework.StartProcess(t, "echo-netns", netns.Command(framework.EchoBinary(t), "-listen", backend+"=netns-echo"))
	framework.Eventually(t, convergeTimeout, "echo in the namespace answers", func() error {
		return framework.Expect(backend, "direct", "/", http.StatusOK, "netns-echo")
	})

	create(t, kc.CoreV1().Services(namespace), service("web", 8080))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("web-1", "web", 8080, ready(netns.IP)))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("web", ptr(ourClass), "web.example.com", prefix("/", "web")))
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "traffic reaches the backend", func() error {
		return envoy.Expect("web.example.com", "/hello", http.StatusOK, "netns-echo")
	})

	update(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("web-1", "web", 8080, notReady(netns.IP)))
	took := framework.Eventually(t, convergeTimeout, "no ready endpoint: 503", func() error {
		return envoy.Expect("web.example.com", "/hello", http.StatusServiceUnavailable, "")
	})
	t.Logf("measured: EndpointSlice update to Envoy behaviour in %s", took.Round(time.Millisecond))

	update(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("web-1", "web", 8080, ready(netns.IP)))
	framework.Eventually(t, convergeTimeout, "endpoint ready again", func() error {
		return envoy.Expect("web.example.com", "/hello", http.StatusOK, "netns-echo")
	})
}

// startNetnsEcho starts an echo backend named svc on netns's address and
// port, and makes it the endpoint of a Service of that name (port 80)
// in the API server: cluster mode's endpoints are pod addresses, never
// this host's.
func startNetnsEcho(t *testing.T, kc kubernetes.Interface, netns *framework.Netns, svc string, port int) {
	t.Helper()
	addr := fmt.Sprintf("%s:%d", netns.IP, port)
	framework.StartProcess(t, "echo-"+svc, netns.Command(framework.EchoBinary(t), "-listen", addr+"="+svc))
	framework.Eventually(t, convergeTimeout, svc+" answers in the network namespace", func() error {
		return framework.Expect(addr, "direct", "/", http.StatusOK, svc)
	})
	create(t, kc.CoreV1().Services(namespace), service(svc, port))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice(svc+"-1", svc, int32(port), ready(netns.IP)))
}

func hasStatus(ctx context.Context, kc kubernetes.Interface, name string, want []networkingv1.IngressLoadBalancerIngress) error {
	ing, err := kc.NetworkingV1().Ingresses(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got := ing.Status.LoadBalancer.Ingress; !apiequality.Semantic.DeepEqual(got, want) {
		return fmt.Errorf("ingress %s: status.loadBalancer.ingress is %+v, want %+v", name, got, want)
	}
	return nil
}

// equal returns an error describing the difference when got != want.
func equal[T any](what string, got, want T) error {
	if !apiequality.Semantic.DeepEqual(got, want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

// all returns the first error of errs.
func all(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// creator and updater are what client-go's typed clients have in common.
type creator[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
}

type updater[T any] interface {
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

func create[T metav1.Object](t *testing.T, c creator[T], obj T) {
	t.Helper()
	if _, err := c.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// update replaces an object's spec by obj's, carrying over the stored
// resourceVersion.
func update[T metav1.Object](t *testing.T, c updater[T], obj T) {
	t.Helper()
	current, err := c.Get(t.Context(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting %s: %v", obj.GetName(), err)
	}
	obj.SetResourceVersion(current.GetResourceVersion())
	if _, err := c.Update(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating %s: %v", obj.GetName(), err)
	}
}

func ptr[T any](v T) *T { return &v }

func ingressClass(name, controller string) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.IngressClassSpec{Controller: controller},
	}
}

func service(name string, targetPort int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Port: 80, TargetPort: intstr.FromInt(targetPort), Protocol: corev1.ProtocolTCP,
		}}},
	}
}

func endpointSlice(name, svc string, port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr(""), Port: ptr(port), Protocol: ptr(corev1.ProtocolTCP)}},
		Endpoints:   eps,
	}
}

func ready(ip string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}
}

func notReady(ip string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false)}}
}

func unknown(ip string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}}
}

func ingress(name string, class *string, host string, paths ...networkingv1.HTTPIngressPath) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: networkingv1.IngressSpec{
			IngressClassName: class,
			Rules: []networkingv1.IngressRule{{
				Host:             host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}},
			}},
		},
	}
}

func prefix(path, svc string) networkingv1.HTTPIngressPath {
	return ingressPath(path, networkingv1.PathTypePrefix, svc)
}

func exact(path, svc string) networkingv1.HTTPIngressPath {
	return ingressPath(path, networkingv1.PathTypeExact, svc)
}

func ingressPath(path string, pathType networkingv1.PathType, svc string) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{
		Path:     path,
		PathType: &pathType,
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80},
		}},
	}
}
