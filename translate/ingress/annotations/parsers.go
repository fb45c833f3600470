package annotations

import (
	"fmt"
	"strings"
)

// parseBool reads "true" or "false", in any case, with spaces around
// ignored.
func parseBool(s string) (any, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, fmt.Errorf("not a boolean (true or false)")
}
