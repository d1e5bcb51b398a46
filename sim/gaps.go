package sim

import (
	"cmp"
	"math"
	"slices"
)

// GapCount is N inter-token gaps of Gap seconds. Gaps repeat: every
// sequence decoding in a step has the same gap, so a run's gaps counted by
// value take a few bytes per step where token times take 8 per token.
type GapCount struct {
	Gap float64 `json:"gap"`
	N   int     `json:"n"`
}

// GapPercentiles returns the nearest-rank P50, P90 and P99 and the maximum
// of the gaps counted, exactly what Percentile gives over every gap written
// out; all zero when there are none. It reorders counts.
func GapPercentiles(counts []GapCount) (p50, p90, p99, top float64) {
	// Percentile sorts NaNs first: set them aside, before every number.
	total, nans, k := 0, 0, 0
	for _, c := range counts {
		if c.N <= 0 {
			continue
		}
		total += c.N
		if c.Gap != c.Gap {
			nans += c.N
			continue
		}
		if k == 0 || c.Gap > top {
			top = c.Gap
		}
		counts[k] = c
		k++
	}
	if total == 0 {
		return 0, 0, 0, 0
	}
	if k == 0 {
		top = math.NaN() // all NaN: the last of the sorted gaps is one
	}
	ranks := [3]int{rank(total, 50), rank(total, 90), rank(total, 99)} // ascending
	var ps [3]float64
	lo := 0 // the ranks among the NaNs, sorted first
	for lo < len(ranks) && ranks[lo] < nans {
		ps[lo] = math.NaN()
		lo++
	}
	for i := lo; i < len(ranks); i++ {
		ranks[i] -= nans
	}
	selectRanks(counts[:k], ranks[lo:], ps[lo:], 0)
	return ps[0], ps[1], ps[2], top
}

// selectRanks sets vs[i] to the value of rank rs[i] (from 0; rs ascending)
// in the multiset cs: a quickselect on the values, skipping by their
// counts, that partitions once for all the ranks and follows each side
// that holds some. It reorders cs and rs, and sorts a part whose pivots
// keep failing.
func selectRanks(cs []GapCount, rs []int, vs []float64, depth int) {
	if len(rs) == 0 {
		return
	}
	if depth == 64 {
		slices.SortFunc(cs, func(a, b GapCount) int { return cmp.Compare(a.Gap, b.Gap) })
		at, i := 0, 0 // at: the rank of cs[i]'s first gap
		for k, r := range rs {
			for at+cs[i].N <= r {
				at += cs[i].N
				i++
			}
			vs[k] = cs[i].Gap
		}
		return
	}
	pivot := cs[len(cs)/2].Gap
	lt, i, gt := 0, 0, len(cs)
	below, equal := 0, 0
	for i < gt {
		switch g := cs[i].Gap; {
		case g < pivot:
			below += cs[i].N
			cs[lt], cs[i] = cs[i], cs[lt]
			lt++
			i++
		case g > pivot:
			gt--
			cs[gt], cs[i] = cs[i], cs[gt]
		default:
			equal += cs[i].N
			i++
		}
	}
	l := 0
	for l < len(rs) && rs[l] < below {
		l++
	}
	m := l
	for m < len(rs) && rs[m] < below+equal {
		vs[m] = pivot
		m++
	}
	for k := m; k < len(rs); k++ {
		rs[k] -= below + equal
	}
	selectRanks(cs[:lt], rs[:l], vs[:l], depth+1)
	selectRanks(cs[gt:], rs[m:], vs[m:], depth+1)
}

// Summary is Summarize of the run's results, with the ITL figures taken from
// the gap counts when the run kept them (Config.CountGaps): the same
// figures as from every token's time.
func (o *Outcome) Summary() Summary {
	if o.Gaps == nil {
		return Summarize(o.Results)
	}
	return SummarizeGaps(o.Results, slices.Clone(o.Gaps))
}

// SummarizeGaps is Summarize with the ITL figures from gaps, every
// inter-token gap counted by value, instead of the results' token times
// (which need not be kept). It reorders gaps.
func SummarizeGaps(rs []Result, gaps []GapCount) Summary {
	s := summarize(rs, false)
	s.ITLP50, s.ITLP90, s.ITLP99, s.ITLMax = GapPercentiles(gaps)
	return s
}
