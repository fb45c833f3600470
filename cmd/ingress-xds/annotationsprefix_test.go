package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --annotations-prefix moves ingress-nginx's keys, as its flag of that name
// does: under another prefix they are read there, and the default prefix
// is then nobody's.
func TestAnnotationsPrefix(t *testing.T) {
	dir := t.TempDir()
	manifest := `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations: {custom.example.com/rewrite-target: /new, nginx.ingress.kubernetes.io/use-regex: "true"}
spec:
  rules: [{host: web.example.com, http: {paths: [{path: /old, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	translated := func(args ...string) string {
		var out bytes.Buffer
		if err := runTranslate(append([]string{"-f", dir}, args...), &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := translated("--annotations-prefix", "custom.example.com"); !strings.Contains(got, `"substitution": "/new"`) || strings.Contains(got, "UnknownAnnotation") {
		t.Errorf("under --annotations-prefix custom.example.com, its rewrite-target is not applied, or the other prefix is reported:\n%s", got)
	}
	if got := translated(); strings.Contains(got, `"substitution": "/new"`) {
		t.Errorf("with the default prefix, custom.example.com/rewrite-target was applied:\n%s", got)
	}
	if err := runTranslate([]string{"-f", dir, "--annotations-prefix", "ingress-xds.io"}, &bytes.Buffer{}); err == nil {
		t.Error("--annotations-prefix ingress-xds.io (our own) was accepted")
	}
}
