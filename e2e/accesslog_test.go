package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// nginxLine reads a line of ingress-nginx's default log-format-upstream
// (its internal/ingress/controller/config/config.go's logFormatUpstream,
// which rootfs/etc/nginx/template/nginx.tmpl's log_format upstreaminfo
// writes), field by field.
var nginxLine = regexp.MustCompile(`^(\S+) - (\S+) \[([^\]]+)\] "([^"]*)" (\d+) (\S+) "([^"]*)" "([^"]*)" (\S+) (\S+) \[([^\]]*)\] \[([^\]]*)\] (\S+) (\S+) (\S+) (\S+) (\S+)$`)

// nginxFields are the names of nginxLine's fields, in order.
var nginxFields = []string{"remote_addr", "remote_user", "time_local", "request", "status", "body_bytes_sent", "http_referer", "http_user_agent",
	"request_length", "request_time", "proxy_upstream_name", "proxy_alternative_upstream_name", "upstream_addr", "upstream_response_length",
	"upstream_response_time", "upstream_status", "req_id"}

// TestAccessLogLikeIngressNginx checks, through a real Envoy under serve
// --nginx-defaults, that a request's access log line is the line
// ingress-nginx's default format writes for it, field by field, each
// computed from what the test sent and what the backend answered
// (ingress-nginx's test/e2e/settings/log-format.go reads its lines the
// same way); a canary's request names the canary's upstream as the
// alternative; and that the requests ingress-nginx does not log are not
// logged here: an Ingress with enable-access-log "false" (its
// annotations/log test), a URI of skip-access-log-urls, a host no Ingress
// serves (the default server's access_log off); and that $remote_user is
// the Basic credentials' user on a route with basic authentication.
func TestAccessLogLikeIngressNginx(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta")
	alpha, beta := backends[0], backends[1]
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha, beta))
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	writeManifest(t, dir, "ingresses.yaml", accessLogIngressesYAML+"---\n"+basicSecret("users", map[string]string{"auth": "alice:" + string(hash) + "\n"})+
		basicIngress("private", "private.example.com", map[string]string{"auth-type": "basic", "auth-secret": "users"}))
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"skip-access-log-urls": "/healthz"}))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--nginx-defaults", "--configmap", "ingress-nginx/ingress-nginx-controller")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	framework.Eventually(t, convergeTimeout, "private.example.com asks for credentials", func() error {
		return envoy.Expect("private.example.com", "/", http.StatusUnauthorized, "")
	})
	for _, host := range []string{"logged.example.com", "quiet.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host, "/", http.StatusOK, "alpha")
		})
	}
	framework.Eventually(t, convergeTimeout, "the canary served", func() error {
		r, err := rawExchange(envoy.HTTPAddress, []string{"GET / HTTP/1.1\r\nHost: logged.example.com\r\nX-Canary: always\r\n\r\n"})
		if err == nil && r[0].backend != "beta" {
			err = fmt.Errorf("answered by %q", r[0].backend)
		}
		return err
	})

	before := time.Now().Truncate(time.Second)
	requests := []string{
		"GET /quiet-path HTTP/1.1\r\nHost: quiet.example.com\r\nX-Request-Id: q-1\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nHost: logged.example.com\r\nX-Request-Id: h-1\r\n\r\n",
		"GET /unknown-host-path HTTP/1.1\r\nHost: nobody.example.com\r\nX-Request-Id: u-1\r\n\r\n",
		"GET /logged?a=b HTTP/1.1\r\nHost: logged.example.com\r\nUser-Agent: m1-agent/1.0\r\nReferer: http://from.example.com/page\r\nX-Request-Id: m1-request\r\n\r\n",
		"GET /canary HTTP/1.1\r\nHost: logged.example.com\r\nUser-Agent: m2-agent\r\nX-Canary: always\r\nX-Request-Id: m2-request\r\n\r\n",
		// nginx's $remote_user: the Basic credentials' user, let in
		// (alice:secret) or not (alice:wrong).
		"GET /private HTTP/1.1\r\nHost: private.example.com\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\nX-Request-Id: p-ok\r\n\r\n",
		"GET /private HTTP/1.1\r\nHost: private.example.com\r\nAuthorization: Basic YWxpY2U6d3Jvbmc=\r\nX-Request-Id: p-denied\r\n\r\n",
		"GET /last HTTP/1.1\r\nHost: logged.example.com\r\nX-Request-Id: m-last\r\n\r\n",
	}
	// One connection: Envoy writes its lines in the order of its
	// requests, so once the last one's line is there, any line of the
	// requests before it is too.
	replies, err := rawExchange(envoy.HTTPAddress, requests)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	wantStatus := []int{200, 200, 404, 200, 200, 200, 401, 200}
	for i, r := range replies {
		if r.status != wantStatus[i] {
			t.Fatalf("request %d: status %d, want %d", i, r.status, wantStatus[i])
		}
	}
	var lines []string
	framework.Eventually(t, convergeTimeout, "the last request's line", func() error {
		lines = nil
		for _, l := range strings.Split(envoy.Output(), "\n") {
			if nginxLine.MatchString(l) {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 || !strings.HasSuffix(lines[len(lines)-1], " m-last") {
			return fmt.Errorf("no line for m-last yet")
		}
		return nil
	})
	for _, l := range lines {
		for _, quiet := range []string{"q-1", "h-1", "u-1"} {
			if strings.HasSuffix(l, " "+quiet) {
				t.Errorf("logged, where ingress-nginx does not log it: %s", l)
			}
		}
	}

	for _, c := range []struct{ id, status string }{{"p-ok", "200"}, {"p-denied", "401"}} {
		found := false
		for _, l := range lines {
			if f := nginxLine.FindStringSubmatch(l); f != nil && f[17] == c.id {
				found = true
				if f[2] != "alice" || f[5] != c.status {
					t.Errorf("%s: remote_user %q, status %s; want alice, %s (%s)", c.id, f[2], f[5], c.status, l)
				}
			}
		}
		if !found {
			t.Errorf("no line for %s", c.id)
		}
	}

	// What ingress-nginx writes for each request: the client, the
	// request as sent, the answer as received, the backend that answered
	// it (the echo backend's address), ingress-nginx's upstream names.
	for i, c := range []struct {
		id, alternative string
		backend         *framework.Backend
	}{{"m1-request", "", alpha}, {"m2-request", "default-beta-80", beta}} {
		req, rep := requests[3+i], replies[3+i]
		var line string
		for _, l := range lines {
			if strings.HasSuffix(l, " "+c.id) {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("no line for %s in %q", c.id, lines)
		}
		got := nginxLine.FindStringSubmatch(line)[1:]
		header := func(name string) string {
			for _, h := range strings.Split(req, "\r\n") {
				if v, ok := strings.CutPrefix(h, name+": "); ok {
					return v
				}
			}
			return "-"
		}
		want := map[string]string{
			"remote_addr":                     "127.0.0.1",
			"remote_user":                     "-",
			"request":                         strings.SplitN(req, "\r\n", 2)[0],
			"status":                          strconv.Itoa(rep.status),
			"body_bytes_sent":                 strconv.Itoa(len(rep.body)),
			"http_referer":                    header("Referer"),
			"http_user_agent":                 header("User-Agent"),
			"request_length":                  strconv.Itoa(len(req)),
			"proxy_upstream_name":             "default-alpha-80",
			"proxy_alternative_upstream_name": c.alternative,
			"upstream_addr":                   net.JoinHostPort("127.0.0.1", strconv.Itoa(c.backend.Port)),
			"upstream_response_length":        strconv.Itoa(len(rep.body)),
			"upstream_status":                 strconv.Itoa(rep.status),
			"req_id":                          c.id,
		}
		for j, name := range nginxFields {
			switch name {
			case "time_local":
				at, err := time.Parse("02/Jan/2006:15:04:05 -0700", got[j])
				if err != nil || at.Before(before) || at.After(after) {
					t.Errorf("%s: time_local %q (%v), want nginx's form between %v and %v", c.id, got[j], err, before, after)
				}
			case "request_time":
				// Seconds with milliseconds, as nginx's.
				if !regexp.MustCompile(`^\d+\.\d{3}$`).MatchString(got[j]) {
					t.Errorf("%s: request_time %q, want nginx's seconds (0.001)", c.id, got[j])
				}
			case "upstream_response_time":
				// The known difference (docs/configmap.md): whole
				// milliseconds where nginx writes seconds.
				if !regexp.MustCompile(`^\d+$`).MatchString(got[j]) {
					t.Errorf("%s: upstream_response_time %q, want whole milliseconds", c.id, got[j])
				}
			default:
				if got[j] != want[name] {
					t.Errorf("%s: %s %q, want %q (line %s)", c.id, name, got[j], want[name], line)
				}
			}
		}
	}
}

// rawReply is one response read off a connection.
type rawReply struct {
	status  int
	body    []byte
	backend string
}

// rawExchange sends requests, written out byte for byte, one after the
// other on one connection, and reads each response.
func rawExchange(address string, requests []string) ([]rawReply, error) {
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	var out []rawReply
	for _, req := range requests {
		if _, err := io.WriteString(conn, req); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, rawReply{status: resp.StatusCode, body: body, backend: resp.Header.Get("X-Backend")})
	}
	return out, nil
}

const accessLogIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: logged, namespace: default}
spec:
  rules:
  - host: logged.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: logged-canary
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/canary: "true"
    nginx.ingress.kubernetes.io/canary-by-header: X-Canary
spec:
  rules:
  - host: logged.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: quiet
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/enable-access-log: "false"}
spec:
  rules:
  - host: quiet.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`
