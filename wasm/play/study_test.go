package play

import (
	"math"
	"testing"
)

// A table being filled shows its new rows over the last complete table:
// a row not computed yet keeps the last figures of the same variant, and
// has none where the variant is new.
func TestStudyTableOverTheLast(t *testing.T) {
	st := &Study{Cols: []StudyCol{{Key: "x"}}}
	row := func(key string, arg int, v float64) StudyRow {
		return StudyRow{Key: key, Args: []any{arg}, Run: func() (map[string]float64, error) { return map[string]float64{"x": v}, nil }}
	}
	table := func(rows ...StudyRow) *StudyTable {
		tb := &StudyTable{Study: st, Rows: rows, Vals: make([][]float64, len(rows))}
		for i := range tb.Vals {
			tb.Vals[i] = []float64{math.NaN()}
		}
		return tb
	}
	last := table(row("a", 1, 10), row("b", 2, 20), row("c", 3, 30))
	if err := last.Fill(); err != nil {
		t.Fatal(err)
	}
	next := table(row("a", 1, 11), row("b", 2, 21), row("c", 4, 31))
	next.Next()
	o := next.Over(last)
	got := []float64{o.At(0, "x"), o.At(1, "x"), o.At(2, "x")}
	if got[0] != 11 || got[1] != 20 || !math.IsNaN(got[2]) {
		t.Errorf("over the last: %v, want [11 20 NaN]", got)
	}
	if o.Complete() {
		t.Error("a table with a row of no figures is complete")
	}
	// Every row has figures from one or the other: complete, for the narrative.
	same := table(row("a", 1, 11), row("b", 2, 21), row("c", 3, 31))
	same.Next()
	if o := same.Over(last); !o.Complete() || o.At(2, "x") != 30 {
		t.Errorf("over a table of the same variants: complete %v, row 3 %v", o.Complete(), o.At(2, "x"))
	}
	if same.Done != 1 || !math.IsNaN(same.At(1, "x")) {
		t.Error("Over changed the table being filled")
	}
	if next.Fill(); next.Over(last) != next {
		t.Error("a complete table is not shown as it is")
	}
}
