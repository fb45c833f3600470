// Package load measures an Ingress control plane at scale, as the
// ingress-load command runs it: it writes a workload of N Ingresses (2 hosts
// x 5 Prefix paths each, every path to a Service of its own with one
// EndpointSlice of 10 ready endpoints) into a real API server, starts the
// control plane from a command-line template, and times with ADS clients:
//
//   - initial convergence: from the process start until a client routes
//     every host;
//   - Ingress changes: one new Ingress with new hosts, until routed;
//   - endpoint changes: one endpoint added to a slice, until in the load
//     assignment;
//   - fan-out: many clients on one snapshot, one change, until all have it;
//   - status: until every Ingress has an address in status.loadBalancer;
//   - through Envoy (optional): a real Envoy on the control plane, a real
//     backend in a network namespace, and new Ingresses timed until Envoy
//     serves the backend's 200 for their host;
//
// and reads the control plane's peak memory (VmHWM) and CPU from /proc.
//
// Nothing depends on how the control plane names its resources (hosts are
// found in any virtual host, a load assignment by an endpoint address only
// it holds), so the same run measures a peer. Timings are results, recorded
// in docs/benchmarks.md; no test asserts on them.
package load
