package sim

import (
	"math"
	"slices"
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
		sortFloats(xs)
	}
	return xs[rank(len(xs), p)]
}

// sortFloats sorts as sort.Float64s does. A run's gaps are hundreds of
// thousands of floats in stretches of one value (every sequence in a step
// has the same gap): when the stretches are 8 long or more on average it
// sorts them, not the floats.
func sortFloats(xs []float64) {
	if len(xs) < 64 {
		sort.Float64s(xs)
		return
	}
	rs := make([]GapCount, 0, len(xs)/8)
	for i, x := range xs {
		if n := len(rs); n > 0 && x == xs[i-1] {
			rs[n-1].N++
			continue
		}
		if len(rs) == cap(rs) { // stretches too short: sort the floats
			sort.Float64s(xs)
			return
		}
		rs = append(rs, GapCount{Gap: x, N: 1})
	}
	sortCounts(rs)
	at := 0
	for _, r := range rs {
		for range r.N {
			xs[at] = r.Gap
			at++
		}
	}
}

// sortCounts sorts counted values by value, NaNs first as sort.Float64s
// puts them: a radix sort on the bits, which needs no comparisons (a
// comparison sort through a function is slow in the browser's wasm).
func sortCounts(rs []GapCount) {
	if len(rs) < 2 {
		return
	}
	type keyed struct {
		key uint64
		GapCount
	}
	src, dst := make([]keyed, len(rs)), make([]keyed, len(rs))
	for i, r := range rs {
		// Keys that order as the floats do: flip every bit of a negative,
		// the sign bit of a positive; a NaN gets 0, below -Inf's key.
		b := math.Float64bits(r.Gap)
		switch {
		case r.Gap != r.Gap:
			b = 0
		case b>>63 == 1:
			b = ^b
		default:
			b |= 1 << 63
		}
		src[i] = keyed{b, r}
	}
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		clear(count[:])
		for _, x := range src {
			count[byte(x.key>>shift)]++
		}
		if count[byte(src[0].key>>shift)] == len(src) {
			continue // one digit for all: the pass would change nothing
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, x := range src {
			d := byte(x.key >> shift)
			dst[count[d]] = x
			count[d]++
		}
		src, dst = dst, src
	}
	for i, x := range src {
		rs[i] = x.GapCount
	}
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
func Values(rs []Result, m Metric) []float64 { return valuesInto(nil, rs, m) }

// valuesInto is Values written over dst (grown if short).
func valuesInto(dst []float64, rs []Result, m Metric) []float64 {
	out := slices.Grow(dst[:0], len(rs))
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
func Summarize(rs []Result) Summary { return summarize(rs, true) }

// summarize is Summarize, with the ITL figures from the token times only when withITL.
func summarize(rs []Result, withITL bool) Summary {
	s := Summary{Counts: Count(rs)}
	ttft, tpot, e2e := Values(rs, TTFT), Values(rs, TPOT), Values(rs, E2E)
	s.TTFTP50, s.TTFTP90, s.TTFTP99 = Percentiles3(ttft)
	s.TPOTP50, s.TPOTP90, s.TPOTP99 = Percentiles3(tpot)
	s.E2EP50, s.E2EP90, s.E2EP99 = Percentiles3(e2e)
	if withITL {
		if itl := ITLs(rs); len(itl) > 0 {
			s.ITLP50, s.ITLP90, s.ITLP99 = Percentile(itl, 50), Percentile(itl, 90), Percentile(itl, 99)
			s.ITLMax = itl[len(itl)-1]
		}
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

// percentile is Percentile(xs, p) found by selection; it reorders xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	for _, x := range xs {
		if x != x {
			return Percentile(xs, p)
		}
	}
	return selectRank(xs, 0, rank(len(xs), p))
}

// Percentiles3 is Percentile's P50, P90 and P99 of xs, found by selection
// (linear time, where sorting is not) unless xs holds a NaN, whose place in
// the order only sorting defines. It reorders xs.
func Percentiles3(xs []float64) (p50, p90, p99 float64) {
	for _, x := range xs {
		if x != x {
			return Percentile(xs, 50), Percentile(xs, 90), Percentile(xs, 99)
		}
	}
	if len(xs) == 0 {
		return 0, 0, 0
	}
	k50, k90, k99 := rank(len(xs), 50), rank(len(xs), 90), rank(len(xs), 99)
	p50 = selectRank(xs, 0, k50)
	p90 = selectRank(xs, k50, k90)
	p99 = selectRank(xs, k90, k99)
	return p50, p90, p99
}

// selectRank puts the k-th smallest of xs[lo:] at xs[k], with no larger one
// before it and no smaller one after (Hoare's quickselect), and returns it.
// Everything in xs[:lo] must be no larger than anything in xs[lo:].
// Should the pivots keep failing it sorts what is left, so it is never
// worse than sorting.
func selectRank(xs []float64, lo, k int) float64 {
	hi := len(xs) - 1
	for rounds := 0; lo < hi; rounds++ {
		if rounds == 64 {
			slices.Sort(xs[lo : hi+1])
			return xs[k]
		}
		pivot := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
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
