package framework

import "os"

// OnDemandEnv, set to 1, runs the suite with on-demand clusters (issue 18,
// translate/envoy/ondemand.go): every control plane is started with serve
// --on-demand-clusters and every Envoy bootstrapped with delta xDS, so
// that each scenario proves that a cluster Envoy fetches on a request's
// first need serves as one it was sent ahead:
//
//	INGRESS_XDS_E2E_ONDEMAND=1 go test ./e2e
//
// It combines with VHDSEnv.
const OnDemandEnv = "INGRESS_XDS_E2E_ONDEMAND"

// OnDemand says whether the suite runs with on-demand clusters.
func OnDemand() bool { return os.Getenv(OnDemandEnv) == "1" }
