package xds_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// annotatedEvery is the load command's -annotated-every 4: a quarter of
// the Ingresses carry one of the workload's sets of ingress-nginx
// annotations (issue 14's like-for-like measurement).
const annotatedEvery = 4

// BenchmarkPublishIngressChangeAnnotated is BenchmarkPublishIngressChange
// with a quarter of the Ingresses annotated, and what a SotW client then
// does with the change: decode the whole route configuration, as the load
// command's client and a SotW Envoy do. route-bytes is the route
// configuration's encoded size; decode-ns/op the client's share.
func BenchmarkPublishIngressChangeAnnotated(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, every := range []int{0, annotatedEvery} {
			b.Run(fmt.Sprintf("%d/every-%d", n, every), func(b *testing.B) {
				w := load.Workload{N: n, Namespace: "bench", AnnotatedEvery: every}
				st := w.State()
				tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
				server := xds.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
				res, err := tr.Translate(st)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := server.Publish(context.Background(), res.Resources); err != nil {
					b.Fatal(err)
				}
				base := st.Ingresses
				extra := w.ChangeIngress("bench", 0, 0)
				var size int
				var translating, publishing, encoding, decoding time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s := *st
					if i%2 == 0 {
						s.Ingresses = append(slices.Clip(base), extra)
					} else {
						s.Ingresses = base
					}
					t0 := time.Now()
					res, err := tr.Translate(&s)
					if err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if _, err := server.Publish(context.Background(), res.Resources); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					// What is sent: the route configuration encoded (the
					// server's gRPC stream does this per client).
					raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(res.Resources.Routes[0])
					if err != nil {
						b.Fatal(err)
					}
					t3 := time.Now()
					size = len(raw)
					// The client's part: the route configuration decoded.
					var rc routev3.RouteConfiguration
					if err := proto.Unmarshal(raw, &rc); err != nil {
						b.Fatal(err)
					}
					translating += t1.Sub(t0)
					publishing += t2.Sub(t1)
					encoding += t3.Sub(t2)
					decoding += time.Since(t3)
				}
				b.ReportMetric(float64(size), "route-bytes")
				for name, d := range map[string]time.Duration{"translate": translating, "publish": publishing, "encode": encoding, "decode": decoding} {
					b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), name+"-ns/op")
				}
			})
		}
	}
}
