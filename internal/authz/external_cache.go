package authz

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cacheRule is one group of auth-cache-duration (nginx's
// proxy_cache_valid): the statuses it covers and for how long.
type cacheRule struct {
	codes []int // empty: nginx's 200, 301 and 302
	any   bool
	ttl   time.Duration
}

// parseCacheDurations reads auth-cache-duration: comma-separated groups
// of status codes (or "any") followed by one or more times ("1h 30m").
func parseCacheDurations(s string) ([]cacheRule, error) {
	var out []cacheRule
	for group := range strings.SplitSeq(s, ",") {
		fields := strings.Fields(group)
		if len(fields) == 0 {
			continue
		}
		var r cacheRule
		for _, f := range fields {
			if f == "any" && r.ttl == 0 {
				r.any = true
				continue
			}
			if code, err := strconv.Atoi(f); err == nil && len(f) == 3 {
				if r.ttl != 0 {
					return nil, fmt.Errorf("status code %s after the time in %q", f, group)
				}
				r.codes = append(r.codes, code)
				continue
			}
			d, err := parseNginxTime(f)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", group, err)
			}
			r.ttl += d
		}
		if r.ttl == 0 {
			return nil, fmt.Errorf("no time in %q", group)
		}
		out = append(out, r)
	}
	return out, nil
}

// parseNginxTime reads one nginx time ("30m", "1h", "500ms"; nginx's
// units: ms s m h d w M y).
func parseNginxTime(s string) (time.Duration, error) {
	units := []struct {
		suffix string
		unit   time.Duration
	}{
		{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour},
		{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}, {"M", 30 * 24 * time.Hour}, {"y", 365 * 24 * time.Hour},
	}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			break
		}
		return time.Duration(n) * u.unit, nil
	}
	return 0, fmt.Errorf("%q is not an nginx time", s)
}

// ttlFor is how long an answer of that status is kept: the first rule
// naming the status, else the first "any" rule, else not at all.
func ttlFor(rules []cacheRule, status int) time.Duration {
	for _, r := range rules {
		codes := r.codes
		if len(codes) == 0 && !r.any {
			codes = []int{200, 301, 302}
		}
		for _, c := range codes {
			if c == status {
				return r.ttl
			}
		}
	}
	for _, r := range rules {
		if r.any {
			return r.ttl
		}
	}
	return 0
}

// authCache keeps answers of auth services for auth-cache-key, bounded in
// entries: when full, expired entries go first, then any.
type authCache struct {
	mu      sync.Mutex
	max     int
	entries map[string]cacheEntry
}

type cacheEntry struct {
	answer  *authAnswer
	expires time.Time
}

func newAuthCache(max int) *authCache {
	return &authCache{max: max, entries: make(map[string]cacheEntry)}
}

func (c *authCache) get(key string, now time.Time) *authAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	if !now.Before(e.expires) {
		delete(c.entries, key)
		return nil
	}
	return e.answer
}

func (c *authCache) put(key string, a *authAnswer, expires time.Time, now time.Time) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = cacheEntry{answer: a, expires: expires}
}

func (c *authCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
