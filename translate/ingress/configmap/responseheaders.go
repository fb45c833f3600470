package configmap

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// responseHeaderName is a name custom-headers may set (ingress-nginx's
// customheaders parser's).
var responseHeaderName = regexp.MustCompile(`^[a-zA-Z\d\-_]+$`)

// allowedResponseHeaders reads global-allowed-response-headers.
func allowedResponseHeaders(_ *Table, s *Settings, _, value string) error {
	var bad []string
	s.AllowedResponseHeaders = nil
	for _, name := range strings.Split(value, ",") {
		switch name = strings.TrimSpace(name); {
		case name == "":
		case !responseHeaderName.MatchString(name):
			bad = append(bad, strconv.Quote(name))
		default:
			s.AllowedResponseHeaders = append(s.AllowedResponseHeaders, name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: not header names, left out (the others are allowed)", strings.Join(bad, ", "))
	}
	return nil
}
