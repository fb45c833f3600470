package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// fakeSource is a Source whose state and changes the test sets. It counts
// the calls of State, which only a full rebuild makes.
type fakeSource struct {
	mu         sync.Mutex
	state      *kube.State
	changes    kube.Changes
	stateCalls int
}

func (s *fakeSource) Run(ctx context.Context, changed func()) error {
	changed()
	<-ctx.Done()
	return nil
}

func (s *fakeSource) State() *kube.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateCalls++
	return s.state
}

func (s *fakeSource) TakeChanges() kube.Changes {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.changes
	s.changes = kube.Changes{}
	return c
}

func (s *fakeSource) EndpointSlices(svc types.NamespacedName) []*kube.EndpointSlice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.EndpointSlices[svc]
}

// set replaces the state and records what changed, as a source does.
func (s *fakeSource) set(st *kube.State, c kube.Changes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.changes = st, c
}

func (s *fakeSource) states() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateCalls
}

// recorder keeps the Warning Events it is asked to record.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Warn(obj runtime.Object, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ing := obj.(*networkingv1.Ingress)
	r.events = append(r.events, ing.Namespace+"/"+ing.Name+" "+reason)
}

func (r *recorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

var web = types.NamespacedName{Namespace: "app", Name: "web"}

// state is one Ingress routing to web:80, whose endpoints are addrs; with
// badTLS the Ingress also has a TLS entry without hosts, a problem.
func state(badTLS bool, addrs ...string) *kube.State {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: web.Namespace, Name: "web", UID: "u1", Generation: 1},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: web.Name, Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
	}
	if badTLS {
		ing.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "cert"}}
		ing.Generation = 2
	}
	port := int32(8080)
	slice := kube.NewEndpointSlice(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: web.Namespace, Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: web.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: addrs}},
	})
	st := kube.NewState()
	st.Ingresses = []*networkingv1.Ingress{ing}
	st.Services[web] = kube.NewService(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: web.Namespace, Name: web.Name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	})
	st.EndpointSlices[web] = []*kube.EndpointSlice{slice}
	return st
}

type testPipeline struct {
	*Pipeline
	source *fakeSource
	server *xds.Server
	events *recorder
	logs   *syncBuffer
}

func newTestPipeline(t *testing.T, st *kube.State) *testPipeline {
	t.Helper()
	src := &fakeSource{state: st, changes: kube.Changes{All: true}}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	server := xds.NewServer(slog.New(slog.DiscardHandler))
	events := &recorder{}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	tr.SetValidate(true) // a broken IR contract is reported (validate_test.go)
	p := New(Options{
		Logger:     logger,
		Source:     src,
		Translator: tr,
		Server:     server,
		Events:     events,
	})
	return &testPipeline{Pipeline: p, source: src, server: server, events: events, logs: logs}
}

func (tp *testPipeline) version(typeURL string) string {
	return tp.server.Snapshot().GetVersion(typeURL)
}

// A change to endpoints alone takes the fast path: the state is not read
// again, only the endpoint version moves, and what is served is what a
// full rebuild of the same state serves. Anything else rebuilds in full.
func TestRebuildFullAndEndpointsOnly(t *testing.T) {
	ctx := context.Background()
	tp := newTestPipeline(t, state(false, "198.18.0.1"))
	if tp.Ready() {
		t.Fatal("ready before anything was published")
	}
	tp.Rebuild(ctx)
	if !tp.Ready() {
		t.Fatal("not ready after the first publish")
	}
	if got := tp.source.states(); got != 1 {
		t.Fatalf("first rebuild read the state %d times, want 1", got)
	}
	routes, endpoints := tp.version(resource.RouteType), tp.version(resource.EndpointType)

	// Nothing changed: nothing is read or published.
	tp.Rebuild(ctx)
	if got := tp.source.states(); got != 1 {
		t.Errorf("a rebuild with no changes read the state (%d reads)", got)
	}

	next := state(false, "198.18.0.1", "198.18.0.2")
	tp.source.set(next, kube.Changes{Endpoints: map[types.NamespacedName]bool{web: true}})
	tp.Rebuild(ctx)
	if got := tp.source.states(); got != 1 {
		t.Errorf("an endpoint change read the whole state (%d reads): not the fast path", got)
	}
	if got := tp.version(resource.RouteType); got != routes {
		t.Errorf("route version moved on an endpoint change: %s -> %s", routes, got)
	}
	if got := tp.version(resource.EndpointType); got == endpoints {
		t.Error("endpoint version did not move on an endpoint change")
	}
	fresh := newTestPipeline(t, next)
	fresh.Rebuild(ctx)
	for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType} {
		if got, want := tp.version(typ), fresh.version(typ); got != want {
			t.Errorf("%s version after the fast path %s, a full build of the same state %s", typ, got, want)
		}
	}

	// Any other change reads the state again and translates it whole.
	tp.source.set(state(true, "198.18.0.1", "198.18.0.2"), kube.Changes{All: true})
	tp.Rebuild(ctx)
	if got := tp.source.states(); got != 2 {
		t.Errorf("a change to everything read the state %d times in all, want 2", got)
	}
}

// A problem is logged, and recorded as an Event on its Ingress, once, when
// it first appears; not again on later rebuilds while it lasts; and again
// if it goes away and comes back.
func TestProblemsReportedOnceWhenTheyAppear(t *testing.T) {
	ctx := context.Background()
	tp := newTestPipeline(t, state(true, "198.18.0.1"))
	rebuild := func(badTLS bool) {
		tp.source.set(state(badTLS, "198.18.0.1"), kube.Changes{All: true})
		tp.Rebuild(ctx)
	}
	tp.Rebuild(ctx)
	rebuild(true)
	rebuild(true)
	if got := tp.events.recorded(); len(got) != 1 || got[0] != "app/web InvalidTLS" {
		t.Errorf("events after three rebuilds with one problem = %v, want one InvalidTLS on app/web", got)
	}
	if got := tp.logs.count("problem with ingress"); got != 1 {
		t.Errorf("the problem was logged %d times, want once:\n%s", got, tp.logs)
	}
	if !strings.Contains(tp.logs.String(), "object=app/web reason=InvalidTLS") {
		t.Errorf("the log line does not name the object and reason:\n%s", tp.logs)
	}

	rebuild(false)
	rebuild(true)
	if got := tp.events.recorded(); len(got) != 2 {
		t.Errorf("events after the problem came back = %v, want a second one", got)
	}
	if got := tp.logs.count("problem with ingress"); got != 2 {
		t.Errorf("the problem was logged %d times after it came back, want twice", got)
	}
}

// Without an event recorder (file mode) problems are still logged.
func TestProblemsWithoutEvents(t *testing.T) {
	logs := &syncBuffer{}
	p := New(Options{
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
		Source:     &fakeSource{state: state(true, "198.18.0.1"), changes: kube.Changes{All: true}},
		Translator: translate.NewTranslator(translate.Options{HTTPPort: 8080}),
		Server:     xds.NewServer(slog.New(slog.DiscardHandler)),
	})
	p.Rebuild(context.Background())
	if got := logs.count("problem with ingress"); got != 1 {
		t.Errorf("the problem was logged %d times, want once:\n%s", got, logs)
	}
	if !p.Ready() {
		t.Error("a state with a problem in one Ingress was not published")
	}
}

// syncBuffer is a log sink safe for the pipeline's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) count(s string) int { return strings.Count(b.String(), s) }

// The fast path needs a translation to build on: an endpoint change before
// any falls back to a full rebuild.
func TestEndpointsOnlyBeforeAnyTranslation(t *testing.T) {
	tp := newTestPipeline(t, state(false, "198.18.0.1"))
	tp.source.set(state(false, "198.18.0.1"), kube.Changes{Endpoints: map[types.NamespacedName]bool{web: true}})
	tp.Rebuild(context.Background())
	if got := tp.source.states(); got != 1 {
		t.Errorf("read the state %d times, want 1 (a full rebuild)", got)
	}
	if !tp.Ready() || tp.server.Snapshot().Count(resource.ClusterType) != 1 {
		t.Error("nothing published")
	}
}
