package framework

import (
	"fmt"
	"os"
	"slices"
	"strconv"
)

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
// one's and scopes.go's) besides a test's own args: route
// scopes but where the test asks for VHDS, which they cannot combine with,
// or for a number of scopes of its own.
func vhdsServeArgs(testArgs []string) []string {
	var args []string
	if VHDS() {
		args = append(args, "--vhds")
	}
	if n := RouteScopes(); n > 0 && !slices.Contains(testArgs, "--vhds") && !slices.Contains(testArgs, "--route-scopes") {
		args = append(args, "--route-scopes", strconv.Itoa(n)) // scopes.go
	}
	return args
}

// HTTPRouteUpdates is the number of accepted updates of the HTTP
// listener's routes at an Envoy: of its route configuration over RDS, or,
// for an Envoy that takes its virtual hosts over VHDS (the VHDS suite's,
// or a delta Envoy of a control plane as shipped, serve --delta-vhds), of
// its virtual hosts (which Envoy counts under the RDS scope, with "vhds."
// before the configuration's name), or, in the route scopes' suite, of
// all its scopes' route configurations.
func HTTPRouteUpdates(e *Envoy) (int64, error) {
	const vhdsUpdates = "http.ingress_http.rds.vhds.ingress_http.update_success"
	switch {
	case VHDS():
		return e.Stat(vhdsUpdates)
	case RouteScopes() == 0:
		if n, err := e.Stat(vhdsUpdates); err == nil {
			return n, nil
		}
	case RouteScopes() > 0:
		stats, err := e.Stats(`^http\.ingress_http\.rds\.ingress_http/[0-9]+\.update_success$`)
		if err != nil {
			return 0, err
		}
		if len(stats) != RouteScopes() {
			return 0, fmt.Errorf("envoy has %d scopes' route update counters, want %d", len(stats), RouteScopes())
		}
		var sum int64
		for _, v := range stats {
			sum += v
		}
		return sum, nil
	}
	return e.Stat("http.ingress_http.rds.ingress_http.update_success")
}
