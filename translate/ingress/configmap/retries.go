package configmap

// retryNonIdempotent reads retry-non-idempotent: true gives every
// location's proxy_next_upstream non_idempotent, as nginx.tmpl's
// buildNextUpstream does (internal/ingress/controller/template/
// template.go), so POST, LOCK and PATCH are passed to the next server
// even once sent.
func retryNonIdempotent(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.RetryNonIdempotent, value) // connections.go
}
