package pipeline

import (
	"log/slog"
	"time"

	"github.com/ingress-xds/ingress-xds/xds"
)

// buildMarks are the moments a full rebuild passed from one step to the
// next, logged with each publish so that start-up's first build can be
// taken apart (docs/benchmarks.md, "Issue 18: start-up", and the load
// command's breakdown read them).
type buildMarks struct {
	state      time.Time // the source's State was read
	translated time.Time // the translator returned
	publishing time.Time // problems reported; Publish called
}

// attr is the "steps" group of a publish's log line: reading the State,
// translating, reporting problems, and Publish's validation and assembly
// (from server). Nothing on the endpoint fast path.
func (m buildMarks) attr(start time.Time, server *xds.Server) slog.Attr {
	if m.state.IsZero() {
		return slog.Attr{}
	}
	validate, assemble := server.LastPublishSteps()
	return slog.Group("steps",
		"state", m.state.Sub(start).Round(time.Microsecond),
		"translate", m.translated.Sub(m.state).Round(time.Microsecond),
		"problems", m.publishing.Sub(m.translated).Round(time.Microsecond),
		"validate", validate.Round(time.Microsecond),
		"assemble", assemble.Round(time.Microsecond))
}
