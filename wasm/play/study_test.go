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
		return StudyRow{Key: key, Args: []any{arg}, Run: func(*LectureCache) (map[string]float64, error) { return map[string]float64{"x": v}, nil }}
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

// TestStudyRowsRemembered: moving the routing chapter's staleness reruns
// only the stale row; the others come from memory with the figures a
// fresh table computes, and a table made again at the first settings runs
// nothing. (The page's table then answers a move in one row's time.)
func TestStudyRowsRemembered(t *testing.T) {
	c, s, first, got, want := movedTable(t, "route", "stale", 900)
	if got.Ran != 1 {
		t.Errorf("a staleness move ran %d rows, want 1 (the stale row)", got.Ran)
	}
	sameFigures(t, got, want)
	if last := want.Vals[len(want.Vals)-1]; last[0] == first.Vals[len(first.Vals)-1][0] && last[3] == first.Vals[len(first.Vals)-1][3] {
		t.Error("the stale row's figures did not change with the staleness: the test moves nothing")
	}
	again := first.Study.NewTable(s)
	again.Remember(c)
	if err := again.Fill(); err != nil || again.Ran != 0 {
		t.Errorf("the first settings again ran %d rows (err %v), want 0", again.Ran, err)
	}
}

// TestSpecOffSideRemembered: moving the speculation chapter's acceptance
// reruns only the runs with speculation; the runs without come from
// memory, and the table equals one computed afresh.
func TestSpecOffSideRemembered(t *testing.T) {
	c, _, first, got, want := movedTable(t, "spec", "spa", 0.8)
	if c.Hits != len(got.Rows) || got.Ran != len(got.Rows) {
		t.Errorf("an acceptance move: %d hits, %d rows run; want the %d runs without speculation from memory and every row run", c.Hits, got.Ran, len(got.Rows))
	}
	sameFigures(t, got, want)
	for i := range want.Vals {
		if want.Vals[i][1] == first.Vals[i][1] {
			t.Errorf("row %d: TPOT with speculation did not move with the acceptance: the test moves nothing", i)
		}
	}
}

// movedTable fills chapter id's table at its preset s with memory c
// (first: every row run, nothing from memory), moves knob key to v and fills
// the table again with that memory (got) and afresh (want).
func movedTable(t *testing.T, id, key string, v float64) (c *LectureCache, s State, first, got, want *StudyTable) {
	t.Helper()
	ch, _, _ := ChapterByID(id)
	s, _ = ParseQuery("chapter=" + id + "&preset=" + ch.Preset)
	c = &LectureCache{}
	first = ch.Study.NewTable(s)
	first.Remember(c)
	if err := first.Fill(); err != nil || first.Ran != len(first.Rows) || c.Hits != 0 {
		t.Fatalf("the first table: err %v, %d of %d rows run, %d from memory; want every row run, none from memory", err, first.Ran, len(first.Rows), c.Hits)
	}
	moved := s.Clone()
	moved.SetNum(key, v)
	got = ch.Study.NewTable(moved)
	got.Remember(c)
	if err := got.Fill(); err != nil {
		t.Fatal(err)
	}
	want = ch.Study.NewTable(moved)
	if err := want.Fill(); err != nil {
		t.Fatal(err)
	}
	return c, s, first, got, want
}

// sameFigures fails t where got, a table filled with memory, differs from
// want, one computed afresh.
func sameFigures(t *testing.T, got, want *StudyTable) {
	t.Helper()
	for i := range want.Vals {
		for j := range want.Vals[i] {
			if got.Vals[i][j] != want.Vals[i][j] {
				t.Errorf("row %d col %d: %g with memory, %g computed", i, j, got.Vals[i][j], want.Vals[i][j])
			}
		}
	}
}
