package annotations

import (
	"fmt"
	"strings"
)

// parseBool reads "true" or "false", in any case, with spaces around
// ignored.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean (true or false)")
}
