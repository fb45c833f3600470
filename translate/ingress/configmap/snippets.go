package configmap

import (
	"fmt"
	"strconv"
	"strings"
)

// SnippetAnnotations is what becomes of an Ingress's snippet annotations
// (configuration-snippet, server-snippet) under the ConfigMap, as
// ingress-nginx decides it from allow-snippet-annotations and
// annotations-risk-level (its internal/ingress/controller/controller.go
// and annotations/parser/validators.go CheckAnnotationRisk).
type SnippetAnnotations int

const (
	// SnippetsRefused: annotations-risk-level is below Critical (High, its
	// default), so ingress-nginx rejects an Ingress carrying a snippet
	// annotation (a Critical one): the Ingress is refused.
	SnippetsRefused SnippetAnnotations = iota
	// SnippetsDropped: the risk level is Critical but
	// allow-snippet-annotations is false (its default): ingress-nginx
	// serves the Ingress without its snippets.
	SnippetsDropped
	// SnippetsTranslated: both allow them.
	SnippetsTranslated
)

// snippetSettings are the keys' values as read.
type snippetSettings struct {
	allow    bool
	critical bool
}

func allowSnippetAnnotations(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not a boolean: treated as false, ingress-nginx's default")
	}
	s.snippets.allow = on
	return nil
}

func annotationsRiskLevel(_ *Table, s *Settings, _, value string) error {
	if err := riskLevel(value); err != nil {
		return err
	}
	s.snippets.critical = strings.TrimSpace(value) == "Critical"
	return nil
}

// SnippetAnnotations says what becomes of the snippet annotations under
// this ConfigMap.
func (s *Settings) SnippetAnnotations() SnippetAnnotations {
	switch {
	case !s.snippets.critical:
		return SnippetsRefused
	case !s.snippets.allow:
		return SnippetsDropped
	}
	return SnippetsTranslated
}
