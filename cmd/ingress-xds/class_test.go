package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --controller-class and --ingress-class reach the class filter: with
// ingress-nginx's values, the Ingress of its IngressClass is translated and
// ours is not; with the defaults, the other way round.
func TestControllerClassFlag(t *testing.T) {
	dir := t.TempDir()
	manifest := nginxClassYAML + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ours, namespace: default}
spec:
  ingressClassName: ingress-xds
  rules: [{host: xds.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`
	if err := os.WriteFile(filepath.Join(dir, "classes.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := func(args ...string) (nginx, xds bool) {
		var out bytes.Buffer
		if err := runTranslate(append([]string{"-f", dir}, args...), &out); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(out.String(), `"nginx.example.com"`), strings.Contains(out.String(), `"xds.example.com"`)
	}
	if nginx, xds := hosts(); nginx || !xds {
		t.Errorf("defaults: nginx.example.com served %v (want false), xds.example.com %v (want true)", nginx, xds)
	}
	if nginx, xds := hosts("--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx"); !nginx || xds {
		t.Errorf("adopting ingress-nginx's class: nginx.example.com served %v (want true), xds.example.com %v (want false)", nginx, xds)
	}
}

// Taking over ingress-nginx's class gives its defaults (--nginx-defaults)
// unless the flag says otherwise: the Ingress's body is bounded at 1m and
// buffered (proxy-body-size's 1m, proxy-request-buffering's on in
// ingress-nginx's internal/ingress/controller/config/config.go), and its
// TLS host redirects plain HTTP (ssl-redirect).
// nginxClassYAML is ingress-nginx's IngressClass and an Ingress of it.
const nginxClassYAML = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: theirs, namespace: default}
spec:
  ingressClassName: nginx
  rules: [{host: nginx.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`

func TestNginxDefaultsByControllerClass(t *testing.T) {
	dir := t.TempDir()
	manifest := nginxClassYAML
	if err := os.WriteFile(filepath.Join(dir, "classes.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	bounded := func(args ...string) bool {
		t.Helper()
		var out bytes.Buffer
		if err := runTranslate(append([]string{"-f", dir, "--ingress-class", "nginx"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"nginx.example.com"`) {
			t.Fatalf("%v: nginx.example.com not served", args)
		}
		return strings.Contains(out.String(), `"maxRequestBytes": 1048576`)
	}
	if !bounded("--controller-class", "k8s.io/ingress-nginx") {
		t.Errorf("--controller-class k8s.io/ingress-nginx: no 1m body bound")
	}
	if bounded("--controller-class", "k8s.io/ingress-nginx", "--nginx-defaults=false") {
		t.Errorf("--nginx-defaults=false: a 1m body bound all the same")
	}
}
