package xds_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// BenchmarkFirstBuild is start-up's first build, from a State whose caches
// have just synced: the first full translation, then the first publish
// (validation, encoding and hashing of every resource), each timed on its
// own (ns/op is both; translate-ns/op and publish-ns/op say which is
// which).
func BenchmarkFirstBuild(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w := load.Workload{N: n, Namespace: "bench"}
			st := w.State()
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			var translating, publishing time.Duration
			b.ResetTimer()
			for range b.N {
				tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
				server := xds.NewServer(logger)
				start := time.Now()
				res, err := tr.Translate(st)
				if err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := server.Publish(context.Background(), res.Resources); err != nil {
					b.Fatal(err)
				}
				translating += mid.Sub(start)
				publishing += time.Since(mid)
			}
			b.ReportMetric(float64(translating.Nanoseconds())/float64(b.N), "translate-ns/op")
			b.ReportMetric(float64(publishing.Nanoseconds())/float64(b.N), "publish-ns/op")
		})
	}
}
