package load

import (
	"reflect"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	oneToHundred := make([]time.Duration, 100)
	for i := range oneToHundred {
		oneToHundred[i] = time.Duration(i + 1)
	}
	oneToTwenty := make([]time.Duration, 20)
	for i := range oneToTwenty {
		oneToTwenty[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{oneToTwenty, 50, 10 * time.Millisecond},
		{oneToTwenty, 90, 18 * time.Millisecond},
		{oneToTwenty, 99, 20 * time.Millisecond},
		{oneToTwenty, 100, 20 * time.Millisecond},
		{oneToTwenty, 0, 1 * time.Millisecond},
		{oneToTwenty, 51, 11 * time.Millisecond},
		{[]time.Duration{7}, 50, 7},
		{[]time.Duration{7}, 99, 7},
		{[]time.Duration{1, 2, 3}, 50, 2},
		{[]time.Duration{1, 2, 3, 4}, 50, 2},
		{oneToTwenty, 55, 11 * time.Millisecond},
		{oneToTwenty, 35, 7 * time.Millisecond},
		{oneToHundred, 55, 55}, // 0.55*100 is 55.00000000000001 in floats
		{oneToHundred, 7, 7},
		{nil, 50, 0},
	} {
		if got := Percentile(tc.samples, tc.p); got != tc.want {
			t.Errorf("Percentile(%d samples, %v) = %v, want %v", len(tc.samples), tc.p, got, tc.want)
		}
	}
}

func TestSummarizeSortsAndAverages(t *testing.T) {
	ms := time.Millisecond
	samples := []time.Duration{30 * ms, 10 * ms, 50 * ms, 20 * ms, 40 * ms}
	got := Summarize(samples)
	want := Summary{Count: 5, Min: 10, P50: 30, P90: 50, P99: 50, Max: 50, Mean: 30, Samples: []float64{30, 10, 50, 20, 40}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if samples[0] != 30*ms {
		t.Error("Summarize sorted its caller's slice")
	}
	if !reflect.DeepEqual(Summarize(nil), Summary{}) {
		t.Error("Summarize(nil) is not the zero Summary")
	}
}
