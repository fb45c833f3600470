package xds

import "time"

// publishSteps is how long a Publish spent validating (and encoding and
// hashing) the resources it had not seen, and assembling the snapshot.
type publishSteps struct {
	validate, assemble time.Duration
}

// LastPublishSteps returns how long the last Publish took to validate the
// resources and to assemble the snapshot, for the pipeline's log line
// (start-up's first publish is the one that validates everything).
func (s *Server) LastPublishSteps() (validate, assemble time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steps.validate, s.steps.assemble
}
