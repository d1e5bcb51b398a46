package sim

import (
	"math"
	"sort"
)

// Percentile is the nearest-rank percentile the seeds use:
// sorted[round(p/100*(n-1))], rounding half to even as Python's round does.
// It sorts xs in place and returns 0 for an empty slice.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	if !sort.Float64sAreSorted(xs) {
		sort.Float64s(xs)
	}
	return xs[rank(len(xs), p)]
}

func rank(n int, p float64) int {
	k := int(math.RoundToEven(p / 100 * float64(n-1)))
	return max(0, min(n-1, k))
}

// Metric selects a per-request latency.
type Metric func(*Result) float64

// The per-request latencies.
var (
	TTFT Metric = (*Result).TTFT
	TPOT Metric = (*Result).TPOT
	E2E  Metric = (*Result).E2E
)

// Values collects m over the completed requests.
func Values(rs []Result, m Metric) []float64 {
	out := make([]float64, 0, len(rs))
	for i := range rs {
		if rs[i].Completed() {
			out = append(out, m(&rs[i]))
		}
	}
	return out
}

// ITLs collects every inter-token gap of every request with recorded token times (needs RecordTokens).
func ITLs(rs []Result) []float64 {
	var out []float64
	for i := range rs {
		ts := rs[i].TokenTimes
		for j := 1; j < len(ts); j++ {
			out = append(out, ts[j]-ts[j-1])
		}
	}
	return out
}

// Summary is the usual latency table of a run, in seconds and tokens/s.
type Summary struct {
	Counts
	TTFTP50, TTFTP90, TTFTP99 float64
	TPOTP50, TPOTP90, TPOTP99 float64
	ITLP50, ITLP90, ITLP99    float64 // zero unless token times were recorded
	ITLMax                    float64
	E2EP50, E2EP90, E2EP99    float64
	Throughput                float64 // output tokens/s over the span from first arrival to last token
	Span                      float64
}

// Summarize computes the latency table of a run.
func Summarize(rs []Result) Summary {
	s := Summary{Counts: Count(rs)}
	ttft, tpot, e2e := Values(rs, TTFT), Values(rs, TPOT), Values(rs, E2E)
	s.TTFTP50, s.TTFTP90, s.TTFTP99 = Percentile(ttft, 50), Percentile(ttft, 90), Percentile(ttft, 99)
	s.TPOTP50, s.TPOTP90, s.TPOTP99 = Percentile(tpot, 50), Percentile(tpot, 90), Percentile(tpot, 99)
	s.E2EP50, s.E2EP90, s.E2EP99 = Percentile(e2e, 50), Percentile(e2e, 90), Percentile(e2e, 99)
	if itl := ITLs(rs); len(itl) > 0 {
		s.ITLP50, s.ITLP90, s.ITLP99 = Percentile(itl, 50), Percentile(itl, 90), Percentile(itl, 99)
		s.ITLMax = itl[len(itl)-1]
	}
	first, last, tokens := math.Inf(1), 0.0, 0
	for i := range rs {
		first = math.Min(first, rs[i].Arrival)
		if rs[i].Generated > 0 {
			last = math.Max(last, rs[i].Finish)
			tokens += rs[i].Generated
		}
	}
	if last > first {
		s.Span = last - first
		s.Throughput = float64(tokens) / s.Span
	}
	return s
}

// SLO is a latency objective; a zero field is not checked.
type SLO struct {
	TTFT float64 `json:"ttft"`
	TPOT float64 `json:"tpot"`
}

// Met reports whether r completed within the objective.
func (o SLO) Met(r *Result) bool {
	if !r.Completed() {
		return false
	}
	return (o.TTFT == 0 || r.TTFT() <= o.TTFT) && (o.TPOT == 0 || r.TPOT() <= o.TPOT)
}

// Attainment is the fraction of all submitted requests that met the objective
// (a rejected or unfinished request counts as a miss).
func Attainment(rs []Result, o SLO) float64 {
	if len(rs) == 0 {
		return 0
	}
	n := 0
	for i := range rs {
		if o.Met(&rs[i]) {
			n++
		}
	}
	return float64(n) / float64(len(rs))
}
