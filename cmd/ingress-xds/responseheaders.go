package main

import (
	"fmt"
	"regexp"
	"strings"
)

// responseHeaderName is ingress-nginx's check of the names it allows in
// global-allowed-response-headers (customheaders.ValidHeader).
var responseHeaderName = regexp.MustCompile(`^[a-zA-Z\d\-_]+$`)

// responseHeaderNames reads --global-allowed-response-headers: names
// separated by commas, spaces around them ignored.
func responseHeaderNames(list string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !responseHeaderName.MatchString(name) {
			return nil, fmt.Errorf("--global-allowed-response-headers: %q is not a header name (letters, digits, '-' and '_')", name)
		}
		out = append(out, name)
	}
	return out, nil
}

// must is v, for values whose error validate has already ruled out.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
