package gatewayconformance

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// unusableAddress is an address no Envoy has (TEST-NET-2, RFC 5737).
const unusableAddress = "198.51.100.254"

// staticAddressPools gives the suite's GatewayStaticAddresses test one
// address a Gateway may ask for and one it may not. A Gateway may pin one
// of the Envoys' own addresses, those its status carries: with deploy/'s
// defaults on kind, the nodes of the Ready Envoy pods (docs/gateway-api.md,
// "How a Gateway maps onto the Envoy fleet").
func staticAddressPools(t *testing.T, cs kubernetes.Interface) (usable, unusable []gwapiv1.GatewaySpecAddress) {
	t.Helper()
	if ownAddresses(t, cs) {
		return ownAddressPools(t, cs)
	}
	pods, err := cs.CoreV1().Pods("ingress-xds").List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=envoy"})
	if err != nil {
		t.Fatalf("listing the Envoy pods: %v", err)
	}
	ip := gwapiv1.IPAddressType
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.Status.HostIP != "" {
				t.Logf("GatewayStaticAddresses: usable %s (Envoy pod %s's node), unusable %s", p.Status.HostIP, p.Name, unusableAddress)
				return []gwapiv1.GatewaySpecAddress{{Type: &ip, Value: p.Status.HostIP}},
					[]gwapiv1.GatewaySpecAddress{{Type: &ip, Value: unusableAddress}}
			}
		}
	}
	t.Fatal("no Ready Envoy pod in namespace ingress-xds: no address a Gateway could ask for")
	return nil, nil
}

// ownAddresses says whether the control plane gives each Gateway an
// address of its own (run.sh's CONFORMANCE_OWN_ADDRESSES).
func ownAddresses(t *testing.T, cs kubernetes.Interface) bool {
	t.Helper()
	d, err := cs.AppsV1().Deployments("ingress-xds").Get(t.Context(), "ingress-xds", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the control plane's Deployment: %v", err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "ingress-xds" && slices.Contains(c.Args, "--gateway-own-addresses") {
			return true
		}
	}
	return false
}

// ownAddressPools: with an address per Gateway, on ClusterIP Services, a
// Gateway may ask for a cluster IP the API server grants: one of the
// Service network's lower band, which dynamic allocation leaves alone
// (the kubernetes Service holds the network's first address), and not
// one outside the network (docs/gateway-api.md, "How a Gateway maps onto
// the Envoy fleet").
func ownAddressPools(t *testing.T, cs kubernetes.Interface) (usable, unusable []gwapiv1.GatewaySpecAddress) {
	t.Helper()
	api, err := cs.CoreV1().Services("default").Get(t.Context(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the kubernetes Service: %v", err)
	}
	a, err := netip.ParseAddr(api.Spec.ClusterIP)
	if err != nil {
		t.Fatalf("the kubernetes Service's cluster IP: %v", err)
	}
	for range 199 {
		a = a.Next()
	}
	ip := gwapiv1.IPAddressType
	t.Logf("GatewayStaticAddresses: usable %s (a cluster IP), unusable %s", a, unusableAddress)
	return []gwapiv1.GatewaySpecAddress{{Type: &ip, Value: a.String()}}, []gwapiv1.GatewaySpecAddress{{Type: &ip, Value: unusableAddress}}
}
