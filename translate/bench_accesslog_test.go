package translate_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate"
)

// BenchmarkTranslateAccessLogNames is the cost of the route names the
// access log reads (ir.RouteLog, written as route metadata) under serve
// --nginx-defaults, whose format (ingress-nginx's default) reads
// $proxy_upstream_name and $proxy_alternative_upstream_name: the load
// workload translated with it ("upstream-names"), and with a ConfigMap
// whose format reads no route variable ("no-names"). route-bytes is the
// encoded route configuration a SotW client receives whole
// (docs/benchmarks.md, "Issue 29: the access log and tracing").
func BenchmarkTranslateAccessLogNames(b *testing.B) {
	cm := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	for _, n := range []int{1000, 10000} {
		for _, variant := range []string{"upstream-names", "no-names"} {
			b.Run(fmt.Sprintf("%d/%s", n, variant), func(b *testing.B) {
				st := annotatedState(n, 0).State()
				opts := translate.Options{HTTPPort: 8080, NginxDefaults: true}
				if variant == "no-names" {
					opts.ConfigMap = cm
					st.ConfigMaps = map[types.NamespacedName]*corev1.ConfigMap{cm: {
						ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name},
						Data:       map[string]string{"log-format-upstream": `$remote_addr - [$time_local] "$request" $status $body_bytes_sent $req_id`},
					}}
				}
				var size int
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := translate.NewTranslator(opts).Translate(st)
					if err != nil {
						b.Fatal(err)
					}
					size = proto.Size(res.Resources.Routes[0])
				}
				b.ReportMetric(float64(size), "route-bytes")
			})
		}
	}
}
