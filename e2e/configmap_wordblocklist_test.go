package e2e

import (
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// wordBlocklistIngressesYAML: one Ingress whose annotation holds a word
// the test blocks, one whose annotations hold none.
const wordBlocklistIngressesYAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: forbidden
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/connection-proxy-header: keep-alive
spec:
  rules:
  - host: forbidden-value-test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: allowed
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/connection-proxy-header: close
spec:
  rules:
  - host: allowed-value-test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// TestControllerConfigMapWordBlocklist: an Ingress with an annotation
// value holding a word of annotation-value-word-blocklist is not served,
// as ingress-nginx's test/e2e/settings/badannotationvalues.go ("should
// drop an ingress if there is a forbidden word in some annotation")
// checks; ingress-nginx drops it (404), ingress-xds refuses it (503, the
// difference docs/configmap.md states). The other Ingress is served, and
// without the word the first is too.
func TestControllerConfigMapWordBlocklist(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	fm, configure := startConfigMapMode(t, map[string]string{"annotation-value-word-blocklist": "something_forbidden,otherthing_forbidden,keep-alive"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", wordBlocklistIngressesYAML})
	framework.Eventually(t, convergeTimeout, "the forbidden Ingress refused, the other served", func() error {
		if err := fm.envoy.Expect("forbidden-value-test", "/", http.StatusServiceUnavailable, ""); err != nil {
			return err
		}
		return fm.envoy.Expect("allowed-value-test", "/", http.StatusOK, "alpha")
	})
	configure(map[string]string{"annotation-value-word-blocklist": "something_forbidden"})
	framework.Eventually(t, convergeTimeout, "served without the word", func() error {
		return fm.envoy.Expect("forbidden-value-test", "/", http.StatusOK, "alpha")
	})
}
