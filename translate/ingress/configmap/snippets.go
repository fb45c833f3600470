package configmap

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
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
	allow bool
	// level is annotations-risk-level, High (its default) while unset.
	level annotations.Risk
}

func allowSnippetAnnotations(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not a boolean: treated as false, ingress-nginx's default")
	}
	s.snippets.allow = on
	return nil
}

// annotationsRiskLevel reads annotations-risk-level in any case, as
// ingress-nginx's parser.StringRiskToRisk does.
func annotationsRiskLevel(_ *Table, s *Settings, _, value string) error {
	level, ok := annotations.ParseRisk(value)
	if !ok {
		return fmt.Errorf("not one of Low, Medium, High, Critical: treated as High, ingress-nginx's default (ingress-nginx reads another word as Low)")
	}
	s.snippets.level = level
	return nil
}

// RiskLevel is annotations-risk-level: an Ingress carrying one of
// ingress-nginx's keys of a higher risk is rejected by ingress-nginx.
func (s *Settings) RiskLevel() annotations.Risk { return s.snippets.level }

// SnippetAnnotations says what becomes of the snippet annotations under
// this ConfigMap.
func (s *Settings) SnippetAnnotations() SnippetAnnotations {
	switch {
	case s.snippets.level < annotations.RiskCritical:
		return SnippetsRefused
	case !s.snippets.allow:
		return SnippetsDropped
	}
	return SnippetsTranslated
}

// ConfigSnippets are the ConfigMap's location-snippet and server-snippet,
// translated (translate/ingress/snippet). Neither allow-snippet-annotations
// nor annotations-risk-level gates them, as in ingress-nginx.
type ConfigSnippets struct {
	// Location lands in every location the Ingresses' paths make, after
	// their configuration-snippet; LocationText is its text, translated
	// again with a configuration-snippet's (one rewrite phase).
	Location     *snippet.Result
	LocationText string
	// Server lands in every host's server, after its locations.
	Server *snippet.Result
	// Zones are the http-snippet's limit_req zones, by name.
	Zones map[string]snippet.Zone
	// CacheZones are the http-snippet's cache zones, by name.
	CacheZones map[string]bool
}

// configSnippet translates a ConfigMap snippet key. One that is not
// translated whole refuses every Ingress (unless the operator serves them
// without it), as a key that is not applied does.
func configSnippet(ctx snippet.Context) func(*Table, *Settings, string, string) error {
	return func(_ *Table, s *Settings, name, value string) error {
		if strings.TrimSpace(value) == "" {
			return nil
		}
		// The snippet keys come last, the http-snippet first among them
		// (Key.late): its zones, default-type and relative-redirects
		// are known.
		res, err := snippet.Translate(ctx, value, snippet.Options{Zones: s.Snippets.Zones, CacheZones: s.Snippets.CacheZones,
			DefaultType: s.DefaultType, RelativeRedirects: s.RelativeRedirects})
		var r *snippet.Refusal
		if errors.As(err, &r) {
			why := fmt.Sprintf("the ConfigMap's %s: %s, and a snippet is applied whole or not at all", name, r.Error())
			s.Defaults.RefuseAll(name, why)
			return fmt.Errorf("%s: every Ingress is refused while it is set", r.Error())
		}
		if ctx == snippet.ServerContext && len(res.ErrorPages) > 0 {
			// Every host's paths would decide whether it has an effect,
			// and refusing it there would refuse every Ingress of the
			// host: refused here, once.
			ep := res.ErrorPages[0]
			r := &snippet.Refusal{Directive: ep.Directive, Line: ep.Line, Why: "in the ConfigMap's server-snippet: not translated (the annotation's is)"}
			why := fmt.Sprintf("the ConfigMap's %s: %s, and a snippet is applied whole or not at all", name, r.Error())
			s.Defaults.RefuseAll(name, why)
			return fmt.Errorf("%s: every Ingress is refused while it is set", r.Error())
		}
		if ctx == snippet.ServerContext {
			s.Snippets.Server = res
		} else {
			s.Snippets.Location, s.Snippets.LocationText = res, value
		}
		return nil
	}
}

// defaultType reads default-type, nginx's default_type: the Content-Type
// of a snippet's return text. The keys come sorted, so the snippets are
// translated under it.
func defaultType(_ *Table, s *Settings, _, value string) error {
	value = strings.TrimSpace(value)
	if typ, _, _ := strings.Cut(value, ";"); !strings.Contains(typ, "/") || strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("not a media type: treated as unset (text/html)")
	}
	s.DefaultType = value
	return nil
}

// finishSnippets refuses the ConfigMap's location-snippet and
// server-snippet where they hold a directive of no effect only while
// nginx's realip module is off (real_ip_header) and the ConfigMap turns it
// on (snippet.Result.UnlessRealIP): known once every key is read.
func (s *Settings) finishSnippets() {
	if !s.RealIP {
		return
	}
	for _, k := range []struct {
		name string
		res  **snippet.Result
	}{{"location-snippet", &s.Snippets.Location}, {"server-snippet", &s.Snippets.Server}} {
		if *k.res == nil || len((*k.res).UnlessRealIP) == 0 {
			continue
		}
		d := (*k.res).UnlessRealIP[0]
		r := &snippet.Refusal{Directive: d.Directive, Line: d.Line, Why: RealIPRefusal}
		why := fmt.Sprintf("the ConfigMap's %s: %s, and a snippet is applied whole or not at all", k.name, r.Error())
		s.Defaults.RefuseAll(k.name, why)
		s.Issues = append(s.Issues, Issue{Key: k.name, Reason: "InvalidConfigMapValue", Message: fmt.Sprintf("%s: %s: every Ingress is refused while it is set", k.name, r.Error())})
		*k.res = nil
		if k.name == "location-snippet" {
			s.Snippets.LocationText = ""
		}
	}
}

// RealIPRefusal is why a snippet's real_ip_header (or real_ip_recursive)
// is refused where the realip module is on.
const RealIPRefusal = "the ConfigMap turns nginx's realip module on (use-forwarded-headers, enable-real-ip or use-proxy-protocol), where it would read the client's address from another header for this block alone: not translated"

// httpSnippet checks the ConfigMap's http-snippet: declarations only,
// else every Ingress is refused (snippet.TranslateHTTP).
func httpSnippet(_ *Table, s *Settings, name, value string) error {
	if strings.TrimSpace(value) == "" {
		return nil
	}
	h, err := snippet.TranslateHTTP(value)
	var r *snippet.Refusal
	if errors.As(err, &r) {
		s.Defaults.RefuseAll(name, fmt.Sprintf("the ConfigMap's %s: %s, and a snippet is applied whole or not at all", name, r.Error()))
		return fmt.Errorf("%s: every Ingress is refused while it is set", r.Error())
	}
	s.Snippets.Zones, s.Snippets.CacheZones = h.Zones, h.CacheZones
	return nil
}
