package togateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Objects lists the objects made: Gateways, ReferenceGrants, then
// HTTPRoutes, each by namespace and name.
func (r *Result) Objects() []any {
	var out []any
	for _, g := range r.Gateways {
		out = append(out, g)
	}
	for _, g := range r.ReferenceGrants {
		out = append(out, g)
	}
	for _, h := range r.HTTPRoutes {
		out = append(out, h)
	}
	return out
}

// YAML is the objects as one stream of YAML documents, for kubectl
// apply: without status or the empty fields the API server fills in.
func (r *Result) YAML() ([]byte, error) {
	var b bytes.Buffer
	for i, obj := range r.Objects() {
		doc, err := objectYAML(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
	}
	return b.Bytes(), nil
}

// Files are the objects one YAML file each, by file name
// (<kind>-<namespace>-<name>.yaml, the kind in lower case), for a
// directory to review and apply.
func (r *Result) Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, obj := range r.Objects() {
		doc, err := objectYAML(obj)
		if err != nil {
			return nil, err
		}
		o := obj.(interface {
			GetNamespace() string
			GetName() string
		})
		kind := strings.ToLower(fmt.Sprintf("%T", obj)[strings.LastIndex(fmt.Sprintf("%T", obj), ".")+1:])
		out[fmt.Sprintf("%s-%s-%s.yaml", kind, o.GetNamespace(), o.GetName())] = doc
	}
	return out, nil
}

// objectYAML writes one object without its status and its null
// creationTimestamp, which a manifest does not carry.
func objectYAML(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", obj, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding %T: %w", obj, err)
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("writing %T as YAML: %w", obj, err)
	}
	return out, nil
}
