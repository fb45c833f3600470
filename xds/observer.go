package xds

import "strconv"

// AnswerObserver is told of each answer an Envoy gives a response (an ACK
// or a NACK), and of each stream's end, for metrics kept outside the
// server (internal/nginxmetrics: ingress-nginx's reloads). Its methods
// are called on the stream's goroutine, in the order the answers come,
// and must return quickly.
type AnswerObserver interface {
	// Answered says that the Envoy on stream (unique among open
	// streams) accepted (ACK) or rejected (NACK) the response of typeURL
	// at version.
	Answered(stream, typeURL, version string, accepted bool)
	// StreamClosed says that stream ended: its answers no longer stand.
	StreamClosed(stream string)
}

// observeAnswer tells the Options' AnswerObserver, if any, of an ACK or
// a NACK.
func (s *Server) observeAnswer(key streamKey, typeURL string, ans answer, r sentResponse) {
	if s.opts.Answers == nil || ans == answerNone {
		return
	}
	s.opts.Answers.Answered(key.String(), typeURL, r.version, ans == answerACK)
}

// observeClosed tells the Options' AnswerObserver, if any, of a stream's
// end.
func (s *Server) observeClosed(key streamKey) {
	if s.opts.Answers != nil {
		s.opts.Answers.StreamClosed(key.String())
	}
}

// String names the stream for an AnswerObserver: its protocol and id.
func (k streamKey) String() string {
	return protocolOf(k) + "/" + strconv.FormatInt(k.id, 10)
}
