package framework

import "os"

// VHDSEnv, set to 1, runs the suite with the plain-HTTP virtual hosts sent
// over VHDS (issue 18, translate/envoy/vhds.go): every control plane is
// started with serve --vhds and every Envoy bootstrapped with delta xDS,
// which VHDS requires, so that each scenario proves the split routes as
// the one route configuration does:
//
//	INGRESS_XDS_E2E_VHDS=1 go test ./e2e
const VHDSEnv = "INGRESS_XDS_E2E_VHDS"

// VHDS says whether the suite runs with virtual host discovery.
func VHDS() bool { return os.Getenv(VHDSEnv) == "1" }

// vhdsServeArgs are the flags serve gets for the suite's modes (this
// one's, and ondemand.go's).
func vhdsServeArgs() []string {
	var args []string
	if VHDS() {
		args = append(args, "--vhds")
	}
	if OnDemand() {
		args = append(args, "--on-demand-clusters")
	}
	return args
}

// suiteDelta says whether the suite's mode needs every Envoy on delta xDS.
func suiteDelta() bool { return VHDS() || OnDemand() }

// HTTPRouteUpdates is the Envoy counter of accepted updates of the HTTP
// listener's routes: its route configuration's over RDS, or, in the VHDS
// suite, its virtual hosts' over VHDS (which Envoy counts under the RDS
// scope, with "vhds." before the configuration's name).
func HTTPRouteUpdates() string {
	if VHDS() {
		return "http.ingress_http.rds.vhds.ingress_http.update_success"
	}
	return "http.ingress_http.rds.ingress_http.update_success"
}
