package ir

import (
	"fmt"
)

// validate checks a CORS policy: origins to match, or any; header values
// the renderer can send as they are.
func (c *CORS) validate() []error {
	var v violations
	if c.AnyOrigin == (len(c.AllowOrigins) > 0) {
		v.add("AllowOrigins", ErrConflict, "exactly one of any origin and a list of origins")
	}
	for i, o := range c.AllowOrigins {
		field := fmt.Sprintf("AllowOrigins[%d]", i)
		if err := o.validate(); err != nil {
			v.nest(field, "origin: ", ErrBadValue, err)
		} else if o.Exact == "" && o.Regex == "" {
			v.add(field, ErrConflict, "an origin that matches anything: say any origin")
		}
	}
	for _, h := range []struct{ field, name, value string }{
		{"AllowMethods", "allow methods", c.AllowMethods}, {"AllowHeaders", "allow headers", c.AllowHeaders}, {"ExposeHeaders", "expose headers", c.ExposeHeaders},
	} {
		if hasControl(h.value) {
			v.add(h.field, ErrBadHeader, "%s: control characters", h.name)
		}
	}
	return v.errors()
}
