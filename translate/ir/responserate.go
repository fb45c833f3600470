package ir

// ResponseRate slows each response of a route to the client: nginx's
// limit_rate, per request (each response on its own, however many a
// client has at once), whoever the client is.
type ResponseRate struct {
	// KiBPerSecond is the pace, in kibibytes (1,024 bytes) per second, as
	// nginx's "k": at least 1.
	KiBPerSecond uint64 `json:"kibPerSecond"`
	// AfterKiB is how many kibibytes of each response go at full speed
	// first (nginx's limit_rate_after); 0: none.
	AfterKiB uint64 `json:"afterKiB,omitempty"`
}

func (r *ResponseRate) validate() error {
	if r.KiBPerSecond == 0 {
		return invalid("KiBPerSecond", ErrNoOp, "0 KiB/s: leave it nil for no limit")
	}
	return nil
}
