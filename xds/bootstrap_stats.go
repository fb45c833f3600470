package xds

import (
	"fmt"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	metricsv3 "github.com/envoyproxy/go-control-plane/envoy/config/metrics/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

// Which of Envoy's statistics the bootstrap keeps. Envoy creates over a
// hundred stats for every cluster (traffic, circuit breakers per priority,
// load balancer, endpoint membership, its EDS subscription), whether or
// not a request ever reaches it: at scale a large part of an Envoy's
// memory, and a /stats page nobody can read (docs/benchmarks.md, "Where
// Envoy's memory goes" and "The levers of the bootstrap").
const (
	// StatsOperators keeps what an operator watches (statsKept) and has
	// Envoy create a cluster's traffic stats only once it has traffic.
	StatsOperators = "operators"
	// StatsAll keeps every statistic, created as Envoy creates them.
	StatsAll = "all"
)

// StatsModes are the values of BootstrapOptions.Stats.
var StatsModes = []string{StatsOperators, StatsAll}

// statsKeptPrefixes are the families kept whole: none of them grows with
// the number of Ingresses, Services or endpoints (one per listener, per
// HTTP connection manager, per Secret at most).
var statsKeptPrefixes = []string{
	"server.",           // live, uptime, memory_allocated, concurrency, version
	"control_plane.",    // connected_state: is the xDS stream up
	"cluster_manager.",  // cds.update_*, cluster_added/modified/removed, active and warming clusters
	"listener_manager.", // lds.update_*, listener_added/modified/removed, total_listeners_active
	"listener.",         // per listener: downstream_cx_total/active, TLS handshakes and errors
	"http1.", "http2.",  // downstream codec errors
	"tcp.",         // the TLS passthrough's tcp_proxy
	"sds.",         // per Secret: update_success/rejected
	"overload.",    // the overload manager's actions (see bootstrap_overload.go)
	"runtime.",     // runtime layer loads
	"main_thread.", // watchdog miss/mega_miss
	"workers.",     // watchdog, per worker
	"rate_limit.",  // the local rate limits' stat prefix (limit-rps, limit-rpm)
	"http_local_rate_limit.",
	"cluster." + XDSClusterName + ".", // the xDS connection to us: every stat, TLS ones included
}

// statsKeptHTTP keeps, of each connection manager's family ("http.<stat
// prefix>."), everything (downstream_rq_*, rds.<route configuration>.*,
// config_reload, the filters' stats) but the RDS stats of a route scope's
// configuration ("rds.ingress_http/17.", serve --route-scopes): twelve
// for each of up to 4,096 scopes, which grow with the number of scopes
// rather than listeners. A scope's update_success, update_rejected,
// update_failure and config_reload (its rebuilds, which the e2e fault
// tests read) are kept all the same (statsKeptSuffixes). RE2 has no
// negative lookahead: the expression spells out what may follow the stat
// prefix, "rds." with a name without '/' among it; Envoy matches it
// against the whole name.
const statsKeptHTTP = `http\.[^.]+\.(?:[^r]|r[^d]|rd[^s]|rds[^.]|rds\.[^./]*(?:\.|$)).*`

// statsKeptSuffixes are the few per-cluster stats kept, for every cluster
// (matched by suffix, so the same names of the families above are kept
// too): requests and connections (totals, active, by response class,
// failures), endpoint membership and health checking, and the cluster's
// EDS subscription (and, of the families above, a route scope's rebuilds:
// statsKeptHTTP). A cluster's traffic stats exist only once it has had
// traffic (deferred creation); membership and EDS counters exist for every
// cluster: five stats per cluster in all.
var statsKeptSuffixes = []string{
	".upstream_rq_total", ".upstream_rq_active", ".upstream_rq_pending_active",
	".upstream_rq_1xx", ".upstream_rq_2xx", ".upstream_rq_3xx", ".upstream_rq_4xx", ".upstream_rq_5xx",
	".upstream_rq_timeout", ".upstream_rq_retry", ".upstream_rq_pending_overflow",
	".upstream_cx_total", ".upstream_cx_active", ".upstream_cx_connect_fail", ".upstream_cx_connect_timeout",
	".membership_healthy", ".membership_total",
	".health_check.healthy", ".health_check.failure",
	".outlier_detection.ejections_active",
	".update_success", ".update_rejected", ".update_failure",
	".config_reload", // a route configuration's rebuilds, route scopes' too
}

// applyStats sets what mode keeps of Envoy's statistics on b.
func applyStats(b *bootstrapv3.Bootstrap, mode string) error {
	switch mode {
	case StatsAll:
		return nil
	case StatsOperators, "":
	default:
		return fmt.Errorf("stats %q: want one of %v", mode, StatsModes)
	}
	var patterns []*matcherv3.StringMatcher
	for _, p := range statsKeptPrefixes {
		patterns = append(patterns, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: p}})
	}
	patterns = append(patterns, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{
		SafeRegex: &matcherv3.RegexMatcher{Regex: statsKeptHTTP},
	}})
	for _, s := range statsKeptSuffixes {
		patterns = append(patterns, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: s}})
	}
	b.StatsConfig = &metricsv3.StatsConfig{StatsMatcher: &metricsv3.StatsMatcher{
		StatsMatcher: &metricsv3.StatsMatcher_InclusionList{InclusionList: &matcherv3.ListStringMatcher{Patterns: patterns}},
	}}
	// A cluster's ~90 traffic stats (upstream_cx_*, upstream_rq_*) are
	// created when a request first uses it, not when it is added.
	b.DeferredStatOptions = &bootstrapv3.Bootstrap_DeferredStatOptions{EnableDeferredCreationStats: true}
	return nil
}
