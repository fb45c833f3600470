package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	grpchealth "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestUpstreamAnnotations checks ingress-nginx's upstream keys through a
// real Envoy, by what a client and the backends see: gRPC to a real gRPC
// server (grpc-go's health service) over h2c and over TLS, HTTPS to a TLS
// backend verified against a Secret's CA (and refused: 502 for another CA
// or another name, 503 for a missing Secret) with the Secret's client
// certificate presented, AUTO_HTTP's transport chosen by the listener (TLS
// over HTTPS, plain over HTTP), the Host upstream-vhost sends, a Service's cluster IP
// (service-upstream), and upstream-hash-by keeping a client on one
// endpoint. Each scenario names the ingress-nginx test it mirrors.
func TestUpstreamAnnotations(t *testing.T) {
	b := echoBackends(t, "alpha", "beta")
	alpha, beta := b[0], b[1]
	ca := framework.NewCA(t, "upstream-ca")
	otherCA := framework.NewCA(t, "other-ca")
	grpcPlain := startGRPCHealth(t, nil)
	grpcPair := ca.Issue(t, "grpc.internal", "grpc.internal")
	grpcTLS := startGRPCHealth(t, &grpcPair)
	secure := startTLSEcho(t, "secure", ca.Issue(t, "backend.internal", "backend.internal"), ca)
	client := ca.Issue(t, "envoy-client")
	// Envoy's own certificate, for the AUTO_HTTP hosts' HTTPS listener.
	autoCert := ca.Issue(t, "auto", "auto-tls.example.com", "auto-plain.example.com")

	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha) +
			portService("grpc-plain", grpcPlain) + portService("grpc-tls", grpcTLS) + portService("secure", secure.Port) +
			twoEndpointService("pair", alpha.Port, beta.Port) +
			// The cluster IP is alpha (in file mode any address goes), the
			// endpoint beta: which one answers tells which Envoy sent to.
			clusterIPService("viaip", "127.0.0.1", alpha.Port, beta.Port)},
		manifest{"secrets.yaml", caSecretYAML("upstream-ca", ca, &client) + caSecretYAML("other-ca", otherCA, nil) +
			tlsSecretYAML("auto-cert", autoCert.CertPEM, autoCert.KeyPEM)},
		manifest{"ingresses.yaml", upstreamIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the upstream Ingresses served", func() error {
		for _, host := range []string{"vhost.example.com", "hashed.example.com", "viaip.example.com"} {
			if r, err := envoy.Get(host, "/"); err != nil || r.Status != http.StatusOK {
				return fmt.Errorf("%s: %v %v", host, r, err)
			}
		}
		r, err := envoy.Get("verified.example.com", "/")
		if err != nil || r.Status != http.StatusOK {
			return fmt.Errorf("verified.example.com: %v %v", r, err)
		}
		return nil
	})

	t.Run("gRPC", func(t *testing.T) {
		// grpc.go "should return OK for service with backend protocol
		// GRPC": a real gRPC call through the proxy, over h2c.
		t.Run("GRPC reaches a gRPC server over h2c", func(t *testing.T) {
			if err := grpcCheck(envoy.HTTPAddress, "grpc.example.com"); err != nil {
				t.Error(err)
			}
		})
		// grpc.go "should return OK for service with backend protocol
		// GRPCS": the same server behind TLS (not verified: no Secret).
		t.Run("GRPCS reaches a gRPC server over TLS", func(t *testing.T) {
			if err := grpcCheck(envoy.HTTPAddress, "grpcs.example.com"); err != nil {
				t.Error(err)
			}
		})
		// Without backend-protocol Envoy speaks HTTP/1.1 to the gRPC
		// server, which cannot answer: what the annotation is for.
		t.Run("without it, the call fails", func(t *testing.T) {
			if err := grpcCheck(envoy.HTTPAddress, "grpc-http1.example.com"); err == nil {
				t.Error("a gRPC call over HTTP/1.1 to the backend succeeded")
			}
		})
	})

	t.Run("HTTPS", func(t *testing.T) {
		// proxyssl.go "should set valid proxy-ssl-secret, proxy-ssl-verify
		// to on, proxy-ssl-verify-depth to 2, and proxy-ssl-server-name to
		// on": the backend's certificate is verified against ca.crt for
		// proxy-ssl-name, which is sent as SNI, and Envoy presents the
		// Secret's tls.crt.
		t.Run("verified, with SNI and the client certificate", func(t *testing.T) {
			r := send(t, envoy, http.MethodGet, "verified.example.com", "/", nil)
			var got echo.Reply
			if r.status != http.StatusOK || r.backend != "secure" || json.Unmarshal([]byte(r.body), &got) != nil {
				t.Fatalf("got %s, want 200 from the TLS backend", r)
			}
			if sni, cn := got.Header.Get("X-Seen-SNI"), got.Header.Get("X-Seen-Client"); sni != "backend.internal" || cn != "envoy-client" {
				t.Errorf("the backend saw SNI %q and client certificate %q, want backend.internal and envoy-client", sni, cn)
			}
		})
		// proxyssl.go "should set valid proxy-ssl-secret": verification
		// off (the default), the backend is reached whatever its
		// certificate; no SNI is sent without proxy-ssl-server-name.
		t.Run("unverified by default", func(t *testing.T) {
			r := send(t, envoy, http.MethodGet, "unverified.example.com", "/", nil)
			var got echo.Reply
			if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &got) != nil {
				t.Fatalf("got %s, want 200 from the TLS backend", r)
			}
			if sni := got.Header.Get("X-Seen-SNI"); sni != "" {
				t.Errorf("the backend saw SNI %q, want none", sni)
			}
		})
		// nginx's proxy_ssl_verify on: "the proxied HTTPS server
		// certificate" must verify, else the connection fails: nginx
		// logs "upstream SSL certificate verify error" and answers 502
		// (ngx_http_upstream_ssl_handshake passes NGX_HTTP_UPSTREAM_FT_ERROR
		// to ngx_http_upstream_next, whose status for it is
		// NGX_HTTP_BAD_GATEWAY), and so does Envoy, whose 503 the
		// listener's local reply codes make nginx's 502. A missing
		// Secret denies the location (ingress-nginx's "return 503"), a
		// 503 of the Ingress's own. The backend is never reached.
		for host, c := range map[string]struct {
			why    string
			status int
		}{
			"wrong-ca.example.com":   {"a certificate of another CA", http.StatusBadGateway},
			"wrong-name.example.com": {"a certificate for another name", http.StatusBadGateway},
			"no-secret.example.com":  {"a missing Secret", http.StatusServiceUnavailable},
		} {
			t.Run("refused for "+c.why, func(t *testing.T) {
				before := secure.requests()
				r := send(t, envoy, http.MethodGet, host, "/", nil)
				if r.status != c.status || r.backend != "" {
					t.Errorf("%s: got %s, want %d without reaching the backend", host, r, c.status)
				}
				if secure.requests() != before {
					t.Errorf("%s: the backend answered a request it should never have got", host)
				}
			})
		}
	})

	// backend-protocol AUTO_HTTP (ingress-nginx's
	// internal/ingress/annotations/backendprotocol/main.go takes
	// "auto_http"; internal/ingress/controller/template/template.go's
	// buildProxyPass writes it as proxy_pass $scheme://upstream): the
	// backend is reached over TLS when the client came over TLS (the
	// HTTPS listener), over plain HTTP otherwise. Two hosts, each asked
	// over both listeners: auto-tls to the TLS echo (with the proxy-ssl
	// keys), auto-plain to a plain echo. What succeeds and what fails on
	// each side proves the transport of that side.
	t.Run("AUTO_HTTP", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "the AUTO_HTTP hosts served over HTTPS", func() error {
			_, err := framework.GetTLS(envoy.HTTPSAddress, "auto-tls.example.com", ca.Pool(), "auto-tls.example.com", "/")
			return err
		})
		// Over TLS the route's cluster is HTTPS's, the proxy-ssl keys
		// applying: verified for proxy-ssl-name, sent as SNI, the
		// Secret's client certificate presented.
		t.Run("over HTTPS, TLS to the TLS backend, with the proxy-ssl keys", func(t *testing.T) {
			r, err := framework.GetTLS(envoy.HTTPSAddress, "auto-tls.example.com", ca.Pool(), "auto-tls.example.com", "/")
			if err != nil || r.Status != http.StatusOK || r.Backend != "secure" {
				t.Fatalf("got %+v, %v: want 200 from the TLS backend", r, err)
			}
			if sni, cn := r.Echo.Header.Get("X-Seen-SNI"), r.Echo.Header.Get("X-Seen-Client"); sni != "backend.internal" || cn != "envoy-client" {
				t.Errorf("the backend saw SNI %q and client certificate %q, want backend.internal and envoy-client", sni, cn)
			}
		})
		// Over plain HTTP Envoy speaks plain HTTP to the same backend:
		// Go's TLS server answers that, before any handler, with 400 and
		// "Client sent an HTTP request to an HTTPS server".
		t.Run("over HTTP, plain HTTP to the TLS backend, which refuses it", func(t *testing.T) {
			before := secure.requests()
			r := send(t, envoy, http.MethodGet, "auto-tls.example.com", "/", nil)
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, "Client sent an HTTP request to an HTTPS server") {
				t.Errorf("got %s, want the TLS backend's 400 to a plain-HTTP request", r)
			}
			if secure.requests() != before {
				t.Error("the TLS backend served a request that came over plain HTTP")
			}
		})
		t.Run("over HTTP, plain HTTP to the plain backend", func(t *testing.T) {
			if r := send(t, envoy, http.MethodGet, "auto-plain.example.com", "/", nil); r.status != http.StatusOK || r.backend != "alpha" {
				t.Errorf("got %s, want 200 from alpha", r)
			}
		})
		// Over TLS Envoy opens TLS to the plain backend: the handshake
		// fails, and Envoy answers nginx's 502 for a failed connection.
		t.Run("over HTTPS, TLS to the plain backend, which fails", func(t *testing.T) {
			r, err := framework.GetTLS(envoy.HTTPSAddress, "auto-plain.example.com", ca.Pool(), "auto-plain.example.com", "/")
			if err != nil || r.Status != http.StatusBadGateway || r.Backend != "" {
				t.Errorf("got %+v, %v: want 502 from Envoy, the backend never answering", r, err)
			}
		})
	})

	// upstreamvhost.go "set host to upstreamvhost.bar.com": the backend
	// receives that Host, whatever the client sent.
	t.Run("upstream-vhost", func(t *testing.T) {
		r := send(t, envoy, http.MethodGet, "vhost.example.com", "/", nil)
		var got echo.Reply
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &got) != nil || got.Host != "upstream.internal" {
			t.Errorf("got %s, want the backend to see Host upstream.internal", r)
		}
	})

	// serviceupstream.go "should use the Service Cluster IP and Port":
	// the cluster IP (alpha) is reached, never the endpoint (beta).
	t.Run("service-upstream", func(t *testing.T) {
		for i := 0; i < 4; i++ {
			if r := send(t, envoy, http.MethodGet, "viaip.example.com", "/", nil); r.status != http.StatusOK || r.backend != "alpha" {
				t.Fatalf("got %s, want alpha, the Service's cluster IP", r)
			}
		}
	})

	// upstreamhashby.go "should connect to the same pod": every request of
	// one user goes to the same endpoint, and users are spread over both.
	t.Run("upstream-hash-by", func(t *testing.T) {
		seen := map[string]bool{}
		for user := 0; user < 16; user++ {
			first := ""
			for i := 0; i < 4; i++ {
				r := getWithHeader(t, envoy, "hashed.example.com", "X-User", fmt.Sprint("user-", user))
				if r.status != http.StatusOK {
					t.Fatalf("user %d: %s", user, r)
				}
				if first == "" {
					first = r.backend
				} else if r.backend != first {
					t.Fatalf("user %d went to %s, then to %s", user, first, r.backend)
				}
			}
			seen[first] = true
		}
		if !seen["alpha"] || !seen["beta"] {
			t.Errorf("16 users all went to %v: the hash does not spread them", seen)
		}
		// Without it the same user's requests go round both endpoints:
		// the stickiness above is the annotation's.
		got := map[string]bool{}
		for i := 0; i < 4; i++ {
			got[getWithHeader(t, envoy, "roundrobin.example.com", "X-User", "user-0").backend] = true
		}
		if len(got) != 2 {
			t.Errorf("without upstream-hash-by one user reached %v, want both endpoints", got)
		}
	})
}

const upstreamIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: grpc
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: GRPC}
spec:
  rules:
  - host: grpc.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: grpc-plain, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: grpc-http1, namespace: default}
spec:
  rules:
  - host: grpc-http1.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: grpc-plain, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: grpcs
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: GRPCS}
spec:
  rules:
  - host: grpcs.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: grpc-tls, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: verified
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: HTTPS
    nginx.ingress.kubernetes.io/proxy-ssl-secret: default/upstream-ca
    nginx.ingress.kubernetes.io/proxy-ssl-verify: "on"
    nginx.ingress.kubernetes.io/proxy-ssl-verify-depth: "2"
    nginx.ingress.kubernetes.io/proxy-ssl-name: backend.internal
    nginx.ingress.kubernetes.io/proxy-ssl-server-name: "on"
spec:
  rules:
  - host: verified.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: unverified
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: HTTPS
    nginx.ingress.kubernetes.io/proxy-ssl-secret: default/other-ca
spec:
  rules:
  - host: unverified.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: wrong-ca
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: HTTPS
    nginx.ingress.kubernetes.io/proxy-ssl-secret: default/other-ca
    nginx.ingress.kubernetes.io/proxy-ssl-verify: "on"
    nginx.ingress.kubernetes.io/proxy-ssl-name: backend.internal
spec:
  rules:
  - host: wrong-ca.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: wrong-name
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: HTTPS
    nginx.ingress.kubernetes.io/proxy-ssl-secret: default/upstream-ca
    nginx.ingress.kubernetes.io/proxy-ssl-verify: "on"
    nginx.ingress.kubernetes.io/proxy-ssl-name: other.internal
spec:
  rules:
  - host: wrong-name.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: no-secret
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: HTTPS
    nginx.ingress.kubernetes.io/proxy-ssl-secret: default/nowhere
    nginx.ingress.kubernetes.io/proxy-ssl-verify: "on"
spec:
  rules:
  - host: no-secret.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: auto
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: AUTO_HTTP
    nginx.ingress.kubernetes.io/proxy-ssl-secret: default/upstream-ca
    nginx.ingress.kubernetes.io/proxy-ssl-verify: "on"
    nginx.ingress.kubernetes.io/proxy-ssl-name: backend.internal
    nginx.ingress.kubernetes.io/proxy-ssl-server-name: "on"
spec:
  tls: [{hosts: [auto-tls.example.com], secretName: auto-cert}]
  rules:
  - host: auto-tls.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: auto-plain
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/backend-protocol: AUTO_HTTP}
spec:
  tls: [{hosts: [auto-plain.example.com], secretName: auto-cert}]
  rules:
  - host: auto-plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: vhost
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/upstream-vhost: upstream.internal}
spec:
  rules:
  - host: vhost.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: viaip
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/service-upstream: "true"}
spec:
  rules:
  - host: viaip.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: viaip, port: {name: http}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: hashed
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/upstream-hash-by: $http_x_user}
spec:
  rules:
  - host: hashed.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: pair, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: roundrobin, namespace: default}
spec:
  rules:
  - host: roundrobin.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: pair, port: {number: 80}}}}]}
`

// portService is a Service of port 80 whose one endpoint is 127.0.0.1:port.
func portService(name string, port int) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: default}
spec:
  ports: [{port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-1, namespace: default, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{port: %[2]d}]
endpoints: [{addresses: ["127.0.0.1"], conditions: {ready: true}}]
`, name, port)
}

// clusterIPService is a Service whose cluster IP and port are ip:port and
// whose one endpoint is 127.0.0.1:endpointPort.
func clusterIPService(name, ip string, port, endpointPort int) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: default}
spec:
  clusterIP: %[2]s
  ports: [{name: http, port: %[3]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-1, namespace: default, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{name: http, port: %[4]d}]
endpoints: [{addresses: ["127.0.0.1"], conditions: {ready: true}}]
`, name, ip, port, endpointPort)
}

// caSecretYAML is an Opaque Secret with ca's certificate as ca.crt and,
// when client is set, that pair as tls.crt and tls.key: a proxy-ssl-secret.
func caSecretYAML(name string, ca *framework.CA, client *framework.KeyPair) string {
	enc := base64.StdEncoding.EncodeToString
	s := fmt.Sprintf("---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ndata:\n  ca.crt: %s\n",
		name, enc(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})))
	if client != nil {
		s += fmt.Sprintf("  tls.crt: %s\n  tls.key: %s\n", enc(client.CertPEM), enc(client.KeyPEM))
	}
	return s
}

// tlsEcho is an echo backend behind TLS that reports, in the reply's
// request headers, the SNI it was sent (X-Seen-SNI) and the common name of
// the client certificate presented (X-Seen-Client), verified against
// clientCA; it asks for one and serves without it.
type tlsEcho struct {
	Port   int
	served atomic.Int64
}

func (e *tlsEcho) requests() int64 { return e.served.Load() }

func startTLSEcho(t *testing.T, name string, pair framework.KeyPair, clientCA *framework.CA) *tlsEcho {
	t.Helper()
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	e := &tlsEcho{}
	handler := echo.Handler(name)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.served.Add(1)
		r.Header.Set("X-Seen-SNI", r.TLS.ServerName)
		if len(r.TLS.PeerCertificates) > 0 {
			r.Header.Set("X-Seen-Client", r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		handler.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequestClientCert,
		// The test CA issues server certificates (ExtKeyUsageServerAuth):
		// the chain is checked here, for any use.
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return nil
			}
			leaf, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			_, err = leaf.Verify(x509.VerifyOptions{Roots: clientCA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
			return err
		},
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	e.Port = srv.Listener.Addr().(*net.TCPAddr).Port
	return e
}

// startGRPCHealth starts a gRPC server with grpc-go's health service,
// reporting SERVING, over TLS with pair when given, else over h2c, and
// returns its port.
func startGRPCHealth(t *testing.T, pair *framework.KeyPair) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if pair != nil {
		cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
	}
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, grpchealth.NewServer())
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

// grpcCheck makes one health check through Envoy's plaintext listener for
// host and wants SERVING.
func grpcCheck(address, host string) error {
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(host))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fmt.Errorf("health check through %s: %w", host, err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errors.New("health check: " + resp.GetStatus().String())
	}
	return nil
}

// getWithHeader sends GET / for host with one request header, on a new
// connection.
func getWithHeader(t *testing.T, envoy *framework.Envoy, host, name, value string) sent {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set(name, value)
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return sent{err: err}
	}
	defer resp.Body.Close()
	return sent{status: resp.StatusCode, backend: resp.Header.Get("X-Backend")}
}
