package framework

import (
	"os"
	"strconv"
)

// RouteScopesEnv, set to a number of scopes, runs the suite with the
// plain-HTTP routes split into that many route scopes (issue 18,
// translate/envoy/scopes.go): every control plane is started with serve
// --route-scopes N, so that each scenario proves the scoped routes as the
// one route configuration does, on SotW and delta Envoys alike:
//
//	INGRESS_XDS_E2E_ROUTE_SCOPES=16 go test ./e2e
//
// It combines with SotWEnv, not with VHDSEnv.
const RouteScopesEnv = "INGRESS_XDS_E2E_ROUTE_SCOPES"

// RouteScopes is the suite's number of route scopes, 0 for none.
func RouteScopes() int {
	n, err := strconv.Atoi(os.Getenv(RouteScopesEnv))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
