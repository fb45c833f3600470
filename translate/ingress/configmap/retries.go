package configmap

import (
	"fmt"
	"strconv"
	"strings"
)

// retryNonIdempotent reads retry-non-idempotent: true gives every
// location's proxy_next_upstream non_idempotent, as nginx.tmpl's
// buildNextUpstream does (internal/ingress/controller/template/
// template.go), so POST, LOCK and PATCH are passed to the next server
// even once sent.
func retryNonIdempotent(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (false)")
	}
	s.RetryNonIdempotent = on
	return nil
}
