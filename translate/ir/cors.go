package ir

import (
	"errors"
	"fmt"
)

// validate checks a CORS policy: origins to match, or any; header values
// the renderer can send as they are.
func (c *CORS) validate() []error {
	var errs []error
	if c.AnyOrigin == (len(c.AllowOrigins) > 0) {
		errs = append(errs, errors.New("exactly one of any origin and a list of origins"))
	}
	for _, o := range c.AllowOrigins {
		if err := o.validate(); err != nil {
			errs = append(errs, fmt.Errorf("origin: %w", err))
		} else if o.Exact == "" && o.Regex == "" {
			errs = append(errs, errors.New("an origin that matches anything: say any origin"))
		}
	}
	for _, h := range []Header{{Name: "allow methods", Value: c.AllowMethods}, {Name: "allow headers", Value: c.AllowHeaders}, {Name: "expose headers", Value: c.ExposeHeaders}} {
		if hasControl(h.Value) {
			errs = append(errs, fmt.Errorf("%s: control characters", h.Name))
		}
	}
	return errs
}
