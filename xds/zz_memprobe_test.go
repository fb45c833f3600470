package xds_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

func live() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestZZMemProbe(t *testing.T) {
	n := 1000
	base := live()
	w := load.Workload{N: n, Namespace: "bench"}
	st := w.State()
	a := live()
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
	res, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	b := live()
	server := xds.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := server.Publish(context.Background(), res.Resources); err != nil {
		t.Fatal(err)
	}
	res = nil
	c := live()
	fmt.Printf("state %.1f MB, translator %.1f MB, server %.1f MB\n", float64(a-base)/1e6, float64(b-a)/1e6, float64(c-b)/1e6)
	f, _ := os.Create("/tmp/memprobe/heap.pprof")
	pprof.WriteHeapProfile(f)
	f.Close()
	runtime.KeepAlive(st)
	runtime.KeepAlive(tr)
	runtime.KeepAlive(server)
}
