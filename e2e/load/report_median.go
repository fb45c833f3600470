package load

import "slices"

// medianRun is a run whose figures, those a report shows, are each the
// median of the runs' figures: a table column stands for runs of one
// kind, and one slow or lucky run on a shared machine should not be
// the figure. Each figure's median is taken on its own, so the figures
// of the result may come from different runs. A part some run lacks (a
// fan-out, a storm, the status) is left out.
func medianRun(rs []Result) Result {
	m := rs[0]
	m.Convergence.AllHostsSeconds = median(rs, func(r Result) float64 { return r.Convergence.AllHostsSeconds })
	m.IngressChange = medianSummary(rs, func(r Result) *Summary { return &r.IngressChange })
	m.EndpointChange = medianSummary(rs, func(r Result) *Summary { return &r.EndpointChange })
	m.Memory.PeakRSSBytes = medianInt(rs, func(r Result) int64 { return r.Memory.PeakRSSBytes })
	m.Memory.RSSAfterChangesBytes = medianInt(rs, func(r Result) int64 { return r.Memory.RSSAfterChangesBytes })
	m.CPU.ConvergenceSeconds = median(rs, func(r Result) float64 { return r.CPU.ConvergenceSeconds })
	m.CPU.TotalSeconds = median(rs, func(r Result) float64 { return r.CPU.TotalSeconds })

	m.Status = nil
	if everyRun(rs, func(r Result) bool { return r.Status != nil }) {
		st := *rs[0].Status
		st.AfterConvergenceSeconds = median(rs, func(r Result) float64 { return r.Status.AfterConvergenceSeconds })
		m.Status = &st
	}

	m.Fanout = nil
	if !everyRun(rs, func(r Result) bool { return r.Fanout != nil }) {
		return m
	}
	f := *rs[0].Fanout
	f.Arrival = medianSummary(rs, func(r Result) *Summary { return &r.Fanout.Arrival })
	f.WithinOneSecond = int(medianInt(rs, func(r Result) int64 { return int64(r.Fanout.WithinOneSecond) }))
	f.ConnectedRSSBytes = medianInt(rs, func(r Result) int64 { return r.Fanout.ConnectedRSSBytes })
	f.IngressArrival = nil
	if everyRun(rs, func(r Result) bool { return r.Fanout.IngressArrival != nil }) {
		a := medianSummary(rs, func(r Result) *Summary { return r.Fanout.IngressArrival })
		f.IngressArrival = &a
		f.IngressWithinOneSecond = int(medianInt(rs, func(r Result) int64 { return int64(r.Fanout.IngressWithinOneSecond) }))
	}
	f.Reconnect = nil
	if everyRun(rs, func(r Result) bool { return r.Fanout.Reconnect != nil }) {
		st := *rs[0].Fanout.Reconnect
		st.Seconds = median(rs, func(r Result) float64 { return r.Fanout.Reconnect.Seconds })
		st.PeakRSSBytes = medianInt(rs, func(r Result) int64 { return r.Fanout.Reconnect.PeakRSSBytes })
		f.Reconnect = &st
	}
	m.Fanout = &f
	return m
}

// medianSummary takes the median of each of a summary's percentiles; the
// samples are not pooled, since the runs' medians are what is reported.
func medianSummary(rs []Result, of func(Result) *Summary) Summary {
	s := *of(rs[0])
	s.Samples = nil
	pick := func(get func(*Summary) float64) float64 {
		return median(rs, func(r Result) float64 { return get(of(r)) })
	}
	s.Min = pick(func(s *Summary) float64 { return s.Min })
	s.P50 = pick(func(s *Summary) float64 { return s.P50 })
	s.P90 = pick(func(s *Summary) float64 { return s.P90 })
	s.P99 = pick(func(s *Summary) float64 { return s.P99 })
	s.Max = pick(func(s *Summary) float64 { return s.Max })
	s.Mean = pick(func(s *Summary) float64 { return s.Mean })
	return s
}

// median is the middle of the runs' values, or the mean of the two middle
// ones for an even count.
func median[T int64 | float64](rs []Result, value func(Result) T) float64 {
	vs := make([]T, len(rs))
	for i, r := range rs {
		vs[i] = value(r)
	}
	slices.Sort(vs)
	mid := len(vs) / 2
	if len(vs)%2 == 1 {
		return float64(vs[mid])
	}
	return (float64(vs[mid-1]) + float64(vs[mid])) / 2
}

func medianInt(rs []Result, value func(Result) int64) int64 {
	return int64(median(rs, value))
}

func everyRun(rs []Result, ok func(Result) bool) bool {
	return !slices.ContainsFunc(rs, func(r Result) bool { return !ok(r) })
}
