package annotations

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The value formats of ingress-nginx's proxy keys, read as its parsers and
// its nginx template read them: a value ingress-nginx would not apply is an
// error here too, so the key is reported and not applied.

// maxSeconds bounds a timeout (about 31 years, longer than any exchange):
// Envoy refuses a duration near the range of time.Duration.
const maxSeconds = 1_000_000_000

// parseSeconds reads a positive whole number of seconds, unitless, as
// ingress-nginx's timeouts are written ("60", never "60s": its parser is
// strconv.Atoi and its template appends the unit). Zero is refused: nginx
// would time out at once, and Envoy reads a zero timeout as none at all.
func parseSeconds(s string) (time.Duration, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a whole number of seconds (such as 60)")
	}
	if n < 1 || n > maxSeconds {
		return 0, fmt.Errorf("%d seconds is out of range (1 to %d)", n, maxSeconds)
	}
	return time.Duration(n) * time.Second, nil
}

// parseCount reads a whole number, at least 1.
func parseCount(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("not a whole number of at least 1")
	}
	return int(n), nil
}

// parseNonNegative reads a whole number, 0 or more.
func parseNonNegative(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a whole number of 0 or more")
	}
	return int(n), nil
}

// nginx's sizes: bytes, or k, m (and for offsets g) in either case. Its
// template emits a body size only when it matches the offset form, and
// ingress-nginx's e2e tests refuse "1b" for a buffer size.
var (
	nginxSize   = regexp.MustCompile(`^(\d+)([kKmM]?)$`)
	nginxOffset = regexp.MustCompile(`^(\d+)([kKmMgG]?)$`)
)

// parseOffset reads an nginx offset ("8m", "1g", "0") as bytes.
func parseOffset(s string) (int64, error) { return parseBytes(nginxOffset, s, "such as 8k, 1m or 1g") }

// parseSize reads an nginx size ("8k", "1m") as bytes.
func parseSize(s string) (int64, error) { return parseBytes(nginxSize, s, "such as 8k or 1m") }

func parseBytes(form *regexp.Regexp, s, example string) (int64, error) {
	m := form.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("not an nginx size (%s)", example)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size out of range")
	}
	return n << shift, nil
}

// parseOnOff reads "on" or "off", exactly, with spaces around ignored (as
// ingress-nginx's option validator reads them).
func parseOnOff(s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf(`not "on" or "off"`)
}

// parseOneOf returns a parser of exactly one of values, spaces around
// ignored.
func parseOneOf(values ...string) func(string) (string, error) {
	return func(s string) (string, error) {
		s = strings.TrimSpace(s)
		for _, v := range values {
			if s == v {
				return s, nil
			}
		}
		return "", fmt.Errorf("not one of %s", strings.Join(values, ", "))
	}
}

// nextUpstreamConditions are the words proxy-next-upstream takes: those of
// nginx's proxy_next_upstream that ingress-nginx's validator admits.
var nextUpstreamConditions = map[string]bool{
	"error": true, "timeout": true, "invalid_header": true, "non_idempotent": true, "off": true,
	"http_500": true, "http_502": true, "http_503": true, "http_504": true,
	"http_403": true, "http_404": true, "http_429": true,
}

// parseNextUpstream reads proxy-next-upstream's space-separated words, in
// their order, each once.
func parseNextUpstream(s string) ([]string, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return nil, fmt.Errorf("no condition")
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if !nextUpstreamConditions[w] {
			return nil, fmt.Errorf("%q is not a condition of proxy_next_upstream", w)
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out, nil
}
