package annotations

import "fmt"

// Defaults are annotation values that apply to every Ingress that does not
// set the annotation itself: the controller ConfigMap's settings, whose
// keys ingress-nginx's annotation parsers take as their defaults. They are
// parsed once, by the annotation's own parser, so a ConfigMap value means
// what the same annotation's value means.
type Defaults struct {
	reg    *Registry
	parsed map[*definition]any
	// invalid are the access controls whose default did not parse, and
	// what was wrong: an Ingress that does not set the key itself is
	// refused (fail closed), as it would be with that value as its own.
	invalid map[*definition]string
	// refuseAll are the ConfigMap's access controls ingress-xds does not
	// apply (block-cidrs and the like), by key, and why: every Ingress is
	// refused while one is set.
	refuseAll []refusalOf
}

type refusalOf struct{ key, why string }

// RefuseAll makes every Ingress refused for the ConfigMap key named, an
// access control not applied (why), unless the operator serves such
// Ingresses without it (--unsupported-annotations=ignore).
func (d *Defaults) RefuseAll(key, why string) {
	d.refuseAll = append(d.refuseAll, refusalOf{key: key, why: why})
}

// Refuses reports whether the default of the annotation name did not parse
// and refuses the Ingresses it would apply to.
func (d *Defaults) Refuses(name string) bool {
	def := d.reg.definitionNamed(name)
	_, bad := d.invalid[def]
	return def != nil && bad
}

// DefinedVerdict is the verdict of the annotation name (without prefix,
// or an alias), and whether the table defines it.
func (r *Registry) DefinedVerdict(name string) (Verdict, bool) {
	def := r.definitionNamed(name)
	if def == nil {
		return "", false
	}
	return def.verdictOrDefault(), true
}

// NewDefaults returns an empty set of defaults for r's keys.
func (r *Registry) NewDefaults() *Defaults {
	return &Defaults{reg: r, parsed: map[*definition]any{}, invalid: map[*definition]string{}}
}

// Set parses value as the default of the annotation name (without prefix).
// A value that does not parse is an error and is not set; for an access
// control it is remembered, and refuses the Ingresses it would apply to.
func (d *Defaults) Set(name, value string) error {
	def := d.reg.definitionNamed(name)
	if def == nil {
		return fmt.Errorf("no annotation %s", name)
	}
	parsed, err := def.parse(value)
	if err != nil {
		if d.reg.invalidRefuses(def) != "" {
			d.invalid[def] = err.Error()
		}
		return err
	}
	delete(d.invalid, def)
	d.parsed[def] = parsed
	return nil
}

// Len is how many defaults are set (valid or refusing).
func (d *Defaults) Len() int {
	if d == nil {
		return 0
	}
	return len(d.parsed) + len(d.invalid) + len(d.refuseAll)
}

func (r *Registry) definitionNamed(name string) *definition {
	for _, def := range r.defs {
		if def.name == name {
			return def
		}
		for _, a := range def.aliases {
			if a == name {
				return def
			}
		}
	}
	return nil
}

// ParseWith is Parse with defaults (nil: none): a key the Ingress does not
// set, or sets with a value that does not parse, takes the default, as
// ingress-nginx's parsers fall back to the ConfigMap's value. An access
// control whose default does not parse refuses an Ingress that does not
// set it validly itself.
func (r *Registry) ParseWith(annotations map[string]string, d *Defaults) (*Values, []Issue) {
	v, issues := r.Parse(annotations)
	if d.Len() == 0 {
		return v, issues
	}
	for def, parsed := range d.parsed {
		if _, set := v.parsed[def]; set {
			continue
		}
		if v.parsed == nil {
			v.parsed = map[*definition]any{}
		}
		v.parsed[def] = parsed
	}
	for _, def := range r.defs { // in table order: issues never depend on map order
		why, bad := d.invalid[def]
		if _, set := v.parsed[def]; !bad || set {
			continue
		}
		issues = append(issues, Issue{Key: "ConfigMap " + def.name, Reason: "InvalidConfigMap", Refusal: r.invalidRefuses(def),
			Message: fmt.Sprintf("the controller ConfigMap's %s does not parse (%s), and the Ingress does not set it", def.name, why)})
	}
	for _, ra := range d.refuseAll {
		issues = append(issues, Issue{Key: "the controller ConfigMap's " + ra.key, Reason: ReasonUnsupportedAccess, Refusal: ra.why,
			Message: "not applied by ingress-xds"})
	}
	return v, issues
}
