package sim

import (
	"cmp"
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
// out; all zero when there are none. It sorts counts in place.
func GapPercentiles(counts []GapCount) (p50, p90, p99, top float64) {
	total := 0
	for _, c := range counts {
		total += c.N
	}
	if total == 0 {
		return 0, 0, 0, 0
	}
	// cmp.Compare orders NaNs first, as sort.Float64s does.
	slices.SortFunc(counts, func(a, b GapCount) int { return cmp.Compare(a.Gap, b.Gap) })
	ranks := [3]int{rank(total, 50), rank(total, 90), rank(total, 99)}
	var at [3]float64
	seen, r := 0, 0
	for _, c := range counts {
		seen += c.N
		for r < 3 && ranks[r] < seen {
			at[r] = c.Gap
			r++
		}
		if c.N > 0 {
			top = c.Gap
		}
	}
	return at[0], at[1], at[2], top
}

// Summary is Summarize of the run's results, with the ITL figures taken from
// the gap counts when the run kept them (Config.CountGaps): the same
// figures as from every token's time.
func (o *Outcome) Summary() Summary {
	if o.Gaps == nil {
		return Summarize(o.Results)
	}
	s := summarize(o.Results, false)
	s.ITLP50, s.ITLP90, s.ITLP99, s.ITLMax = GapPercentiles(slices.Clone(o.Gaps))
	return s
}
