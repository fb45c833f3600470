package ingress

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// literalRegex returns expr, built around path, without parsing and
// compiling it, when path is a literal (no RE2 operator, valid UTF-8): the
// expression is then one RE2 always accepts, and only its length can be
// wrong. ok is false for any other path, which the caller parses and
// compiles. In regex mode most paths are plain ones (a rewrite-target puts
// a host's every path in regex form), and compiling each was most of what
// an annotated Ingress allocated in a full translation (issue 14,
// docs/benchmarks.md).
func literalRegex(path, expr string) (out string, ok bool, err error) {
	if strings.ContainsAny(path, `\.+*?()|[]{}^$`) || !utf8.ValidString(path) {
		return "", false, nil
	}
	if len(expr) > ir.MaxRegexLength {
		return "", true, fmt.Errorf("the expression is over %d bytes", ir.MaxRegexLength)
	}
	return expr, true, nil
}
