package kube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderElection campaigns for a coordination.k8s.io Lease so that, of all
// the replicas, one writes Ingress status. Everything else (informers, xDS)
// runs on every replica, so losing the lease does not restart the process:
// the replica stops writing and campaigns again.
type LeaderElection struct {
	Client    kubernetes.Interface
	Namespace string // of the Lease
	Name      string // of the Lease
	Identity  string // unique per replica: the pod name and a random suffix
	// LeaseDuration is how long followers wait, after the last renewal,
	// before taking over from a leader that stopped renewing: the bound on
	// failover after a crash. RenewDeadline is how long the leader keeps
	// trying to renew before giving up the lead; RetryPeriod is the pause
	// between attempts. Zero values take client-go's usual 15s, 10s, 2s.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Logger        *slog.Logger
}

// Run campaigns until ctx is done. Each time this replica wins, lead runs
// with a context that is cancelled when the lease is lost, and Run waits for
// it to return before campaigning again: two terms never overlap, and when
// Run returns nothing is writing any more. When ctx is done the lease is
// released, which lets another replica take over at once rather than after
// LeaseDuration.
func (l *LeaderElection) Run(ctx context.Context, lead func(context.Context)) error {
	config, err := l.config()
	if err != nil {
		return err
	}
	lease := l.Namespace + "/" + l.Name
	for ctx.Err() == nil {
		// client-go calls OnStartedLeading on a goroutine of its own; we hand
		// the term over to this one instead, so that we know when it ends.
		terms := make(chan context.Context, 1)
		config.Callbacks = leaderelection.LeaderCallbacks{
			OnStartedLeading: func(term context.Context) { terms <- term },
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != l.Identity {
					l.logger().Info("another replica leads", "lease", lease, "leader", identity)
				}
			},
		}
		elector, err := leaderelection.NewLeaderElector(config)
		if err != nil {
			return fmt.Errorf("leader election: %w", err)
		}
		electorDone := make(chan struct{})
		go func() {
			defer close(electorDone)
			elector.Run(ctx) // returns when the lease is lost or ctx is done
		}()
		select {
		case term := <-terms:
			l.logger().Info("became leader", "lease", lease, "identity", l.Identity)
			lead(term)
			<-electorDone
			if ctx.Err() == nil {
				l.logger().Warn("lost the leader lease; campaigning again", "lease", lease)
			}
		case <-electorDone:
			// ctx is done before we won. (Had we won and lost at once, the
			// term's context is already cancelled: nothing to run.)
		}
	}
	return nil
}

func (l *LeaderElection) config() (leaderelection.LeaderElectionConfig, error) {
	if l.Namespace == "" || l.Name == "" || l.Identity == "" {
		return leaderelection.LeaderElectionConfig{}, fmt.Errorf("leader election needs a lease namespace, name and identity")
	}
	orDefault := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	return leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name},
			Client:     l.Client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: l.Identity},
		},
		LeaseDuration:   orDefault(l.LeaseDuration, 15*time.Second),
		RenewDeadline:   orDefault(l.RenewDeadline, 10*time.Second),
		RetryPeriod:     orDefault(l.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Name:            l.Name,
	}, nil
}

func (l *LeaderElection) logger() *slog.Logger { return loggerOr(l.Logger) }
