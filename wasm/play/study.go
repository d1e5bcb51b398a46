package play

import (
	"fmt"
	"math"
	"sort"
)

// A Study is the table of a chapter made of whole runs: each row is the
// chapter's experiment with one change (a variant), run on the engine
// (sim/course computes the chapters' rows); each column is a figure of
// that row. The page fills it a row at a time (a job a row), so a chapter
// of this kind needs no code of its own in the page: a new one is a
// Chapter value in its own file.
type Study struct {
	// Rows are the variants at s, in the table's order.
	Rows func(s State) []StudyRow
	// Cols are the figures of each run, in the table's order.
	Cols []StudyCol
	// Bar is the key of the column the figure draws, a bar per row.
	Bar string
	// Vals are the narrative's and the reveal's {names}, from the
	// complete table (and the reveal's right option as "answer").
	Vals func(s State, t *StudyTable) map[string]string
	// Answer is the prediction's right option at s, from the complete table.
	Answer func(s State, t *StudyTable) int
}

// StudyRow is one variant: its name (catalogue key and arguments), what
// computes its figures (by column key), and the setting a click on its
// row applies to the timeline ("" for none: a URL query, as the
// lecture's rows).
type StudyRow struct {
	Key  string
	Args []any
	// Run computes the row's figures; m (nil: none) keeps figures across
	// tables, for a row made of runs of which some did not change (see
	// LectureCache.Figures).
	Run  func(m *LectureCache) (map[string]float64, error)
	Pick string
	// Memo names the row's run, everything its figures depend on (say the
	// query of the experiment it runs): two rows of one Memo have the same
	// figures, and a table that remembers (StudyTable.Remember) runs only
	// the first. "" for a row never taken from memory.
	Memo string
}

// StudyCol is one figure of a row: its name (catalogue key "col.KEY") and
// its unit ("ms", "%", "x", "req/s", "tok/s", "tokens" or "").
type StudyCol struct {
	Key  string
	Unit string
}

// StudyTable is a study's table being filled: Vals[row][col], NaN until
// the row's run is done.
type StudyTable struct {
	Study *Study
	Rows  []StudyRow
	Vals  [][]float64
	Done  int // rows computed, in order
	Err   error
	// Ran is the rows actually run (not taken from memory).
	Ran  int
	memo *LectureCache
	gen  int // the session's files when made (an upload can change any run)
}

// NewTable is st's empty table at s.
func (st *Study) NewTable(s State) *StudyTable {
	t := &StudyTable{Study: st, Rows: st.Rows(s), gen: s.Sess.FilesGen()}
	t.Vals = make([][]float64, len(t.Rows))
	for i := range t.Vals {
		t.Vals[i] = make([]float64, len(st.Cols))
		for j := range t.Vals[i] {
			t.Vals[i][j] = math.NaN()
		}
	}
	return t
}

// Complete reports whether every row has its figures (or a row failed).
func (t *StudyTable) Complete() bool { return t.Err != nil || t.Done >= len(t.Rows) }

// Next computes the next row (from memory when it can).
func (t *StudyTable) Next() {
	if t.Known() > 0 || t.Complete() {
		return
	}
	v, err := t.Run(t.Done)
	t.Put(t.Done, v, err)
}

// Run computes row i's figures (with t's memory).
func (t *StudyTable) Run(i int) (map[string]float64, error) { return t.Rows[i].Run(t.memo) }

// Remember makes t keep each row's figures in c, and take from c those of
// a row run before (by its Memo): a slider that moves one row's setting
// (the routing chapter's staleness) then reruns that row alone.
func (t *StudyTable) Remember(c *LectureCache) { t.memo = c }

// memoKey is row i's key in memory ("": none).
func (t *StudyTable) memoKey(i int) string {
	if t.memo == nil || t.Rows[i].Memo == "" {
		return ""
	}
	return fmt.Sprintf("%d|%s", t.gen, t.Rows[i].Memo)
}

// Known puts the next rows whose figures memory holds and reports how many.
func (t *StudyTable) Known() int {
	n := 0
	for !t.Complete() {
		k := t.memoKey(t.Done)
		v, ok := t.memo.figures(k)
		if k == "" || !ok {
			break
		}
		t.memo.Hits++
		t.put(t.Done, v)
		n++
	}
	return n
}

// Put records row i's figures, or the error that ends the table; a row
// other than the next one (a run begun for a table since replaced) is
// ignored. (The page runs a row's Run on a goroutine of its own and puts
// its figures when it ends.)
func (t *StudyTable) Put(i int, v map[string]float64, err error) {
	if t.Complete() || i != t.Done {
		return
	}
	if err != nil {
		t.Err = err
		return
	}
	t.Ran++
	if k := t.memoKey(i); k != "" {
		t.memo.keepFigures(k, v)
	}
	t.put(i, v)
}

// put records row i's figures (the next row's).
func (t *StudyTable) put(i int, v map[string]float64) {
	for j, c := range t.Study.Cols {
		if x, ok := v[c.Key]; ok {
			t.Vals[i][j] = x
		}
	}
	t.Done++
}

// Over is t, still being filled, shown over last (the previous complete
// table): a row t has not computed yet keeps last's figures where last
// has the same variant (its name and arguments), else none (NaN). A
// slider's move so shows each new row as it comes without blanking the
// rest. It is complete when every row has figures from one or the other.
func (t *StudyTable) Over(last *StudyTable) *StudyTable {
	if t.Complete() || last == nil {
		return t
	}
	o := &StudyTable{Study: t.Study, Rows: t.Rows, Vals: make([][]float64, len(t.Vals)), Done: t.Done}
	copy(o.Vals, t.Vals[:t.Done])
	filled := t.Done
	for i := t.Done; i < len(t.Rows); i++ {
		o.Vals[i] = t.Vals[i]
		if i < len(last.Rows) && i < last.Done && sameVariant(t.Rows[i], last.Rows[i]) {
			o.Vals[i] = last.Vals[i]
			filled++
		}
	}
	if filled == len(t.Rows) {
		o.Done = filled
	}
	return o
}

// sameVariant reports whether two rows are one variant (name and arguments).
func sameVariant(a, b StudyRow) bool {
	return a.Key == b.Key && fmt.Sprint(a.Args...) == fmt.Sprint(b.Args...)
}

// Fill computes the whole table (natively: tests and the CLI's parity).
func (t *StudyTable) Fill() error {
	for !t.Complete() {
		t.Next()
	}
	return t.Err
}

// Col is column key's index (-1: none).
func (t *StudyTable) Col(key string) int {
	for j, c := range t.Study.Cols {
		if c.Key == key {
			return j
		}
	}
	return -1
}

// At is row i's figure in column key (NaN: none yet).
func (t *StudyTable) At(i int, key string) float64 {
	j := t.Col(key)
	if j < 0 || i < 0 || i >= len(t.Vals) {
		return math.NaN()
	}
	return t.Vals[i][j]
}

// Key is what the table depends on: the experiment (not the view), and
// the uploads a model or profile may come from.
func (st *Study) Key(s State) string {
	return fmt.Sprintf("%d|%s", s.Sess.FilesGen(), s.Experiment.Query())
}

// FormatStudy writes a figure in its column's unit, as the table shows it.
func FormatStudy(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case unit == "ms":
		return trimZeros(fmt.Sprintf("%.2f", v*1e3))
	case unit == "%":
		return fmt.Sprintf("%.1f", v*100)
	case unit == "x":
		return fmt.Sprintf("%.2f×", v)
	case unit == "tokens", unit == "":
		if v == math.Trunc(v) {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// addChapter adds a chapter declared in its own file (from its init, so
// that every chapter is in Chapters before anything reads it), in the
// course's order: after the lecture's, by Order.
func addChapter(ch Chapter) {
	Chapters = append(Chapters, ch)
	sort.SliceStable(Chapters, func(i, j int) bool { return Chapters[i].Order < Chapters[j].Order })
}
