package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The Envoy phase: a real Envoy on the control plane's xDS port, a real
// backend in a network namespace behind one Service, and Ingresses created
// one at a time, each timed from just before its create request until
// Envoy answers a request for its host with the backend's 200.

// EnvoyChanges is what the Envoy phase measured.
type EnvoyChanges struct {
	// Protocol is the xDS flavour of Envoy's bootstrap: "sotw" or "delta".
	Protocol       string  `json:"protocol"`
	PollIntervalMs float64 `json:"poll_interval_ms"`
	// ReadySeconds is from Envoy's start until its admin /ready said 200
	// (it had the whole workload's listeners, clusters and endpoints);
	// FirstServedSeconds until it first served the warm-up Ingress.
	ReadySeconds       float64 `json:"ready_seconds"`
	FirstServedSeconds float64 `json:"first_served_seconds"`
	// Served is the figure: from just before each create request until the
	// first 200 from the backend through Envoy.
	Served Summary `json:"served"`
	// ADSClient is, for the same changes, until the load command's ADS
	// client received routes with the host; API the create request alone.
	ADSClient Summary `json:"ads_client"`
	API       Summary `json:"api"`
	// AnswersBeforeServed counts, over all changes, the polls that did not
	// get the backend's 200, by status code ("404", "503") or "error".
	AnswersBeforeServed map[string]int `json:"answers_before_served"`
	// BackendRequests is how many requests the backend answered in all.
	BackendRequests int64 `json:"backend_requests"`
	// Rejected is the sum of Envoy's update_rejected counters: anything
	// but 0 means Envoy refused configuration the control plane sent.
	Rejected int64 `json:"envoy_rejected"`
	// Samples are the changes in order, for telling an outlier from the
	// machine's other work at the time.
	Samples []EnvoySample `json:"samples"`
	// Envoy's own process figures, read at the end of the phase.
	PeakRSSBytes int64   `json:"envoy_peak_rss_bytes"`
	CPUSeconds   float64 `json:"envoy_cpu_seconds"`
}

const (
	// backendPort is where the backend listens in its namespace, and the
	// port of its EndpointSlice.
	backendPort = 8080
	// envoyChangeTimeout bounds the wait for one change to be served.
	envoyChangeTimeout = time.Minute
	// adsGrace is how long, once Envoy served a change, the ADS client
	// may still take to receive it before its sample is left out.
	adsGrace = 10 * time.Second
)

// envoyChanges runs the Envoy phase.
func (s *session) envoyChanges(ctx context.Context, run string) (err error) {
	cfg := s.cfg
	res := &EnvoyChanges{PollIntervalMs: ms(cfg.EnvoyPoll), AnswersBeforeServed: map[string]int{}}
	s.res.Envoy = res

	ns, err := framework.CreateNetns("ixds-load-")
	if err != nil {
		return fmt.Errorf("the backend's network namespace: %w", err)
	}
	defer func() {
		if cerr := ns.Delete(); cerr != nil {
			s.log.Warn("deleting the network namespace", "name", ns.Name, "err", cerr)
		}
	}()
	backend, err := startBackend(ns, "backend-"+run, filepath.Join(cfg.Dir, "backend.log"))
	if err != nil {
		return err
	}
	defer backend.Close()
	defer func() { res.BackendRequests = backend.requests() }()
	s.log.Info("backend listening", "netns", ns.Name, "address", backend.address)

	objs := envoyObjects{w: s.cfg.Workload, run: run, backendIP: ns.IP}
	if err := objs.createBackend(ctx, s); err != nil {
		return err
	}
	if cfg.Kubeconfig != "" {
		defer objs.cleanUp(context.WithoutCancel(ctx), s, cfg.EnvoyChanges)
	}
	warm := objs.ingress("warm")
	if _, err := s.kube.NetworkingV1().Ingresses(objs.w.Namespace).Create(ctx, warm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the warm-up Ingress: %w", err)
	}

	s.log.Info("starting Envoy", "binary", cfg.EnvoyBinary, "listener port", s.httpPort)
	envoyStart := time.Now()
	envoy, err := startEnvoy(cfg.EnvoyBinary, cfg.Bootstrap, s.xds, s.httpPort, cfg.Dir)
	if err != nil {
		return err
	}
	defer envoy.Stop()
	s.res.Files = append(s.res.Files, envoy.LogPath)
	res.Protocol = bootstrapProtocol(envoy.bootstrap)
	waitCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := envoy.waitReady(waitCtx); err != nil {
		return err
	}
	res.ReadySeconds = time.Since(envoyStart).Seconds()
	p := newPoller(envoy, backend.name, cfg.EnvoyPoll)
	served, err := p.until(waitCtx, objs.host("warm"), envoyStart.Add(cfg.Timeout), map[string]int{})
	if err != nil {
		return fmt.Errorf("waiting for Envoy to serve the warm-up Ingress: %w", err)
	}
	res.FirstServedSeconds = served.Sub(envoyStart).Seconds()
	s.log.Info("Envoy serving", "protocol", res.Protocol, "ready", secs(res.ReadySeconds), "firstServed", secs(res.FirstServedSeconds))

	// Envoy's start set off work in both processes (its first responses,
	// the warm-up Ingress's status): let it end before the first sample.
	if err := s.quiesce(ctx, "Envoy started"); err != nil {
		return err
	}
	idleCtx, cancelIdle := context.WithTimeout(ctx, time.Minute)
	_, err = waitIdle(idleCtx, envoy.Pid(), 0.05)
	cancelIdle()
	if err != nil {
		return err
	}

	var servedLat, adsLat, apiLat []time.Duration
	for k := range cfg.EnvoyChanges {
		if err := envoy.Exited(); err != nil {
			return err
		}
		sample, err := s.envoyChange(ctx, p, objs, k, res.AnswersBeforeServed)
		if err != nil {
			return err
		}
		servedLat, apiLat = append(servedLat, sample.served), append(apiLat, sample.api)
		res.Samples = append(res.Samples, EnvoySample{
			Created:  sample.start.UTC().Format(time.RFC3339Nano),
			ServedMs: ms(sample.served), ADSMs: ms(sample.ads), APIMs: ms(sample.api),
		})
		if sample.ads > 0 {
			adsLat = append(adsLat, sample.ads)
		}
		s.log.Debug("Envoy change", "sample", k, "served", sample.served, "ads", sample.ads, "api", sample.api)
		if err := sleep(ctx, cfg.Interval); err != nil {
			return err
		}
	}
	res.Served, res.ADSClient, res.API = Summarize(servedLat), Summarize(adsLat), Summarize(apiLat)
	s.log.Info("Envoy changes", "p50ms", res.Served.P50, "p90ms", res.Served.P90, "p99ms", res.Served.P99, "maxms", res.Served.Max)
	if res.Rejected, err = envoy.rejected(); err != nil {
		return err
	}
	st, err := ReadProcStat(envoy.Pid())
	if err != nil {
		return err
	}
	res.PeakRSSBytes, res.CPUSeconds = st.PeakRSS, st.CPUSeconds
	return nil
}

// EnvoySample is one change of the Envoy phase.
type EnvoySample struct {
	Created  string  `json:"created"` // when the create request was sent, RFC 3339 UTC
	ServedMs float64 `json:"served_ms"`
	// ADSMs is 0 when the ADS client did not receive it within adsGrace.
	ADSMs float64 `json:"ads_client_ms"`
	APIMs float64 `json:"api_ms"`
}

type envoySample struct {
	start            time.Time
	served, ads, api time.Duration // ads is 0 when the client did not see it
}

// envoyChange creates change Ingress k and times it until Envoy serves it,
// and until the ADS client has its route.
func (s *session) envoyChange(ctx context.Context, p *poller, objs envoyObjects, k int, answers map[string]int) (envoySample, error) {
	var out envoySample
	name := strconv.Itoa(k)
	ing, host := objs.ingress(name), objs.host(name)
	adsCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	adsAt := make(chan time.Time, 1)

	start := time.Now()
	out.start = start
	go func() {
		watch := &hostWatch{hosts: []string{host}}
		snap, err := s.ads.WaitFor(adsCtx, watch.ready)
		if err != nil {
			adsAt <- time.Time{}
			return
		}
		adsAt <- snap.Received[resource.RouteType]
	}()
	if _, err := s.kube.NetworkingV1().Ingresses(objs.w.Namespace).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		return out, fmt.Errorf("Envoy change %d: creating %s: %w", k, ing.Name, err)
	}
	out.api = time.Since(start)
	served, err := p.until(ctx, host, start.Add(envoyChangeTimeout), answers)
	if err != nil {
		return out, fmt.Errorf("Envoy change %d: %w", k, err)
	}
	out.served = served.Sub(start)
	select {
	case at := <-adsAt:
		if !at.IsZero() {
			out.ads = at.Sub(start)
		}
	case <-time.After(adsGrace):
		s.log.Warn("the ADS client did not get an Ingress that Envoy served", "host", host, "grace", adsGrace)
	}
	return out, nil
}

// bootstrapProtocol reads the bootstrap the phase wrote: an ADS config of
// type DELTA_GRPC is delta xDS.
func bootstrapProtocol(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return protocol(strings.Contains(string(data), "DELTA_GRPC"))
}

// backendServer is the echo backend, in its network namespace: a child
// process (this very executable, see serveBackendIfAsked) started with
// `ip netns exec`. Entering the namespace from a thread of this process
// instead left, now and then, other threads of it in the namespace: Envoy,
// started from one of them, then could not reach the control plane.
type backendServer struct {
	name     string
	address  string // ip:port in the namespace
	proc     *framework.Process
	baseline int64 // requests before the measurement (this side's checks)
}

// startBackend starts the backend in ns, its output in logPath, and waits
// until it answers.
func startBackend(ns *framework.Netns, name, logPath string) (*backendServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("backend: finding this executable: %w", err)
	}
	address := net.JoinHostPort(ns.IP, strconv.Itoa(backendPort))
	b := &backendServer{name: name, address: address}
	cmd := ns.Command(self)
	cmd.Env = append(os.Environ(), backendAddressEnv+"="+address, backendNameEnv+"="+name)
	if b.proc, err = framework.Spawn("the backend", cmd, logPath); err != nil {
		return nil, err
	}
	// Reached from here, as Envoy will reach it: across the veth pair.
	client := newHTTPClient()
	if _, err := framework.Poll(context.Background(), 10*time.Second, 20*time.Millisecond, func() error {
		if err := b.proc.Exited(); err != nil {
			return framework.Permanent(fmt.Errorf("it exited: %w: %s", err, b.proc.Tail(5)))
		}
		code, from, err := get(client, "http://"+address+"/", "direct")
		if err == nil && (code != http.StatusOK || from != name) {
			err = fmt.Errorf("status %d from %q", code, from)
		}
		return err
	}); err != nil {
		b.Close()
		return nil, fmt.Errorf("backend at %s does not answer from here: %w", address, err)
	}
	n, err := b.count()
	if err != nil {
		b.Close()
		return nil, err
	}
	b.baseline = n
	return b, nil
}

// requests is how many requests the backend answered since it started
// serving the measurement.
func (b *backendServer) requests() int64 {
	n, err := b.count()
	if err != nil {
		return -1
	}
	return n - b.baseline
}

func (b *backendServer) count() (int64, error) {
	resp, err := newHTTPClient().Get("http://" + b.address + backendCountPath)
	if err != nil {
		return 0, fmt.Errorf("backend: reading its request count: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
}

func (b *backendServer) Close() error {
	b.proc.Kill()
	return nil
}

// envoyObjects are the Kubernetes objects of the Envoy phase: one Service
// with one EndpointSlice to the backend, and Ingresses of one host each
// routing every path to it. Names carry the run, so that runs against one
// cluster do not collide.
type envoyObjects struct {
	w         Workload
	run       string
	backendIP string
}

func (o envoyObjects) service() string { return "backend-" + o.run }

// host returns the host of the Ingress called name ("warm", "0", "1" ...).
func (o envoyObjects) host(name string) string {
	return fmt.Sprintf("envoy-%s-%s.load.test", o.run, name)
}

func (o envoyObjects) ingress(name string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("envoy-%s-%s", o.run, name), Namespace: o.w.Namespace},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To(ClassName),
			Rules: []networkingv1.IngressRule{{
				Host: o.host(name),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: o.service(),
							Port: networkingv1.ServiceBackendPort{Number: servicePort},
						}},
					}},
				}},
			}},
		},
	}
}

func (o envoyObjects) createBackend(ctx context.Context, s *session) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: o.service(), Namespace: o.w.Namespace},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{
				Name: portName, Protocol: corev1.ProtocolTCP,
				Port: servicePort, TargetPort: intstr.FromInt32(backendPort),
			}},
		},
	}
	if _, err := s.kube.CoreV1().Services(o.w.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the backend's Service: %w", err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      o.service() + "-1",
			Namespace: o.w.Namespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: o.service()},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{
			Name:     ptr.To(portName),
			Protocol: ptr.To(corev1.ProtocolTCP),
			Port:     ptr.To(int32(backendPort)),
		}},
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{o.backendIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}},
	}
	if _, err := s.kube.DiscoveryV1().EndpointSlices(o.w.Namespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the backend's EndpointSlice: %w", err)
	}
	return nil
}

// cleanUp deletes the phase's objects from a cluster that outlives the
// run. Failures are only logged.
func (o envoyObjects) cleanUp(ctx context.Context, s *session, count int) {
	names := []string{"warm"}
	for k := range count {
		names = append(names, strconv.Itoa(k))
	}
	var errs []error
	for _, name := range names {
		err := s.kube.NetworkingV1().Ingresses(o.w.Namespace).Delete(ctx, o.ingress(name).Name, metav1.DeleteOptions{})
		errs = append(errs, ignoreNotFound(err))
	}
	errs = append(errs,
		s.kube.DiscoveryV1().EndpointSlices(o.w.Namespace).Delete(ctx, o.service()+"-1", metav1.DeleteOptions{}),
		s.kube.CoreV1().Services(o.w.Namespace).Delete(ctx, o.service(), metav1.DeleteOptions{}))
	if err := errors.Join(errs...); err != nil {
		s.log.Warn("deleting the Envoy phase's objects", "err", err)
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// poller sends GET / to Envoy's listener, with the Host header of the
// Ingress under test, every interval until the backend answers.
type poller struct {
	client   *http.Client
	url      string
	backend  string
	interval time.Duration
}

func newPoller(e *envoyProc, backend string, interval time.Duration) *poller {
	return &poller{client: newHTTPClient(), url: "http://" + e.listener + "/", backend: backend, interval: interval}
}

// until polls host until a 200 from the backend arrives, and returns when
// it arrived (its response headers). Every other answer is counted into
// answers. It gives up at deadline.
func (p *poller) until(ctx context.Context, host string, deadline time.Time, answers map[string]int) (time.Time, error) {
	last := ""
	for {
		sent := time.Now()
		code, from, err := get(p.client, p.url, host)
		at := time.Now()
		switch {
		case err == nil && code == http.StatusOK && from == p.backend:
			return at, nil
		case err != nil:
			last = "error"
			if ctx.Err() != nil {
				return time.Time{}, ctx.Err()
			}
		case code == http.StatusOK:
			last = "200 from " + strconv.Quote(from)
		default:
			last = strconv.Itoa(code)
		}
		answers[last]++
		if at.After(deadline) {
			return time.Time{}, fmt.Errorf("Envoy did not serve %s until %s (last answer: %s; err: %v)", host, deadline.Format(time.RFC3339), last, err)
		}
		if err := sleep(ctx, time.Until(sent.Add(p.interval))); err != nil {
			return time.Time{}, err
		}
	}
}

// newHTTPClient is a client that keeps its connection to Envoy, never
// goes through a proxy and gives up on a request after a second.
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout: time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 2,
			DisableCompression:  true,
		},
	}
}

// get sends GET url with the Host header host and returns the status and
// the backend that answered (echo's X-Backend header, "" for Envoy's own
// answers).
func get(client *http.Client, url, host string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Backend"), nil
}

// answersLine formats AnswersBeforeServed for the table.
func answersLine(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
