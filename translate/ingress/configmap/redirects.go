package configmap

// relativeRedirects reads relative-redirects: true is nginx.tmpl's
// absolute_redirect off at the http level, so that every redirect nginx
// makes to a path keeps it as it is in the Location.
func relativeRedirects(_ *Table, s *Settings, _, value string) error {
	return switchKey(&s.RelativeRedirects, value) // connections.go
}
