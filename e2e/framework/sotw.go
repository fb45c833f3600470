package framework

import "os"

// SotWEnv, set to 1, runs the suite with state-of-the-world Envoys
// (bootstrap --delta=false) where a test does not choose: the suite
// otherwise runs as shipped, every Envoy on delta xDS (bootstrap's
// default) and so with on-demand clusters (serve's default, issue 31,
// translate/envoy/ondemand.go), which proves that a cluster Envoy fetches
// on a request's first need serves as one it was sent ahead; this mode
// proves the same scenarios with every cluster sent:
//
//	INGRESS_XDS_E2E_SOTW=1 go test ./e2e
//
// VHDSEnv wins over it: VHDS needs delta xDS.
const SotWEnv = "INGRESS_XDS_E2E_SOTW"

// SotW says whether the suite's Envoys speak state of the world.
func SotW() bool { return os.Getenv(SotWEnv) == "1" && !VHDS() }

// OnDemand says whether the suite's Envoys get their clusters on demand:
// delta Envoys of a control plane with serve's default.
func OnDemand() bool { return !SotW() }
