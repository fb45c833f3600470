package ir

import (
	"strconv"
	"strings"
)

// validHSTS reports whether s has the form of Listener.HSTS, the only one
// ingress-nginx writes: max-age=N[; includeSubDomains][; preload].
func validHSTS(s string) bool {
	rest, ok := strings.CutPrefix(s, "max-age=")
	if !ok {
		return false
	}
	age, rest, more := strings.Cut(rest, ";")
	if n, err := strconv.ParseUint(age, 10, 32); err != nil || strconv.FormatUint(n, 10) != age {
		return false
	}
	if !more {
		return true
	}
	rest = ";" + rest
	rest, _ = strings.CutPrefix(rest, "; includeSubDomains")
	rest, _ = strings.CutPrefix(rest, "; preload")
	return rest == ""
}
