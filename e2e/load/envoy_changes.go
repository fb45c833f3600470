package load

import (
	"context"
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
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The Envoy phase: a real Envoy on the control plane's xDS port (through
// a meter counting the bytes), two real backends in a network namespace,
// and changes of four kinds (envoy_kinds.go) taking turns, each timed
// from just before its API request until Envoy answers with the backend
// it names.

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
	// ReadyCPUSeconds is Envoy's CPU until it was ready (converging on
	// the workload); ReadyBytes what the control plane had sent it then.
	ReadyCPUSeconds float64 `json:"ready_cpu_seconds"`
	ReadyBytes      int64   `json:"ready_bytes_to_envoy"`
	// Served is the figure of the host kind: from just before each create
	// request until the first 200 from the backend through Envoy.
	Served Summary `json:"served"`
	// ADSClient is, for the same changes, until the load command's ADS
	// client received routes with the host; API the create request alone.
	ADSClient Summary `json:"ads_client"`
	API       Summary `json:"api"`
	// Kinds are the figures of each kind of change, in the order run.
	Kinds []*EnvoyKind `json:"kinds"`
	// AnswersBeforeServed counts, over all changes, the polls that did not
	// get the backend's 200, by status code ("404", "503"), "error", or
	// the other backend's 200.
	AnswersBeforeServed map[string]int `json:"answers_before_served"`
	// BackendRequests is how many requests the backends answered in all.
	BackendRequests int64 `json:"backend_requests"`
	// Rejected is the sum of Envoy's update_rejected counters: anything
	// but 0 means Envoy refused configuration the control plane sent.
	Rejected int64 `json:"envoy_rejected"`
	// UpdatesAtReady and Updates are Envoy's update counters by xDS type
	// when it was ready and after the changes.
	UpdatesAtReady map[string]UpdateCounts `json:"updates_at_ready"`
	Updates        map[string]UpdateCounts `json:"updates"`
	// XDSConnections is how many connections Envoy opened to the control
	// plane: 1 unless its stream broke.
	XDSConnections int64 `json:"xds_connections"`
	// Samples are the changes in order, for telling an outlier from the
	// machine's other work at the time.
	Samples []EnvoySample `json:"samples"`
	// Envoy's own process figures, read at the end of the phase.
	PeakRSSBytes int64       `json:"envoy_peak_rss_bytes"`
	CPUSeconds   float64     `json:"envoy_cpu_seconds"`
	Memory       EnvoyMemory `json:"memory"`
}

// EnvoyKind is what one kind of change measured.
type EnvoyKind struct {
	Kind   string  `json:"kind"`
	Served Summary `json:"served"`
	API    Summary `json:"api"`
	// BytesToEnvoy is what the control plane sent Envoy per change (from
	// just before the change until just before the next).
	BytesToEnvoy ByteSummary `json:"bytes_to_envoy"`
	// CPUSeconds is Envoy's CPU over the changes of this kind, the
	// requests it answered while polling included.
	CPUSeconds float64 `json:"envoy_cpu_seconds"`
	// FirstRequest is how long the request that got the backend's 200
	// took: the first request Envoy routed to the change. Envoy creates
	// what it defers (a cluster on its worker, its traffic stats) then.
	FirstRequest Summary `json:"first_request"`
	// AnswersBeforeServed are this kind's share of the phase's.
	AnswersBeforeServed map[string]int `json:"answers_before_served"`
}

// ByteSummary describes per-change byte counts.
type ByteSummary struct {
	Count int   `json:"count"`
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	Max   int64 `json:"max"`
	Total int64 `json:"total"`
}

// SummarizeBytes computes the summary of per-change byte counts.
func SummarizeBytes(samples []int64) ByteSummary {
	if len(samples) == 0 {
		return ByteSummary{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	var total int64
	for _, b := range sorted {
		total += b
	}
	// The same nearest rank as Percentile's.
	asDur := make([]time.Duration, len(sorted))
	for i, b := range sorted {
		asDur[i] = time.Duration(b)
	}
	return ByteSummary{
		Count: len(sorted), Total: total, Max: sorted[len(sorted)-1],
		P50: int64(Percentile(asDur, 50)), P90: int64(Percentile(asDur, 90)),
	}
}

const (
	// backendPort and otherBackendPort are where the two backends listen
	// in their namespace.
	backendPort      = 8080
	otherBackendPort = 8081
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
	var bs backends
	for _, b := range []struct {
		into *(*backendServer)
		name string
		port int
	}{{&bs.a, "backend-" + run, backendPort}, {&bs.b, "backend-" + run + "-b", otherBackendPort}} {
		if *b.into, err = startBackend(ns, b.name, b.port, filepath.Join(cfg.Dir, b.name+".log")); err != nil {
			return err
		}
		defer (*b.into).Close()
	}
	defer func() { res.BackendRequests = bs.a.requests() + bs.b.requests() }()
	s.log.Info("backends listening", "netns", ns.Name, "a", bs.a.address, "b", bs.b.address)

	objs := envoyObjects{w: s.cfg.Workload, run: run, backendIP: ns.IP}
	if err := objs.createService(ctx, s, objs.service(), backendPort); err != nil {
		return err
	}
	if cfg.Kubeconfig != "" {
		defer objs.cleanUp(context.WithoutCancel(ctx), s, cfg.EnvoyChanges)
	}
	kinds, err := objs.setupKinds(ctx, s, cfg.EnvoyKinds, cfg.EnvoyChanges, bs)
	if err != nil {
		return err
	}

	meter, err := startXDSMeter(s.xds)
	if err != nil {
		return err
	}
	defer meter.Close()
	defer func() { res.XDSConnections = meter.Connections() }()
	s.log.Info("starting Envoy", "binary", cfg.EnvoyBinary, "listener port", s.httpPort)
	envoyStart := time.Now()
	adminPort, err := s.reservePort()
	if err != nil {
		return err
	}
	envoy, err := startEnvoy(cfg.EnvoyBinary, cfg.Bootstrap, meter.Address(), s.httpPort, adminPort, cfg.EnvoyConcurrency, cfg.Dir)
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
	res.ReadyBytes = meter.ToEnvoy()
	st, err := ReadProcStat(envoy.Pid())
	if err != nil {
		return err
	}
	res.ReadyCPUSeconds, res.Memory.ReadyRSSBytes = st.CPUSeconds, st.RSS
	p := newPoller(envoy, cfg.EnvoyPoll)
	for i, k := range kinds {
		served, _, err := p.until(waitCtx, k.warm, envoyStart.Add(cfg.Timeout), map[string]int{})
		if err != nil {
			return fmt.Errorf("waiting for Envoy to serve the warm-up of the %s changes: %w", k.name, err)
		}
		if i == 0 {
			res.FirstServedSeconds = served.Sub(envoyStart).Seconds()
		}
	}
	s.log.Info("Envoy serving", "protocol", res.Protocol, "ready", secs(res.ReadySeconds), "firstServed", secs(res.FirstServedSeconds))

	// Envoy's start set off work in both processes (its first responses,
	// the warm-up Ingresses' status): let it end before the first sample.
	if err := s.quiesce(ctx, "Envoy started"); err != nil {
		return err
	}
	if err := envoyIdle(ctx, envoy); err != nil {
		return err
	}
	if res.UpdatesAtReady, err = envoy.updates(); err != nil {
		return err
	}

	perKind := map[string]*kindSamples{}
	for _, k := range kinds {
		perKind[k.name] = &kindSamples{answers: map[string]int{}}
	}
	for i := range cfg.EnvoyChanges {
		for _, k := range kinds {
			if err := envoy.Exited(); err != nil {
				return err
			}
			sample, err := s.envoyChange(ctx, p, envoy, meter, k, i, perKind[k.name].answers)
			if err != nil {
				return err
			}
			perKind[k.name].add(sample)
			res.Samples = append(res.Samples, EnvoySample{
				Kind: k.name, Created: sample.start.UTC().Format(time.RFC3339Nano),
				ServedMs: ms(sample.served), ADSMs: ms(sample.ads), APIMs: ms(sample.api),
				BytesToEnvoy: sample.bytes, EnvoyCPUSeconds: sample.cpu,
			})
			s.log.Debug("Envoy change", "kind", k.name, "sample", i, "served", sample.served, "ads", sample.ads, "api", sample.api, "bytes", sample.bytes)
		}
	}
	for _, k := range kinds {
		ks := perKind[k.name]
		out := &EnvoyKind{Kind: k.name, Served: Summarize(ks.served), API: Summarize(ks.api), BytesToEnvoy: SummarizeBytes(ks.bytes), CPUSeconds: ks.cpu, AnswersBeforeServed: ks.answers, FirstRequest: Summarize(ks.firstRequest)}
		for answer, n := range ks.answers {
			res.AnswersBeforeServed[answer] += n
		}
		res.Kinds = append(res.Kinds, out)
		if k.name == KindHost {
			res.Served, res.API, res.ADSClient = out.Served, out.API, Summarize(ks.ads)
		}
		s.log.Info("Envoy changes", "kind", k.name, "p50ms", out.Served.P50, "p90ms", out.Served.P90, "p99ms", out.Served.P99, "maxms", out.Served.Max, "bytesP50", out.BytesToEnvoy.P50)
	}

	if err := envoyIdle(ctx, envoy); err != nil {
		return err
	}
	if st, err = ReadProcStat(envoy.Pid()); err != nil {
		return err
	}
	res.PeakRSSBytes, res.CPUSeconds = st.PeakRSS, st.CPUSeconds
	res.Memory.PeakRSSBytes, res.Memory.SettledRSSBytes = st.PeakRSS, st.RSS
	if res.Updates, err = envoy.updates(); err != nil {
		return err
	}
	for _, c := range res.Updates {
		res.Rejected += c.Rejected
	}
	if cfg.EnvoyProfile {
		if err := envoy.profileMemory(&res.Memory); err != nil {
			return err
		}
	}
	return nil
}

// envoyIdle waits, at most a minute, for Envoy to go idle.
func envoyIdle(ctx context.Context, envoy *envoyProc) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := waitIdle(ctx, envoy.Pid(), 0.05)
	return err
}

// EnvoySample is one change of the Envoy phase.
type EnvoySample struct {
	Kind     string  `json:"kind"`
	Created  string  `json:"created"` // when the API request was sent, RFC 3339 UTC
	ServedMs float64 `json:"served_ms"`
	// ADSMs is 0 when the ADS client did not receive it within adsGrace,
	// and for the kinds it does not watch.
	ADSMs float64 `json:"ads_client_ms"`
	APIMs float64 `json:"api_ms"`
	// BytesToEnvoy and EnvoyCPUSeconds are from just before this change
	// until just before the next.
	BytesToEnvoy    int64   `json:"bytes_to_envoy"`
	EnvoyCPUSeconds float64 `json:"envoy_cpu_seconds"`
}

type envoySample struct {
	start            time.Time
	served, ads, api time.Duration // ads is 0 when the client did not see it
	firstRequest     time.Duration // the request that got the 200
	bytes            int64
	cpu              float64
}

// kindSamples gathers the samples of one kind.
type kindSamples struct {
	served, ads, api []time.Duration
	firstRequest     []time.Duration
	bytes            []int64
	cpu              float64
	answers          map[string]int
}

func (ks *kindSamples) add(s envoySample) {
	ks.served, ks.api = append(ks.served, s.served), append(ks.api, s.api)
	ks.firstRequest = append(ks.firstRequest, s.firstRequest)
	if s.ads > 0 {
		ks.ads = append(ks.ads, s.ads)
	}
	ks.bytes = append(ks.bytes, s.bytes)
	ks.cpu += s.cpu
}

// envoyChange makes change i of kind k and times it until Envoy serves
// it, and (for the host kind) until the ADS client has its route; then
// pauses, and counts the bytes Envoy received and the CPU it used from
// the change's start to the end of the pause.
func (s *session) envoyChange(ctx context.Context, p *poller, envoy *envoyProc, meter *xdsMeter, k envoyKind, i int, answers map[string]int) (envoySample, error) {
	var out envoySample
	adsCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var adsAt chan time.Time
	if k.adsHost != nil {
		adsAt = make(chan time.Time, 1)
		host := k.adsHost(i)
		go func() {
			watch := &hostWatch{hosts: []string{host}}
			snap, err := s.ads.WaitFor(adsCtx, watch.ready)
			if err != nil {
				adsAt <- time.Time{}
				return
			}
			adsAt <- snap.Received[resource.RouteType]
		}()
	}
	before, err := ReadProcStat(envoy.Pid())
	if err != nil {
		return out, err
	}
	bytesBefore := meter.ToEnvoy()

	start := time.Now()
	out.start = start
	tgt, err := k.change(ctx, i)
	if err != nil {
		return out, fmt.Errorf("Envoy change %s %d: %w", k.name, i, err)
	}
	out.api = time.Since(start)
	served, took, err := p.until(ctx, tgt, start.Add(envoyChangeTimeout), answers)
	if err != nil {
		return out, fmt.Errorf("Envoy change %s %d: %w", k.name, i, err)
	}
	out.served, out.firstRequest = served.Sub(start), took
	if adsAt != nil {
		select {
		case at := <-adsAt:
			if !at.IsZero() {
				out.ads = at.Sub(start)
			}
		case <-time.After(adsGrace):
			s.log.Warn("the ADS client did not get an Ingress that Envoy served", "host", tgt.host, "grace", adsGrace)
		}
	}
	if err := sleep(ctx, s.cfg.EnvoyInterval); err != nil {
		return out, err
	}
	after, err := ReadProcStat(envoy.Pid())
	if err != nil {
		return out, err
	}
	out.bytes, out.cpu = meter.ToEnvoy()-bytesBefore, after.CPUSeconds-before.CPUSeconds
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
	port     int
	address  string // ip:port in the namespace
	proc     *framework.Process
	baseline int64 // requests before the measurement (this side's checks)
}

// startBackend starts the backend in ns, its output in logPath, and waits
// until it answers.
func startBackend(ns *framework.Netns, name string, port int, logPath string) (*backendServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("backend: finding this executable: %w", err)
	}
	address := net.JoinHostPort(ns.IP, strconv.Itoa(port))
	b := &backendServer{name: name, port: port, address: address}
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

// envoyObjects are the Kubernetes objects of the Envoy phase (see
// envoy_kinds.go). Names carry the run, so that runs against one cluster
// do not collide.
type envoyObjects struct {
	w         Workload
	run       string
	backendIP string
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// poller sends GET requests to Envoy's listener, with the Host header and
// path of the change under test, every interval until the backend the
// change names answers.
type poller struct {
	client   *http.Client
	base     string
	interval time.Duration
}

func newPoller(e *envoyProc, interval time.Duration) *poller {
	return &poller{client: newHTTPClient(), base: "http://" + e.listener, interval: interval}
}

// until polls t until a 200 from t.backend arrives, and returns when it
// arrived (its response headers) and how long that one request took.
// Every other answer is counted into answers. It gives up at deadline.
func (p *poller) until(ctx context.Context, t target, deadline time.Time, answers map[string]int) (time.Time, time.Duration, error) {
	last := ""
	for {
		sent := time.Now()
		code, from, err := get(p.client, p.base+t.path, t.host)
		at := time.Now()
		switch {
		case err == nil && code == http.StatusOK && from == t.backend:
			return at, at.Sub(sent), nil
		case err != nil:
			last = "error"
			if ctx.Err() != nil {
				return time.Time{}, 0, ctx.Err()
			}
		case code == http.StatusOK:
			last = "200 from " + strconv.Quote(from)
		default:
			last = strconv.Itoa(code)
		}
		answers[last]++
		if at.After(deadline) {
			return time.Time{}, 0, fmt.Errorf("Envoy did not serve %s%s from %s until %s (last answer: %s; err: %v)", t.host, t.path, t.backend, deadline.Format(time.RFC3339), last, err)
		}
		if err := sleep(ctx, time.Until(sent.Add(p.interval))); err != nil {
			return time.Time{}, 0, err
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
