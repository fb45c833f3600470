package framework

import (
	"fmt"
	"net/http"
	"strings"
)

// The cafe is the scenario both end-to-end targets run: the local suite
// (e2e/, `ingress-xds serve` on files or a real API server, Envoy on
// loopback) and the kind suite (e2e/kind/, deploy/ on a cluster, Envoy's
// DaemonSet). One Ingress and one routing table, so that the two cannot
// drift apart: what passes locally is what a cluster is checked for.
//
// The Services it names are each target's own: coffee (port 80 by
// number), tea (port 80 named http), empty (no ready endpoint) and no
// Service called missing.

// CafeIngressYAML is the cafe Ingress, of class ingress-xds, in namespace;
// coffeeService is where cafe.example.com/coffee goes ("coffee" or "tea"),
// so that editing it reroutes.
func CafeIngressYAML(namespace, coffeeService string) string {
	port := "number: 80"
	if coffeeService == "tea" {
		port = "name: http"
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: cafe, namespace: %s}
spec:
  ingressClassName: ingress-xds
  rules:
  - host: cafe.example.com
    http:
      paths:
      - {path: /coffee, pathType: Prefix, backend: {service: {name: %s, port: {%s}}}}
      - {path: /coffee/decaf/, pathType: Prefix, backend: {service: {name: tea, port: {name: http}}}}
      - {path: /tea, pathType: Prefix, backend: {service: {name: tea, port: {name: http}}}}
      - {path: /tea/menu, pathType: Exact, backend: {service: {name: coffee, port: {number: 80}}}}
      - {path: /empty, pathType: Prefix, backend: {service: {name: empty, port: {number: 80}}}}
      - {path: /missing, pathType: ImplementationSpecific, backend: {service: {name: missing, port: {number: 80}}}}
  - host: tea.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: tea, port: {name: http}}}}
  - host: "*.cafe.example.com"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: tea, port: {name: http}}}}
`, namespace, coffeeService, port)
}

// CafeRoutes is the routing table of CafeIngressYAML(_, "coffee"): what
// each request must get, with the Ingress semantics each group checks.
func CafeRoutes() []RouteCase {
	return []RouteCase{
		// Prefix matches whole segments only.
		{"cafe.example.com", "/coffee", http.StatusOK, "coffee"},
		{"cafe.example.com", "/coffee/", http.StatusOK, "coffee"},
		{"cafe.example.com", "/coffee/latte", http.StatusOK, "coffee"},
		{"cafe.example.com", "/coffeepot", http.StatusNotFound, ""},
		// The longest prefix wins, still by segment.
		{"cafe.example.com", "/coffee/decaf", http.StatusOK, "tea"},
		{"cafe.example.com", "/coffee/decaf/large", http.StatusOK, "tea"},
		{"cafe.example.com", "/coffee/decafx", http.StatusOK, "coffee"},
		// Exact beats Prefix, and only for exactly that path.
		{"cafe.example.com", "/tea", http.StatusOK, "tea"},
		{"cafe.example.com", "/tea/menu", http.StatusOK, "coffee"},
		{"cafe.example.com", "/tea/menu?size=large", http.StatusOK, "coffee"},
		{"cafe.example.com", "/tea/menu/", http.StatusOK, "tea"},
		{"cafe.example.com", "/tea/menu/today", http.StatusOK, "tea"},
		// Hosts match whatever the port in the Host header, and whatever the case.
		{"cafe.example.com:8080", "/coffee", http.StatusOK, "coffee"},
		{"cafe.example.com:31337", "/tea", http.StatusOK, "tea"},
		{"CAFE.Example.COM", "/coffee", http.StatusOK, "coffee"},
		{"tea.example.com", "/", http.StatusOK, "tea"},
		{"tea.example.com", "/anything/at/all", http.StatusOK, "tea"},
		// A wildcard covers exactly one label.
		{"bar.cafe.example.com", "/", http.StatusOK, "tea"},
		{"BAR.cafe.example.com:8080", "/x", http.StatusOK, "tea"},
		{"foo.bar.cafe.example.com", "/", http.StatusNotFound, ""},
		// Unknown hosts and paths.
		{"unknown.example.com", "/coffee", http.StatusNotFound, ""},
		{"cafe.example.com", "/", http.StatusNotFound, ""},
		{"cafe.example.com", "/water", http.StatusNotFound, ""},
		// A Service with no ready endpoint, and one that does not exist.
		{"cafe.example.com", "/empty", http.StatusServiceUnavailable, ""},
		{"cafe.example.com", "/missing", http.StatusServiceUnavailable, ""},
	}
}

// CafeService is one Service the cafe Ingress names, on port 80: its port
// is named PortName ("" for none), and it sends to the echo backend named
// Backend, or to no ready endpoint when Backend is "". Each target makes
// them its own way (Services and EndpointSlices in files, or Services over
// Deployments on a cluster).
type CafeService struct{ Name, PortName, Backend string }

// CafeServices are the Services of CafeIngressYAML; "missing" is not one of
// them, on purpose.
func CafeServices() []CafeService {
	return []CafeService{
		{Name: "coffee", Backend: "coffee"},
		{Name: "tea", PortName: "http", Backend: "tea"},
		{Name: "empty"},
	}
}

// CafeRerouted is what the cafe answers once CafeIngressYAML(_, "coffee")
// is edited into CafeIngressYAML(_, "tea"): /coffee goes to tea, and the
// rest of the Ingress is as it was.
func CafeRerouted() []RouteCase {
	return []RouteCase{
		{"cafe.example.com", "/coffee", http.StatusOK, "tea"},
		{"cafe.example.com", "/coffee/latte", http.StatusOK, "tea"},
		{"cafe.example.com", "/tea", http.StatusOK, "tea"},
		{"cafe.example.com", "/tea/menu", http.StatusOK, "coffee"},
		{"tea.example.com", "/", http.StatusOK, "tea"},
	}
}

// RouteCase is one request and the answer it must get.
type RouteCase struct {
	Host, Path string
	Status     int
	Backend    string // "" when Envoy answers itself
}

// Send sends the request to address (host:port, over HTTP on a new
// connection) and checks the answer.
func (c RouteCase) Send(address string) error {
	r, err := Get(address, c.Host, c.Path)
	if err != nil {
		return fmt.Errorf("GET %s%s: %w", c.Host, c.Path, err)
	}
	return c.Check(r)
}

// Check returns an error unless r has the status c wants, from the backend
// c names, and that backend saw the Host and path the client sent: only
// the port is taken off the Host (the listener strips any port before
// matching hosts), and the query is not part of the path.
func (c RouteCase) Check(r Response) error {
	if r.Status != c.Status || r.Backend != c.Backend {
		return fmt.Errorf("GET %s%s: got %s, want %d from %q", c.Host, c.Path, r, c.Status, c.Backend)
	}
	wantHost, _, _ := strings.Cut(c.Host, ":")
	wantPath, _, _ := strings.Cut(c.Path, "?")
	if r.Backend != "" && (r.Echo.Host != wantHost || r.Echo.Path != wantPath) {
		return fmt.Errorf("GET %s%s: the backend saw host %q and path %q", c.Host, c.Path, r.Echo.Host, r.Echo.Path)
	}
	return nil
}
