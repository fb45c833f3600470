package translate_test

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// The load command's workload, plain (every-0) and with a quarter of the
// Ingresses annotated (every-4, `ingress-load -annotated-every 4`): issue
// 14 asks the second to cost within 10% of the first. route-bytes is the
// encoded size of the route configuration a SotW client receives whole on
// each change.
var annotatedVariants = []int{0, 4}

func annotatedState(n, every int) *load.Workload {
	return &load.Workload{N: n, Namespace: "load", AnnotatedEvery: every}
}

// BenchmarkTranslateFullAnnotated is start-up's translation of the load
// workload, plain and a quarter annotated.
func BenchmarkTranslateFullAnnotated(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, every := range annotatedVariants {
			b.Run(fmt.Sprintf("%d/every-%d", n, every), func(b *testing.B) {
				st := annotatedState(n, every).State()
				var size int
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := translate.NewTranslator(translate.Options{HTTPPort: 8080}).Translate(st)
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

// BenchmarkTranslateIngressChangeAnnotated is the load command's Ingress
// change (one more workload-shaped Ingress, then without it again) in a
// warm Translator, plain and a quarter annotated.
func BenchmarkTranslateIngressChangeAnnotated(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, every := range annotatedVariants {
			b.Run(fmt.Sprintf("%d/every-%d", n, every), func(b *testing.B) {
				w := annotatedState(n, every)
				st := w.State()
				tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
				if _, err := tr.Translate(st); err != nil {
					b.Fatal(err)
				}
				base, extra := st.Ingresses, w.ChangeIngress("bench", 0, 0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s := *st
					if i%2 == 0 {
						s.Ingresses = append(slices.Clip(base), extra)
					}
					if _, err := tr.Translate(&s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
