package translate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// RenderJSON prints a Result as indented JSON grouped by resource type: the
// output of `ingress-xds translate` and the format of the golden files.
// protojson deliberately varies its whitespace, so each resource is compacted
// and the whole document indented again to make the bytes stable.
func RenderJSON(r *Result) ([]byte, error) {
	doc := struct {
		Listeners []json.RawMessage `json:"listeners"`
		Routes    []json.RawMessage `json:"routes"`
		Clusters  []json.RawMessage `json:"clusters"`
		Endpoints []json.RawMessage `json:"endpoints"`
		Secrets   []json.RawMessage `json:"secrets"`
		Problems  []Problem         `json:"problems"`
	}{Problems: r.Problems}
	var err error
	if doc.Listeners, err = marshalAll(r.Resources.Listeners); err != nil {
		return nil, err
	}
	if doc.Routes, err = marshalAll(r.Resources.Routes); err != nil {
		return nil, err
	}
	if doc.Clusters, err = marshalAll(r.Resources.Clusters); err != nil {
		return nil, err
	}
	if doc.Endpoints, err = marshalAll(r.Resources.Endpoints); err != nil {
		return nil, err
	}
	if doc.Secrets, err = marshalAll(RedactSecrets(r.Resources.Secrets)); err != nil {
		return nil, err
	}
	if doc.Problems == nil {
		doc.Problems = []Problem{}
	}
	raw, err := json.Marshal(doc)
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
