package ir

import (
	"fmt"
	"net/netip"
	"time"
)

// RateLimit bounds how fast each client, by address, may send requests to
// a route, per Envoy: nginx's limit_req with a burst and nodelay. Each
// client has a bucket per Rate; a request takes a token from each, and is
// refused with Status when one is empty.
type RateLimit struct {
	// Rates all apply.
	Rates []RequestRate `json:"rates"`
	// Exempt are canonical CIDRs whose clients are never limited.
	Exempt []string `json:"exempt,omitempty"`
	// Status is the code a refused request gets, 400 to 599.
	Status uint32 `json:"status"`
}

// RequestRate is a token bucket per client: it holds Bucket requests and
// refills continuously at Requests per Period.
type RequestRate struct {
	Requests uint32   `json:"requests"`
	Period   Duration `json:"period"`
	// Bucket is how many requests a client may send at once, from a full
	// bucket: at least 1.
	Bucket uint32 `json:"bucket"`
}

// minRatePeriod is the shortest period Envoy's token buckets take
// (fill_interval), and the renderer's default bucket's: a descriptor's
// must be a multiple of it.
const minRatePeriod = 50 * time.Millisecond

func (r *RateLimit) validate() error {
	if len(r.Rates) == 0 {
		return invalid("Rates", ErrNoOp, "no rate")
	}
	for i, q := range r.Rates {
		if q.Requests == 0 || q.Bucket == 0 {
			return invalid(fmt.Sprintf("Rates[%d]", i), ErrOutOfRange, "rate %d per %s with a bucket of %d: neither may be 0", q.Requests, time.Duration(q.Period), q.Bucket)
		}
		if time.Duration(q.Period) < minRatePeriod || time.Duration(q.Period)%minRatePeriod != 0 {
			return invalid(fmt.Sprintf("Rates[%d].Period", i), ErrOutOfRange, "period %s: not a multiple of %s", time.Duration(q.Period), minRatePeriod)
		}
	}
	if err := validCIDRs("Exempt", r.Exempt); err != nil {
		return err
	}
	if r.Status < 400 || r.Status > 599 {
		return invalid("Status", ErrOutOfRange, "status %d is not 400 to 599", r.Status)
	}
	return nil
}

// validCIDRs checks that each entry of the list at field is a canonical
// CIDR (its network address, no host bits), as the renderer's address
// matchers need.
func validCIDRs(field string, cidrs []string) error {
	for i, c := range cidrs {
		if pfx, err := netip.ParsePrefix(c); err != nil || pfx != pfx.Masked() {
			return invalid(fmt.Sprintf("%s[%d]", field, i), ErrBadAddress, "exempt: %q is not a canonical CIDR", c)
		}
	}
	return nil
}
