// Package floats holds what sim's readers and fits share about float64s.
// Only packages under sim may import it.
package floats

// Compare orders a and b as slices.SortFunc wants, 0 when either is NaN
// (unlike cmp.Compare, which orders NaN first: a NaN here is never moved).
func Compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
