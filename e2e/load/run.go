package load

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
)

// Config is one run of the load test.
type Config struct {
	Workload Workload
	// Kubeconfig names an existing cluster; empty starts kube-apiserver and
	// etcd from KubeAssets.
	Kubeconfig string
	KubeAssets string
	// Command is the control plane's command line, with {kubeconfig},
	// {xds} and {xds_port} placeholders.
	Command string
	// Delta makes the ADS clients speak incremental xDS.
	Delta bool
	// Changes is how many samples of each kind of change to take; Interval
	// the pause after each.
	Changes  int
	Interval time.Duration
	// Fanout is how many clients the fan-out test connects; 0 skips it.
	Fanout int
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
	// and during the changes.
	Perf bool
	Log  *slog.Logger
}

// Run creates the workload, starts the control plane and measures it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	log := cfg.Log
	w := cfg.Workload
	res := &Result{
		N: w.N, Ingresses: w.N, Services: w.Services(), Protocol: protocol(cfg.Delta),
		Command: cfg.Command, Started: time.Now().UTC().Format(time.RFC3339),
		Machine: DescribeMachine(),
	}

	restCfg, kubeconfig, stop, err := cluster(cfg)
	if err != nil {
		return nil, err
	}
	defer stop()
	// Cancelled before the API server stops: its watches and streams
	// would otherwise hold up its shutdown.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kube, err := kubernetes.NewForConfig(fastClient(restCfg))
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}

	log.Info("creating the workload", "ingresses", w.N, "objects", w.Objects())
	createCtx, cancelCreate := context.WithTimeout(ctx, cfg.Timeout)
	res.Create, err = Create(createCtx, kube, w, cfg.CreateWorkers, log)
	cancelCreate()
	if err != nil {
		return nil, err
	}
	log.Info("workload created", "objects", res.Create.Objects, "took", res.Create.Took.Round(time.Millisecond))

	var status *statusWatch
	if cfg.Status {
		if status, err = watchStatus(ctx, kube, w); err != nil {
			return nil, err
		}
	}

	xdsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	xdsAddress := net.JoinHostPort("127.0.0.1", strconv.Itoa(xdsPort))
	env, argv, err := ExpandCommand(cfg.Command, Placeholders{Kubeconfig: kubeconfig, XDSAddress: xdsAddress, XDSPort: strconv.Itoa(xdsPort)})
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(cfg.Dir, "control-plane.log")
	res.Files = append(res.Files, logPath)
	log.Info("starting the control plane", "command", strings.Join(append(env, argv...), " "), "log", logPath)
	start := time.Now()
	cp, err := StartControlPlane(env, argv, logPath)
	if err != nil {
		return nil, err
	}
	defer cp.Stop()
	var perf *perfRecording
	if cfg.Perf {
		path := filepath.Join(cfg.Dir, "convergence.perf.data")
		if perf, err = startPerf(cp.Pid(), path); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, path)
	}

	ads, conv, err := converge(ctx, cfg.Timeout, xdsAddress, adsclient.Options{NodeID: "ingress-load", Delta: cfg.Delta}, w, start, cp.Exited)
	if err != nil {
		perf.stop()
		return nil, err
	}
	defer ads.Close()
	if err := perf.stop(); err != nil {
		return nil, err
	}
	res.Convergence.ConnectedSeconds = conv.Connected.Seconds()
	res.Convergence.FirstResponseSeconds = conv.FirstResponse.Seconds()
	res.Convergence.AllHostsSeconds = conv.AllHosts.Seconds()
	res.Convergence.AllEndpointsSeconds = conv.AllEndpoints.Seconds()
	log.Info("converged", "allHosts", conv.AllHosts.Round(time.Millisecond), "allEndpoints", conv.AllEndpoints.Round(time.Millisecond))
	if st, err := ReadProcStat(cp.Pid()); err == nil {
		res.Memory.PeakRSSConvergenceBytes = st.PeakRSS
		res.Memory.RSSAfterConvergenceBytes = st.RSS
		res.CPU.ConvergenceSeconds = st.CPUSeconds
	}

	if status != nil {
		statusCtx, cancelStatus := context.WithTimeout(ctx, cfg.Timeout)
		at, err := status.wait(statusCtx)
		cancelStatus()
		if err != nil {
			return nil, fmt.Errorf("waiting for Ingress status: %w", err)
		}
		res.Status = &Status{
			FromStartSeconds:        at.Sub(start).Seconds(),
			AfterConvergenceSeconds: at.Sub(start.Add(conv.AllHosts)).Seconds(),
		}
		log.Info("every Ingress has a status address", "fromStart", at.Sub(start).Round(time.Millisecond))
	}
	if err := sleep(ctx, cfg.Settle); err != nil {
		return nil, err
	}

	if cfg.Perf {
		path := filepath.Join(cfg.Dir, "changes.perf.data")
		if perf, err = startPerf(cp.Pid(), path); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, path)
	}
	ch := &changer{kube: kube, ads: ads, w: w, run: runID(), interval: cfg.Interval, log: log}
	if err := measureChanges(ctx, ch, xdsAddress, cfg, res); err != nil {
		perf.stop()
		return nil, err
	}
	if err := perf.stop(); err != nil {
		return nil, err
	}
	if err := cp.Exited(); err != nil {
		return nil, err
	}
	if st, err := ReadProcStat(cp.Pid()); err == nil {
		res.Memory.PeakRSSBytes = st.PeakRSS
		res.Memory.RSSAfterChangesBytes = st.RSS
		res.CPU.TotalSeconds = st.CPUSeconds
	}
	if cfg.Kubeconfig == "" {
		res.Neighbours = neighbours()
	} else {
		ch.cleanUp(ctx, cfg.Changes)
	}
	res.Rejected = len(ads.Snapshot().Rejected)
	return res, nil
}

// measureChanges takes the change samples and runs the fan-out test.
func measureChanges(ctx context.Context, ch *changer, xdsAddress string, cfg Config, res *Result) error {
	ing, err := ch.ingressChanges(ctx, cfg.Changes)
	if err != nil {
		return err
	}
	res.IngressChange, res.IngressChangeAPI = Summarize(latencies(ing)), Summarize(apiLatencies(ing))
	ch.log.Info("Ingress changes", "p50", res.IngressChange.P50, "p90", res.IngressChange.P90)
	ep, err := ch.endpointChanges(ctx, cfg.Changes)
	if err != nil {
		return err
	}
	res.EndpointChange, res.EndpointAPI = Summarize(latencies(ep)), Summarize(apiLatencies(ep))
	ch.log.Info("endpoint changes", "p50", res.EndpointChange.P50, "p90", res.EndpointChange.P90)
	if cfg.Fanout > 0 {
		fanCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		// A Service the endpoint samples did not touch.
		svc := pick(cfg.Changes, cfg.Workload.Services())
		f, err := ch.fanout(fanCtx, xdsAddress, cfg.Fanout, cfg.Delta, svc)
		if err != nil {
			return err
		}
		res.Fanout = &f
	}
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
	if cfg.Changes < 0 || cfg.Fanout < 0 {
		errs = append(errs, errors.New("-changes and -fanout must not be negative"))
	}
	if cfg.Kubeconfig == "" && cfg.KubeAssets == "" {
		errs = append(errs, errors.New("give -kubeconfig, or kube-apiserver and etcd binaries with -kube-assets or KUBEBUILDER_ASSETS"))
	}
	return errors.Join(errs...)
}
