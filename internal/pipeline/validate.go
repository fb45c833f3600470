package pipeline

import (
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// maxViolationsLogged bounds the violations one log line lists: a broken
// contract at 10,000 Ingresses could be one per route.
const maxViolationsLogged = 20

// invalidIR counts and logs the full translations whose IR broke the
// IR's contract (translate.Translator.SetValidate): a bug of ours, found
// where it happens rather than as a strange Envoy configuration later.
// The resources are published all the same, and the process goes on.
type invalidIR struct {
	builds, violations prometheus.Counter
}

func newInvalidIR(reg *prometheus.Registry) *invalidIR {
	v := &invalidIR{
		builds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ingress_xds_invalid_ir_builds_total",
			Help: "Full translations whose IR broke the IR's contract (serve --validate-ir): a bug of ingress-xds, logged with what was wrong.",
		}),
		violations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ingress_xds_invalid_ir_violations_total",
			Help: "Violations of the IR's contract found in full translations (serve --validate-ir).",
		}),
	}
	reg.MustRegister(v.builds, v.violations)
	return v
}

// report logs and counts err, Validate's joined errors.
func (v *invalidIR) report(log *slog.Logger, err error) {
	all := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	}
	v.builds.Inc()
	v.violations.Add(float64(len(all)))
	shown := make([]string, 0, min(len(all), maxViolationsLogged))
	for _, e := range all[:min(len(all), maxViolationsLogged)] {
		shown = append(shown, e.Error())
	}
	log.Error("the translation broke the IR's contract (a bug of ingress-xds; publishing it all the same)",
		"violations", len(all), "shown", len(shown), "errors", strings.Join(shown, "; "))
}
