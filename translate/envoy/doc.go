// Package envoy is the Envoy renderer: it turns the IR (translate/ir) into
// xDS resources. Rendering is a pure function of IR values, one file per
// feature: listeners, the HTTP filter chain (in one fixed order, filters.go),
// routes and their policies, clusters and their policies, load assignments,
// TLS. The Renderer remembers what it rendered and hands the same message out
// again for the same IR value (the IR's identity contract), so that a change
// costs what changed.
package envoy
