package ingress

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// upstreamIntent is what the merge (merge.go) made of the groups for each
// backend beyond the Ingress's cluster policy: what depends on each
// backend's Service, and a denial.
type upstreamIntent struct {
	// serviceUpstream sends to each Service's cluster IP.
	serviceUpstream bool
	// denied, when set, is why every route of the Ingress answers 503
	// instead of reaching its backend: what was asked (of the connection:
	// verification, a client certificate, a protocol; custom-headers'
	// ConfigMap; basic authentication's users) cannot be had, and
	// serving without it would be worse than not serving.
	denied string
	// headless are the Services service-upstream could not use, reported
	// once each.
	headless map[types.NamespacedName]bool
	// autoTLS, with backend-protocol AUTO_HTTP, is the TLS of the
	// clusters that take the requests that arrived over TLS (nginx's
	// $scheme): what HTTPS would give them, proxy-ssl keys and all. The
	// cluster policy is then that of the plain-HTTP requests. nil: one
	// transport for every request.
	autoTLS *ir.UpstreamTLS
}

// upstreamConfig is what ingress-nginx's upstream keys ask: the Host sent
// upstream and the hash that picks an endpoint (the routes'), the
// protocol, TLS and load balancer (the cluster's), and what depends on
// each backend's Service.
type upstreamConfig struct {
	vhost        string // upstream-vhost; empty: the client's Host
	hash         []ir.HashPart
	protocol     ir.UpstreamProtocol
	loadBalancer ir.LoadBalancer
	// tls is the TLS backend-protocol asks for, the proxy-ssl keys
	// applied; nil: plain. With auto it is only for the requests that
	// arrived over TLS.
	tls  *ir.UpstreamTLS
	auto bool // backend-protocol AUTO_HTTP
	// serviceUpstream sends to each Service's cluster IP.
	serviceUpstream bool
	// denied, when set, is why the routes answer 503 (upstreamIntent).
	denied string
}

// parseUpstream reads ingress-nginx's upstream keys. docs/annotations.md
// says how each maps and where it differs.
func parseUpstream(values *annotations.Values, env groupEnv) (upstreamConfig, []problem) {
	var c upstreamConfig
	var problems []problem
	c.vhost, _ = annotations.UpstreamVhost.Get(values)

	proto, _ := annotations.BackendProtocol.Get(values)
	switch proto {
	case "HTTPS", "AUTO_HTTP":
		// AUTO_HTTP's clusters over TLS are HTTPS's: shaped here, by
		// proxySSL; merge.go sets them apart.
		c.tls = &ir.UpstreamTLS{}
		c.auto = proto == "AUTO_HTTP"
	case "GRPC", "H2C":
		c.protocol = ir.UpstreamHTTP2
	case "GRPCS":
		c.protocol, c.tls = ir.UpstreamHTTP2, &ir.UpstreamTLS{}
	case "FCGI":
		problems = append(problems, problemf("UnsupportedAnnotationValue", "annotation %s=\"FCGI\": Envoy has no FastCGI client: the Ingress's routes answer 503",
			annotations.BackendProtocol.Name()))
		c.denied = "backend protocol FCGI is not supported"
	}
	if _, ok := annotations.ProxySSLSecret.Get(values); ok {
		var denied string
		c.tls, denied, problems = proxySSL(values, env, c.tls, problems)
		if denied != "" {
			c.denied = denied
		}
	} else if annotations.ProxySSLSecret.Invalid(values) {
		// Reported by the registry. ingress-nginx denies the location
		// when the name is not "namespace/name": connecting without the
		// CA and client certificate asked for would be worse.
		c.denied = "proxy-ssl-secret unparsable"
	}

	if lb, ok := annotations.LoadBalance.Get(values); ok {
		switch lb {
		case "ewma":
			c.loadBalancer = ir.LeastRequest
		case "round_robin":
			c.loadBalancer = ir.RoundRobin
		default:
			problems = append(problems, problemf("UnsupportedAnnotationValue", "annotation %s=%q: not applied, round robin is used (upstream-hash-by asks for consistent hashing)",
				annotations.LoadBalance.Name(), lb))
		}
	}
	if parts, ok := annotations.UpstreamHashBy.Get(values); ok {
		// As in ingress-nginx's balancer, the hash takes precedence over
		// load-balance.
		c.loadBalancer = ir.RingHash
		for _, part := range parts {
			c.hash = append(c.hash, ir.HashPart{Kind: hashKinds[part.Kind], Name: part.Name})
		}
	}
	c.serviceUpstream, _ = annotations.ServiceUpstream.Get(values)
	return c, problems
}

var hashKinds = map[string]ir.HashKind{
	annotations.HashPath: ir.HashPath, annotations.HashHost: ir.HashHost, annotations.HashSourceIP: ir.HashSourceIP,
	annotations.HashHeader: ir.HashHeader, annotations.HashCookie: ir.HashCookie, annotations.HashQuery: ir.HashQuery,
}

// proxySSL reads the proxy-ssl keys, which apply only with the Secret,
// as in ingress-nginx. They shape tls only where backend-protocol asks
// for it (nginx's proxy_ssl_* apply to https:// and grpcs:// alone, and
// to AUTO_HTTP's $scheme:// when that is https): it returns tls so
// shaped, or why the routes are denied.
func proxySSL(values *annotations.Values, env groupEnv, tls *ir.UpstreamTLS, problems []problem) (*ir.UpstreamTLS, string, []problem) {
	raw, _ := annotations.ProxySSLSecret.Get(values)
	ns, name, _ := strings.Cut(raw, "/")
	key := annotations.ProxySSLSecret.Name()
	if ns != env.ing.Namespace {
		// ingress-nginx's allow-cross-namespace-resources is off by
		// default: it denies the location.
		problems = append(problems, problemf("InvalidAnnotation", "annotation %s=%q: a Secret of another namespace than the Ingress's: the Ingress's routes answer 503", key, raw))
		return tls, "proxy-ssl-secret of another namespace", problems
	}
	secret := env.objects.secret(types.NamespacedName{Namespace: ns, Name: name})
	ca, client, err := upstreamSecret(secret)
	if err != nil {
		problems = append(problems, problemf("InvalidAnnotation", "annotation %s=%q: %v: the Ingress's routes answer 503", key, raw, err))
		return tls, "proxy-ssl-secret unusable", problems
	}
	if tls == nil {
		return nil, "", problems
	}
	t := &ir.UpstreamTLS{MinVersion: "TLSv1.2", MaxVersion: "TLSv1.2"} // nginx's proxy-ssl-protocols default
	sslName, _ := annotations.ProxySSLName.Get(values)
	if verify, _ := annotations.ProxySSLVerify.Get(values); verify {
		t.CA, t.VerifyName, t.VerifyDepth = ca, sslName, 1
		if depth, ok := annotations.ProxySSLVerifyDepth.Get(values); ok {
			t.VerifyDepth = uint32(depth)
		}
	}
	if sni, _ := annotations.ProxySSLServerName.Get(values); sni {
		t.SNI = sslName
	}
	if client != nil {
		t.ClientChain, t.ClientKey = client.Chain, client.Key
	}
	if versions, ok := annotations.ProxySSLProtocols.Get(values); ok {
		t.MinVersion, t.MaxVersion = versions[0], versions[len(versions)-1]
	}
	t.Ciphers, _ = annotations.ProxySSLCiphers.Get(values)
	return t, "", problems
}

// upstreamSecret reads proxy-ssl-secret's ca.crt, which must hold a
// certificate, and its client certificate, when it has tls.crt or tls.key.
func upstreamSecret(s *corev1.Secret) (ir.PEM, *ir.Certificate, error) {
	if s == nil {
		return nil, nil, errors.New("secret not found")
	}
	ca := s.Data["ca.crt"]
	if err := ir.CheckCABundle(ca); err != nil {
		return nil, nil, fmt.Errorf("ca.crt: %w", err)
	}
	if len(s.Data[corev1.TLSCertKey]) == 0 && len(s.Data[corev1.TLSPrivateKeyKey]) == 0 {
		return ca, nil, nil
	}
	client, err := validateKeyPair(s)
	if err != nil {
		return nil, nil, fmt.Errorf("client certificate: %w", err)
	}
	return ca, client, nil
}

// newClusterRef is the cluster of backend with policy, and with
// AUTO_HTTP its variant for the requests that arrived over TLS: the same
// policy with the TLS HTTPS would have (none when that is the same
// cluster).
func (f *fragmentBuilder) newClusterRef(backend *backendRef, policy *ir.ClusterPolicy) *clusterRef {
	ref := &clusterRef{name: ir.ClusterName(backend.name, policy), backend: backend, policy: policy}
	if f.upstream.autoTLS == nil {
		return ref
	}
	var cp ir.ClusterPolicy
	if policy != nil {
		cp = *policy
	}
	cp.TLS = f.upstream.autoTLS
	if name := ir.ClusterName(backend.name, &cp); name != ref.name {
		ref.overTLS = &clusterRef{name: name, backend: backend, policy: &cp}
	}
	return ref
}

// backendPolicy is the cluster policy of the route's cluster for ref: the
// Ingress's, with service-upstream's address of ref's Service.
func (f *fragmentBuilder) backendPolicy(ref *backendRef) *ir.ClusterPolicy {
	if !f.upstream.serviceUpstream || ref.external() {
		return f.clusterPolicy
	}
	svc := f.service(ref.service)
	if svc == nil || svc.ClusterIP == "" || svc.ClusterIP == corev1.ClusterIPNone {
		if f.upstream.headless[ref.service] {
			return f.clusterPolicy
		}
		if f.upstream.headless == nil {
			f.upstream.headless = map[types.NamespacedName]bool{}
		}
		f.upstream.headless[ref.service] = true
		f.problem("InvalidAnnotation", "annotation %s: service %s has no cluster IP (headless): its endpoints are sent to",
			annotations.ServiceUpstream.Name(), ref.service)
		return f.clusterPolicy
	}
	var cp ir.ClusterPolicy
	if f.clusterPolicy != nil {
		cp = *f.clusterPolicy
	}
	cp.ServiceAddress = svc.ClusterIP
	return &cp
}
