package load

import (
	"math"
	"slices"
	"time"
)

// Summary describes a set of latency samples, in milliseconds for JSON.
type Summary struct {
	Count int     `json:"count"`
	Min   float64 `json:"min_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
	// Samples are the samples in the order they were taken, so that a
	// slow tail can be told apart from a slow stretch (a GC cycle, a
	// resync) when two runs are compared.
	Samples []float64 `json:"samples_ms,omitempty"`
}

// Summarize computes the summary of samples; the zero Summary for none.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	var total time.Duration
	inOrder := make([]float64, len(samples))
	for i, d := range samples {
		total += d
		inOrder[i] = ms(d)
	}
	return Summary{
		Count:   len(sorted),
		Min:     ms(sorted[0]),
		P50:     ms(Percentile(sorted, 50)),
		P90:     ms(Percentile(sorted, 90)),
		P99:     ms(Percentile(sorted, 99)),
		Max:     ms(sorted[len(sorted)-1]),
		Mean:    ms(total / time.Duration(len(sorted))),
		Samples: inOrder,
	}
}

// Percentile returns the p-th percentile of sorted by the nearest-rank
// method: the smallest sample that at least p% of the samples do not
// exceed. With few samples it is an observed value, never an
// interpolation between two, so p90 of 20 samples is the 18th.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	n := len(sorted)
	// p*n before the division: for whole p that product is exact, so a
	// rank that should be whole (90% of 20) is not nudged up by rounding.
	rank := int(math.Ceil(p * float64(n) / 100))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
