package envoy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// JSONByType is each resource of res as compact JSON, by type (listeners,
// routes, clusters, endpoints, secrets), with private keys (and basic
// authentication's password hashes, authz_redact.go) redacted: what
// people read, and the golden files of the renderer.
func JSONByType(res *Resources) (map[string][]json.RawMessage, error) {
	out := map[string][]json.RawMessage{}
	var err error
	if out["listeners"], err = marshalAll(res.Listeners); err != nil {
		return nil, err
	}
	if out["routes"], err = marshalAll(redactRoutes(res.Routes)); err != nil {
		return nil, err
	}
	if out["clusters"], err = marshalAll(redactClusters(res.Clusters)); err != nil {
		return nil, err
	}
	if out["endpoints"], err = marshalAll(res.Endpoints); err != nil {
		return nil, err
	}
	if out["secrets"], err = marshalAll(RedactSecrets(res.Secrets)); err != nil {
		return nil, err
	}
	if len(res.VirtualHosts) > 0 { // vhds.go
		if out["virtualHosts"], err = marshalAll(redactVirtualHosts(res.VirtualHosts)); err != nil {
			return nil, err
		}
	}
	if len(res.DeltaRoutes) > 0 { // vhds_delta.go
		if out["deltaRoutes"], err = marshalAll(redactRoutes(res.DeltaRoutes)); err != nil {
			return nil, err
		}
	}
	if len(res.ScopedRoutes) > 0 { // scopes.go
		if out["scopedRoutes"], err = marshalAll(res.ScopedRoutes); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RenderJSON prints resources and problems as indented JSON grouped by
// resource type: the output of `ingress-xds translate`. protojson
// deliberately varies its whitespace, so each resource is compacted and the
// whole document indented again to make the bytes stable.
func RenderJSON(res *Resources, problems []ir.Problem) ([]byte, error) {
	byType, err := JSONByType(res)
	if err != nil {
		return nil, err
	}
	doc := struct {
		Listeners []json.RawMessage `json:"listeners"`
		Routes    []json.RawMessage `json:"routes"`
		Clusters  []json.RawMessage `json:"clusters"`
		Endpoints []json.RawMessage `json:"endpoints"`
		Secrets   []json.RawMessage `json:"secrets"`
		// Only with virtual host discovery (vhds.go, vhds_delta.go).
		VirtualHosts []json.RawMessage `json:"virtualHosts,omitempty"`
		// Only with virtual host discovery for delta Envoys (vhds_delta.go).
		DeltaRoutes []json.RawMessage `json:"deltaRoutes,omitempty"`
		// Only with route scopes (scopes.go).
		ScopedRoutes []json.RawMessage `json:"scopedRoutes,omitempty"`
		Problems     []ir.Problem      `json:"problems"`
	}{byType["listeners"], byType["routes"], byType["clusters"], byType["endpoints"], byType["secrets"], byType["virtualHosts"], byType["deltaRoutes"], byType["scopedRoutes"], problems}
	if doc.Problems == nil {
		doc.Problems = []ir.Problem{}
	}
	return IndentJSON(doc)
}

// IndentJSON marshals v with two-space indentation and a final newline.
func IndentJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func marshalAll[T proto.Message](msgs []T) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	for _, m := range msgs {
		m, err := Expand(m)
		if err != nil {
			return nil, err
		}
		b, err := protojson.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("marshalling %T: %w", m, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			return nil, err
		}
		out = append(out, compact.Bytes())
	}
	return out, nil
}
