package ir

import (
	"strings"
)

// ConnectionLimit bounds the requests each client, by address, may have in
// flight at once, per Envoy: nginx's limit_conn, which counts a request
// from its preaccess phase until it ends (over HTTP/2 each stream). The
// count is the Zone's, shared by every route with the same Zone (nginx's
// zone is its Ingress's, shared by all the Ingress's locations); a request
// over Max is refused with Status.
type ConnectionLimit struct {
	// Max is how many requests a client may have in flight: at least 1.
	Max uint32 `json:"max"`
	// Zone names the count: the Ingress's namespace and name. It holds
	// no control characters and no comma.
	Zone string `json:"zone"`
	// Exempt are canonical CIDRs whose clients are never counted.
	Exempt []string `json:"exempt,omitempty"`
	// Status is the code a refused request gets, 400 to 599.
	Status uint32 `json:"status"`
}

func (c *ConnectionLimit) validate() error {
	if c.Max == 0 {
		return invalid("Max", ErrNoOp, "max 0: leave it nil for no limit")
	}
	if c.Zone == "" || strings.ContainsFunc(c.Zone, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ',' }) {
		return invalid("Zone", ErrBadName, "zone %q: empty, or with a control character or a comma", c.Zone)
	}
	if err := validCIDRs("Exempt", c.Exempt); err != nil {
		return err
	}
	if c.Status < 400 || c.Status > 599 {
		return invalid("Status", ErrOutOfRange, "status %d is not 400 to 599", c.Status)
	}
	return nil
}
