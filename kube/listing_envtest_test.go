package kube

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// requestLog records the API requests a client makes, as "VERB path?query".
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// of returns the requests for a resource path suffix.
func (l *requestLog) of(resource string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		if path, _, _ := strings.Cut(strings.TrimPrefix(s, "GET "), "?"); strings.HasSuffix(path, "/"+resource) {
			out = append(out, s)
		}
	}
	return out
}

// TestInformersListOrStream: with List the informers fill their caches
// with a list (a GET without watch); by default, as client-go does, they
// ask for a watch that sends the initial objects (sendInitialEvents=true)
// and list nothing.
func TestInformersListOrStream(t *testing.T) {
	cfg := startAPIServer(t)
	for _, streaming := range []bool{false, true} {
		var log requestLog
		c := rest.CopyConfig(cfg)
		c.WrapTransport = log.wrap
		client := kubernetes.NewForConfigOrDie(c)
		factories := NewInformerFactoriesWith(client, InformerOptions{List: !streaming})
		inf := factories.Informers()
		stop := make(chan struct{})
		factories.Start(stop)
		if !cache.WaitForCacheSync(stop, inf.EndpointSlices.HasSynced, inf.Services.HasSynced) {
			t.Fatal("caches did not sync")
		}
		close(stop)
		factories.Shutdown()
		for _, resource := range []string{"endpointslices", "services"} {
			var lists, streams int
			for _, req := range log.of(resource) {
				switch {
				case strings.Contains(req, "sendInitialEvents=true"):
					streams++
				case !strings.Contains(req, "watch=true"):
					lists++
				}
			}
			if streaming && (streams == 0 || lists != 0) {
				t.Errorf("streaming: %s had %d streaming watches and %d lists, want a stream and no list: %q", resource, streams, lists, log.of(resource))
			}
			if !streaming && (lists == 0 || streams != 0) {
				t.Errorf("listing: %s had %d lists and %d streaming watches, want a list and no stream: %q", resource, lists, streams, log.of(resource))
			}
		}
	}
}
