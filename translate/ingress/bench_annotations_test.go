package ingress

import (
	"fmt"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// benchAnnotationSets are the load workload's annotated Ingresses
// (e2e/load's annotationMix) and two that set many groups at once.
var benchAnnotationSets = []map[string]string{
	{"rewrite-target": "/"},
	{"use-regex": "true", "rewrite-target": "/$1", "x-forwarded-prefix": "/app"},
	{"proxy-read-timeout": "120", "proxy-send-timeout": "120", "proxy-body-size": "8m"},
	{"proxy-next-upstream": "error timeout http_502", "proxy-next-upstream-tries": "2"},
	{"proxy-connect-timeout": "3", "backend-protocol": "GRPC", "load-balance": "ewma", "upstream-hash-by": "$request_uri",
		"upstream-vhost": "internal.example", "enable-cors": "true", "cors-allow-origin": "https://a.example, https://*.b.example",
		"connection-proxy-header": "close", "limit-rate": "100", "proxy-redirect-from": "http://a/", "proxy-redirect-to": "https://a/"},
	{"whitelist-source-range": "10.0.0.0/8", "limit-rps": "10", "limit-connections": "5", "satisfy": "any", "ssl-redirect": "false",
		"affinity": "cookie", "session-cookie-name": "route", "ssl-ciphers": "ECDHE-RSA-AES128-GCM-SHA256", "ssl-passthrough": "true"},
}

// BenchmarkReadAnnotations is the front-end's reading of an Ingress's
// annotations (parse, groups, merge) alone, over benchAnnotationSets.
func BenchmarkReadAnnotations(b *testing.B) {
	reg := annotations.New("")
	st := &kube.State{}
	opts := Options{HTTPPort: 8080, HTTPSPort: 8443, EnableSSLPassthrough: true}
	var ings []*networkingv1.Ingress
	for i, set := range benchAnnotationSets {
		a := map[string]string{}
		for k, v := range set {
			a[annotations.NginxPrefix+"/"+k] = v
		}
		ings = append(ings, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprint("ing-", i), Annotations: a}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, ing := range ings {
			f := &fragmentBuilder{ing: ing, state: st, opts: opts, reg: reg,
				frag: &fragment{ingress: ing, reads: reads{services: map[types.NamespacedName]*kube.Service{}}}}
			f.readAnnotations()
			if len(f.frag.problems) > 0 {
				b.Fatalf("%s: %v", ing.Name, f.frag.problems)
			}
		}
	}
}
