package load

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
	"github.com/ingress-xds/ingress-xds/e2e/ports"
)

// Config is one run of the load test.
type Config struct {
	Workload Workload
	// Kubeconfig names an existing cluster; empty starts kube-apiserver and
	// etcd from KubeAssets.
	Kubeconfig string
	KubeAssets string
	// CRDs is a file or directory of CustomResourceDefinitions installed
	// before the workload: a peer's own kinds (Contour's HTTPProxy...),
	// without which it does not start. Empty: none.
	CRDs string
	// Flags are the load command's own flags that shape the measurement,
	// as given, kept in the result so that a report can say how its runs
	// were made.
	Flags string
	// Command is the control plane's command line, with {kubeconfig},
	// {xds}, {xds_port} and {http_port} placeholders.
	Command string
	// ValidateIR adds --validate-ir to an ingress-xds serve Command, so
	// that a broken IR contract at scale is logged and counted (it
	// lengthens the full builds: docs/benchmarks.md).
	ValidateIR bool
	// Delta makes the ADS clients speak incremental xDS.
	Delta bool
	// OnDemandClusters makes the delta ADS client ask for the clusters
	// routes name, by name (a control plane serving on-demand clusters).
	OnDemandClusters bool
	// Changes is how many samples of each kind of change to take; Interval
	// the pause after each.
	Changes  int
	Interval time.Duration
	// Fanout is how many clients the fan-out test connects; 0 skips it.
	Fanout int
	// FanoutClusters is, with Delta and OnDemandClusters, how many
	// clusters each fan-out client asks for by name, as a delta Envoy
	// whose traffic has reached that many backends (the fan-out change's
	// among them); it then subscribes to the load assignments of the
	// clusters it holds. With neither, it subscribes to every load
	// assignment.
	FanoutClusters int
	// FanoutPause is how long the fan-out clients stay connected, the
	// control plane idle, before the change: time to take its profiles.
	FanoutPause time.Duration
	// FanoutReconnect drops every fan-out client after the change and
	// dials them all again at once (a reconnect storm).
	FanoutReconnect bool
	// FanoutH2 has the fan-out clients speak HTTP/2 themselves
	// (h2stream.go), reading each response as it arrives rather than
	// holding it whole as gRPC's client does: for storms whose clients
	// would hold more than the machine has.
	FanoutH2 bool
	// Status waits, after convergence, for every Ingress to have a status
	// address, and times it.
	Status bool
	// CreateWorkers is how many creates are in flight at once.
	CreateWorkers int
	// Timeout bounds each phase (creating, converging, status, fan-out).
	Timeout time.Duration
	// Settle is a pause after convergence (and status) before the changes,
	// for the work they set off to end.
	Settle time.Duration
	// Dir receives the kubeconfig, the control plane's log and perf data.
	Dir string
	// Perf records the control plane with `perf record` during convergence
	// and during the changes, and with this process too during the
	// fan-out's changes and reconnect storm.
	Perf bool
	// EnvoyChanges is how many Ingresses the Envoy phase creates, each
	// timed until a real Envoy serves it; 0 skips the phase, which needs
	// {http_port} in Command, root (for a network namespace) and Envoy.
	EnvoyChanges int
	// EnvoyBinary is the envoy executable.
	EnvoyBinary string
	// Bootstrap is the command that writes Envoy's bootstrap, with
	// {xds}, {admin}, {node_id} and {out} placeholders (DefaultBootstrap).
	Bootstrap string
	// EnvoyPoll is the pause between requests to Envoy while waiting for
	// a change to be served.
	EnvoyPoll time.Duration
	// EnvoyKinds are the kinds of change the Envoy phase takes turns at
	// (AllKinds by default), EnvoyChanges of each; EnvoyInterval the pause
	// after each change.
	EnvoyKinds    []string
	EnvoyInterval time.Duration
	// EnvoyProfile reads, after the changes, where Envoy's memory is
	// (/memory, and the sizes of /stats, /clusters and /config_dump).
	EnvoyProfile bool
	// EnvoyConcurrency is Envoy's --concurrency (worker threads); 0 keeps
	// the framework's 1.
	EnvoyConcurrency int
	Log              *slog.Logger
}

// Run creates the workload, starts the control plane and measures it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	w := cfg.Workload
	s := &session{cfg: cfg, log: cfg.Log, res: &Result{
		N: w.N, Ingresses: w.N, GatewayAPI: w.GatewayAPI, Services: w.Services(), Protocol: protocol(cfg.Delta),
		Command: cfg.Command, Flags: cfg.Flags, Started: time.Now().UTC().Format(time.RFC3339),
		Machine: DescribeMachine(),
	}}
	defer s.releasePorts() // deferred first: runs after the processes' Stops
	restCfg, kubeconfig, stop, err := cluster(cfg)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := installCRDs(restCfg, cfg.CRDs, s.log); err != nil {
		return nil, err
	}
	// Cancelled before the API server stops: its watches and streams
	// would otherwise hold up its shutdown.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.kube, err = kubernetes.NewForConfig(fastClient(restCfg)); err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	if w.GatewayAPI {
		// Custom resources speak JSON only.
		gwCfg := fastClient(restCfg)
		gwCfg.ContentType, gwCfg.AcceptContentTypes = "application/json", "application/json"
		if s.gateway, err = gwclient.NewForConfig(gwCfg); err != nil {
			return nil, fmt.Errorf("creating a Gateway API client: %w", err)
		}
	}
	if err := s.createWorkload(ctx); err != nil {
		return nil, err
	}
	var status *statusWatch
	if cfg.Status && !w.GatewayAPI { // an Ingress's status address
		if status, err = watchStatus(ctx, s.kube, w); err != nil {
			return nil, err
		}
	}
	if err := s.startControlPlane(kubeconfig); err != nil {
		return nil, err
	}
	defer s.cp.Stop()
	if err := s.profiled("convergence", func() error { return s.converge(ctx) }); err != nil {
		return nil, err
	}
	defer s.ads.Close()
	var statusAtConvergence int
	if status != nil {
		statusAtConvergence, _ = status.progress()
		if err := s.waitStatus(ctx, status); err != nil {
			return nil, err
		}
	}
	if err := s.readStartup(status, statusAtConvergence); err != nil {
		return nil, err
	}
	if err := sleep(ctx, cfg.Settle); err != nil {
		return nil, err
	}
	if err := s.quiesce(ctx, "convergence"); err != nil {
		return nil, err
	}
	ch := &changer{kube: s.kube, gateway: s.gateway, ads: s.ads, w: w, run: runID(), interval: cfg.Interval, fanoutH2: cfg.FanoutH2, log: s.log,
		profiled: func(name string, fn func() error) error { return s.profiledWith(name, fn, s.cp.Pid(), os.Getpid()) }}
	if err := s.profiled("changes", func() error { return s.changes(ctx, ch) }); err != nil {
		return nil, err
	}
	// Memory and CPU before the fan-out, which adds hundreds of streams
	// the other figures are not about.
	if err := s.readProcess(func(st ProcStat) {
		s.res.Memory.PeakRSSBytes = st.PeakRSS
		s.res.Memory.RSSAfterChangesBytes = st.RSS
		s.res.CPU.TotalSeconds = st.CPUSeconds
	}); err != nil {
		return nil, err
	}
	// After the figures above, which are about the control plane alone,
	// and before the fan-out, which would swamp everything.
	if cfg.EnvoyChanges > 0 {
		if err := s.envoyChanges(ctx, ch.run); err != nil {
			return nil, fmt.Errorf("the Envoy phase: %w", err)
		}
	}
	if cfg.Fanout > 0 {
		if err := s.fanout(ctx, ch); err != nil {
			return nil, err
		}
	}
	if cfg.Kubeconfig == "" {
		s.res.Neighbours = neighbours()
	} else {
		ch.cleanUp(ctx, cfg.Changes)
	}
	s.res.Rejected = len(s.ads.Snapshot().Rejected)
	return s.res, nil
}

// session is the state of one run as it goes through its phases.
type session struct {
	cfg     Config
	log     *slog.Logger
	res     *Result
	kube    kubernetes.Interface
	gateway gwclient.Interface // the Gateway API workload's; nil for Ingresses

	cp       *ControlPlane
	xds      string    // the control plane's xDS address
	httpPort int       // {http_port}: where the control plane has Envoy listen
	start    time.Time // when the control plane was started
	conv     Convergence
	ads      *adsclient.Client
	ports    []*ports.Reservation // the processes' ports, released when Run ends
}

func (s *session) createWorkload(ctx context.Context) error {
	w := s.cfg.Workload
	s.log.Info("creating the workload", "ingresses", w.N, "objects", w.Objects())
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var err error
	if s.res.Create, err = Create(ctx, s.kube, s.gateway, w, s.cfg.CreateWorkers, s.log); err != nil {
		return err
	}
	s.log.Info("workload created", "objects", s.res.Create.Objects, "took", s.res.Create.Took.Round(time.Millisecond))
	return nil
}

func (s *session) startControlPlane(kubeconfig string) error {
	port, err := s.reservePort()
	if err != nil {
		return err
	}
	s.xds = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if s.httpPort, err = s.reservePort(); err != nil {
		return err
	}
	env, argv, err := ExpandCommand(s.cfg.Command, Placeholders{
		Kubeconfig: kubeconfig, XDSAddress: s.xds, XDSPort: strconv.Itoa(port), HTTPPort: strconv.Itoa(s.httpPort),
	})
	if err != nil {
		return err
	}
	if s.cfg.ValidateIR {
		argv = withValidateIR(argv)
	}
	logPath := filepath.Join(s.cfg.Dir, "control-plane.log")
	s.res.Files = append(s.res.Files, logPath)
	s.log.Info("starting the control plane", "command", strings.Join(append(env, argv...), " "), "log", logPath)
	s.start = time.Now()
	s.cp, err = StartControlPlane(env, argv, logPath)
	return err
}

// profiled runs fn, under `perf record` when asked, into <name>.perf.data.
func (s *session) profiled(name string, fn func() error) error {
	return s.profiledWith(name, fn, s.cp.Pid())
}

// profiledWith is profiled recording the processes pids.
func (s *session) profiledWith(name string, fn func() error, pids ...int) error {
	if !s.cfg.Perf {
		return fn()
	}
	path := filepath.Join(s.cfg.Dir, name+".perf.data")
	perf, err := startPerf(path, pids...)
	if err != nil {
		return err
	}
	s.res.Files = append(s.res.Files, path)
	if err := fn(); err != nil {
		perf.stop()
		return err
	}
	return perf.stop()
}

func (s *session) converge(ctx context.Context) error {
	opts := adsclient.Options{NodeID: "ingress-load", Delta: s.cfg.Delta, OnDemandClusters: s.cfg.OnDemandClusters}
	ads, conv, err := converge(ctx, s.cfg.Timeout, s.xds, opts, s.cfg.Workload, s.start, s.cp.Exited)
	if err != nil {
		return err
	}
	s.ads, s.conv = ads, conv
	c := &s.res.Convergence
	c.ConnectedSeconds = conv.Connected.Seconds()
	c.FirstResponseSeconds = conv.FirstResponse.Seconds()
	c.AllHostsSeconds = conv.AllHosts.Seconds()
	c.AllEndpointsSeconds = conv.AllEndpoints.Seconds()
	s.log.Info("converged", "allHosts", conv.AllHosts.Round(time.Millisecond), "allEndpoints", conv.AllEndpoints.Round(time.Millisecond))
	return s.readProcess(func(st ProcStat) {
		s.res.Memory.PeakRSSConvergenceBytes = st.PeakRSS
		s.res.Memory.RSSAfterConvergenceBytes = st.RSS
		s.res.CPU.ConvergenceSeconds = st.CPUSeconds
	})
}

func (s *session) waitStatus(ctx context.Context, status *statusWatch) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	at, err := status.wait(ctx)
	if err != nil {
		return fmt.Errorf("waiting for Ingress status: %w", err)
	}
	s.res.Status = &Status{
		FromStartSeconds:        at.Sub(s.start).Seconds(),
		AfterConvergenceSeconds: at.Sub(s.start.Add(s.conv.AllHosts)).Seconds(),
	}
	s.log.Info("every Ingress has a status address", "fromStart", at.Sub(s.start).Round(time.Millisecond))
	return nil
}

// changes takes the Ingress (or HTTPRoute) and endpoint change samples.
func (s *session) changes(ctx context.Context, ch *changer) error {
	changes, kind := ch.ingressChanges, "Ingress changes"
	if s.cfg.Workload.GatewayAPI {
		changes, kind = ch.httpRouteChanges, "HTTPRoute changes"
	}
	ing, err := changes(ctx, s.cfg.Changes)
	if err != nil {
		return err
	}
	s.res.IngressChange, s.res.IngressChangeAPI = Summarize(latencies(ing)), Summarize(apiLatencies(ing))
	s.log.Info(kind, "p50ms", s.res.IngressChange.P50, "p90ms", s.res.IngressChange.P90)
	ep, err := ch.endpointChanges(ctx, s.cfg.Changes)
	if err != nil {
		return err
	}
	s.res.EndpointChange, s.res.EndpointAPI = Summarize(latencies(ep)), Summarize(apiLatencies(ep))
	s.log.Info("endpoint changes", "p50ms", s.res.EndpointChange.P50, "p90ms", s.res.EndpointChange.P90)
	return nil
}

func (s *session) fanout(ctx context.Context, ch *changer) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	cpu := func() (CPUSplit, error) {
		st, err := ReadProcStat(s.cp.Pid())
		return CPUSplit{ControlPlaneSeconds: st.CPUSeconds, ClientsSeconds: selfCPUSeconds()}, err
	}
	start, err := cpu()
	if err != nil {
		return err
	}
	var connected CPUSplit
	var idleRSS int64
	// The endpoint change is recorded from when every client is connected
	// and the control plane idle to the last client's arrival, the span
	// its CPU figures cover, with this process too (its clients read on
	// the same cores): at 10,000 Ingresses each SotW client's
	// acknowledgement is megabytes, and the profile says which side the
	// time went to.
	var endpointPerf *perfRecording
	startEndpointPerf := func() (err error) {
		if !s.cfg.Perf {
			return nil
		}
		path := filepath.Join(s.cfg.Dir, "fanout-endpoint.perf.data")
		if endpointPerf, err = startPerf(path, s.cp.Pid(), os.Getpid()); err != nil {
			return err
		}
		s.res.Files = append(s.res.Files, path)
		return nil
	}
	stopEndpointPerf := func() error {
		if endpointPerf == nil {
			return nil
		}
		defer func() { endpointPerf = nil }()
		return endpointPerf.stop()
	}
	defer stopEndpointPerf() // when the change failed
	beforeChange := func() error {
		// Connecting 500 clients leaves the control plane busy after
		// the last has its first responses; a change then would time
		// that backlog too.
		if err := s.quiesce(ctx, "fan-out clients connected"); err != nil {
			return err
		}
		if err := s.readProcess(func(st ProcStat) { idleRSS = st.RSS }); err != nil {
			return err
		}
		if s.cfg.FanoutPause > 0 {
			s.log.Info("fan-out clients connected; pausing before the change", "pause", s.cfg.FanoutPause)
			select {
			case <-time.After(s.cfg.FanoutPause):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if connected, err = cpu(); err != nil {
			return err
		}
		return startEndpointPerf()
	}
	// A Service the endpoint samples did not touch.
	svc := pick(s.cfg.Changes, s.cfg.Workload.Services())
	var end CPUSplit
	afterChange := func() (err error) {
		if end, err = cpu(); err != nil {
			return err
		}
		return stopEndpointPerf()
	}
	var storm *Reconnect
	var reconnect func(time.Duration, Summary) error
	if s.cfg.FanoutReconnect {
		reconnect = func(took time.Duration, each Summary) error {
			back, err := cpu()
			if err != nil {
				return err
			}
			storm = &Reconnect{Seconds: took.Seconds(), Back: each, CPU: back.minus(end)}
			return s.readProcess(func(st ProcStat) { storm.RSSBytes, storm.PeakRSSBytes = st.RSS, st.PeakRSS })
		}
	}
	// The Ingress change is recorded with this process too: its clients
	// decode on the same cores, and the profile says which side the time
	// went to.
	var ingressCPU CPUSplit
	ingressChange := func(fn func() error) error {
		// The endpoint change's last client is not its end: SotW
		// clients then acknowledge it naming every load assignment,
		// which the control plane decodes for seconds at 2,000 clients.
		// A change then would time that backlog too.
		if err := s.quiesce(ctx, "the fan-out's endpoint change"); err != nil {
			return err
		}
		before, err := cpu()
		if err != nil {
			return err
		}
		if err := s.profiledWith("fanout-ingress", fn, s.cp.Pid(), os.Getpid()); err != nil {
			return err
		}
		after, err := cpu()
		ingressCPU = after.minus(before)
		return err
	}
	onDemand := 0
	if s.cfg.Delta && s.cfg.OnDemandClusters {
		onDemand = s.cfg.FanoutClusters
	}
	f, err := ch.fanout(ctx, s.xds, s.cfg.Fanout, s.cfg.Delta, onDemand, svc, beforeChange, afterChange, ingressChange, reconnect)
	if err != nil {
		return err
	}
	f.IngressChangeCPU = ingressCPU
	f.ConnectCPU = connected.minus(start)
	f.ChangeCPU = end.minus(connected)
	f.Reconnect = storm
	f.ConnectedRSSBytes = idleRSS
	s.res.Fanout = &f
	return s.readProcess(func(st ProcStat) { f.PeakRSSBytes = st.PeakRSS })
}

// quiesce waits, at most a minute, for the control plane to go idle.
func (s *session) quiesce(ctx context.Context, after string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	took, err := waitIdle(ctx, s.cp.Pid(), 0.05)
	if err != nil {
		return err
	}
	s.log.Info("control plane idle", "after", after, "waited", took.Round(time.Millisecond))
	return nil
}

// readProcess reads the control plane's /proc figures into the result,
// after checking it is still alive: figures from a dead process are wrong.
func (s *session) readProcess(into func(ProcStat)) error {
	if err := s.cp.Exited(); err != nil {
		return err
	}
	st, err := ReadProcStat(s.cp.Pid())
	if err != nil {
		return err
	}
	into(st)
	return nil
}

// cluster returns a client config and kubeconfig path for the cluster to
// load: the one given, or a new kube-apiserver and etcd.
func cluster(cfg Config) (*rest.Config, string, func(), error) {
	if cfg.Kubeconfig != "" {
		restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
		if err != nil {
			return nil, "", nil, fmt.Errorf("loading %s: %w", cfg.Kubeconfig, err)
		}
		return restCfg, cfg.Kubeconfig, func() {}, nil
	}
	cfg.Log.Info("starting kube-apiserver and etcd", "assets", cfg.KubeAssets)
	api, err := StartAPIServer(cfg.KubeAssets, cfg.Dir)
	if err != nil {
		return nil, "", nil, err
	}
	stop := func() {
		if err := api.Stop(); err != nil {
			cfg.Log.Warn("stopping the API server", "err", err)
		}
	}
	return api.Config, api.Kubeconfig, stop, nil
}

// fastClient lifts client-go's 5 requests per second: creating 200,000
// objects at that pace would take eleven hours. Protobuf halves the API
// server's encoding work.
func fastClient(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "ingress-load"
	return cfg
}

// neighbours reads the CPU and peak memory of kube-apiserver and etcd,
// children of this process.
func neighbours() map[string]NeighbourStat {
	out := map[string]NeighbourStat{}
	for name, pid := range childrenByName(os.Getpid()) {
		if name != "kube-apiserver" && name != "etcd" {
			continue
		}
		if st, err := ReadProcStat(pid); err == nil {
			out[name] = NeighbourStat{PeakRSSBytes: st.PeakRSS, CPUSeconds: st.CPUSeconds}
		}
	}
	return out
}

// cleanUp deletes this run's change Ingresses from a cluster that outlives
// the run. Failures are only logged: the figures are already taken.
func (c *changer) cleanUp(ctx context.Context, count int) {
	for k := range count {
		name := c.w.ChangeIngress(c.run, k, 0).Name
		if err := c.kube.NetworkingV1().Ingresses(c.w.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			c.log.Warn("deleting a change Ingress", "name", name, "err", err)
		}
	}
}

// reservePort reserves a port for a process of the run (e2e/ports: outside
// the ephemeral range, and in the registry the test processes share, so
// that a test running beside the load command is never handed it), given
// back when the run ends (releasePorts).
func (s *session) reservePort() (int, error) {
	r, err := ports.Open()
	if err != nil {
		return 0, err
	}
	res, err := r.Reserve(1)
	if err != nil {
		return 0, fmt.Errorf("reserving a port: %w", err)
	}
	s.ports = append(s.ports, res)
	return res.Ports[0], nil
}

// releasePorts gives back the run's ports, once its processes are stopped.
func (s *session) releasePorts() {
	for _, res := range s.ports {
		if err := res.Release(); err != nil {
			s.log.Warn("releasing a port", "ports", res.Ports, "err", err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// runID names this run's change Ingresses: base 36 of the start second.
func runID() string { return strconv.FormatInt(time.Now().Unix(), 36) }

func protocol(delta bool) string {
	if delta {
		return "delta"
	}
	return "sotw"
}

// Validate checks a Config before anything starts.
func (cfg Config) Validate() error {
	var errs []error
	if cfg.Workload.N < 1 {
		errs = append(errs, errors.New("-n must be at least 1"))
	}
	if cfg.Workload.Namespace == "" {
		errs = append(errs, errors.New("-namespace must not be empty"))
	}
	if strings.TrimSpace(cfg.Command) == "" {
		errs = append(errs, errors.New("-cmd is required"))
	}
	if cfg.Changes < 0 || cfg.Fanout < 0 || cfg.EnvoyChanges < 0 {
		errs = append(errs, errors.New("-changes, -fanout and -envoy-changes must not be negative"))
	}
	if cfg.EnvoyChanges > 0 {
		if !strings.Contains(cfg.Command, "{http_port}") {
			errs = append(errs, errors.New("-envoy-changes needs {http_port} in -cmd: the port the control plane tells Envoy to listen on (--http-port {http_port} for ingress-xds)"))
		}
		if cfg.EnvoyBinary == "" {
			errs = append(errs, errors.New("-envoy-changes needs Envoy: give -envoy, or run `make tools` for .tools/bin/envoy"))
		}
		if strings.TrimSpace(cfg.Bootstrap) == "" {
			errs = append(errs, errors.New("-envoy-changes needs a -bootstrap command"))
		}
		if cfg.EnvoyPoll <= 0 {
			errs = append(errs, errors.New("-envoy-poll must be positive"))
		}
		if len(cfg.EnvoyKinds) == 0 {
			errs = append(errs, errors.New("-envoy-kinds must name at least one kind of change"))
		}
	}
	if cfg.Workload.GatewayAPI && (cfg.EnvoyChanges > 0 || cfg.Fanout > 0 || cfg.Kubeconfig != "") {
		errs = append(errs, errors.New("-gateway-api runs the convergence and the changes on a cluster of its own: not with -envoy-changes, -fanout or -kubeconfig yet"))
	}
	if cfg.Workload.GatewayAPI && cfg.CRDs == "" {
		errs = append(errs, errors.New("-gateway-api needs the Gateway API CRDs: give -crds deploy/gateway-api/standard-install.yaml"))
	}
	if cfg.Kubeconfig == "" && cfg.KubeAssets == "" {
		errs = append(errs, errors.New("give -kubeconfig, or kube-apiserver and etcd binaries with -kube-assets or KUBEBUILDER_ASSETS"))
	}
	return errors.Join(errs...)
}

// withValidateIR is argv with --validate-ir when it runs ingress-xds serve
// and does not say it already; any other command as it is.
func withValidateIR(argv []string) []string {
	if len(argv) < 2 || filepath.Base(argv[0]) != "ingress-xds" || argv[1] != "serve" ||
		slices.ContainsFunc(argv, func(a string) bool {
			return strings.HasPrefix(a, "--validate-ir") || strings.HasPrefix(a, "-validate-ir")
		}) {
		return argv
	}
	return append(slices.Clip(argv), "--validate-ir")
}
