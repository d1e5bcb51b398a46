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
	at := func(r int) float64 {
		if r < nans {
			return math.NaN()
		}
		return weightedSelect(counts[:k], r-nans)
	}
	return at(rank(total, 50)), at(rank(total, 90)), at(rank(total, 99)), top
}

// weightedSelect is the value of rank r (from 0) in the multiset cs, found
// by three-way partitioning (quickselect on the values, skipping by their
// counts); it reorders cs and falls back to sorting if pivots keep failing.
func weightedSelect(cs []GapCount, r int) float64 {
	for rounds := 0; ; rounds++ {
		if rounds == 64 {
			slices.SortFunc(cs, func(a, b GapCount) int { return cmp.Compare(a.Gap, b.Gap) })
			for _, c := range cs {
				if r < c.N {
					return c.Gap
				}
				r -= c.N
			}
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
		switch {
		case r < below:
			cs = cs[:lt]
		case r < below+equal:
			return pivot
		default:
			r -= below + equal
			cs = cs[gt:]
		}
	}
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
