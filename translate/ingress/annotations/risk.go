package annotations

import "strings"

// Risk is an annotation's risk level in ingress-nginx's registry
// (annotations-risk.md), in order: the ConfigMap's annotations-risk-level
// rejects an Ingress carrying a key above it.
type Risk int

// The risk levels, lowest first.
const (
	RiskLow Risk = iota
	RiskMedium
	RiskHigh
	RiskCritical
)

var riskNames = [...]string{"Low", "Medium", "High", "Critical"}

func (r Risk) String() string {
	if r < RiskLow || r > RiskCritical {
		return "unknown"
	}
	return riskNames[r]
}

// ParseRisk reads a risk level's name in any case, as ingress-nginx's
// parser.StringRiskToRisk does; ok is false for another word, which
// ingress-nginx reads as Low.
func ParseRisk(s string) (r Risk, ok bool) {
	for i, name := range riskNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return Risk(i), true
		}
	}
	return RiskLow, false
}

// RiskAbove is the first of keys, in their order, that is one of
// ingress-nginx's keys (under its prefix, by any of its names) with a
// risk above max and below Critical, and that risk; "" when none is.
// Critical keys (the snippets) are the snippets' own to refuse.
func (r *Registry) RiskAbove(keys []string, max Risk) (string, Risk) {
	prefix := r.nginxPrefix + "/"
	for _, key := range keys {
		name, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		k, known := r.catalogue[name]
		if !known {
			continue
		}
		if risk, _ := ParseRisk(k.risk); risk > max && risk < RiskCritical {
			return key, risk
		}
	}
	return "", RiskLow
}
