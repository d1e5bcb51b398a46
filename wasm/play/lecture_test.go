package play

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lecture"
)

// chapterState is the state a chapter opens with.
func chapterState(t *testing.T, ch Chapter) State {
	t.Helper()
	s := DefaultState()
	p, ok := PresetByName(ch.Preset)
	if !ok {
		t.Fatalf("chapter %s names unknown preset %q", ch.ID, ch.Preset)
	}
	s.ApplyPreset(p)
	return s
}

// TestChapterOneIsTheLecture: the demo-1 chapter's table has the lecture's numbers.
func TestChapterOneIsTheLecture(t *testing.T) {
	ch, _, _ := ChapterByID("demo1")
	l, d, err := LectureOf(chapterState(t, ch))
	if err != nil {
		t.Fatal(err)
	}
	rows := l.Demo1(d.Batch, d.Context, d.Prompts)
	if math.Abs(rows[0].DecodeOnly*1e3-7.67) > 0.005 || math.Abs(rows[1].Mixed*1e3-14.90) > 0.011 || math.Abs(rows[3].DecodeSlowdown-7.23) > 0.005 {
		t.Errorf("demo 1: decode %.4f ms, +512 %.4f ms, 2048 slowdown %.3f; want 7.67, 14.90, 7.23", rows[0].DecodeOnly*1e3, rows[1].Mixed*1e3, rows[3].DecodeSlowdown)
	}
}

// TestChapterAnswersHold: each chapter's "right" option is what the
// simulation says at the chapter's own settings.
func TestChapterAnswersHold(t *testing.T) {
	for _, ch := range Chapters {
		s := chapterState(t, ch)
		tables := Tables{}
		if ch.Study != nil {
			tables.Study = ch.Study.NewTable(s)
			if err := tables.Study.Fill(); err != nil {
				t.Fatalf("%s: %v", ch.ID, err)
			}
		} else {
			s.SetNum("n", 1500)
			res, err := RunLecture(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			tables.Res = res
		}
		got, vals, err := Reveal(ch, s, tables, nil)
		if err != nil {
			t.Fatalf("%s: %v", ch.ID, err)
		}
		if got != ch.Answer {
			t.Errorf("%s: the simulation picks option %d (%v), the chapter says %d", ch.ID, got, vals, ch.Answer)
		}
		for _, m := range ch.Moves {
			if _, ok := ControlByKey(m); !ok {
				t.Errorf("%s moves unknown setting %q", ch.ID, m)
			}
		}
	}
}

// TestLectureCacheEqualsFresh: tables computed through the cache, as the
// chapters compute them while sliders move, equal tables computed afresh
// for the same settings, and the cache answers exactly the jobs whose
// inputs did not move.
func TestLectureCacheEqualsFresh(t *testing.T) {
	base := chapterState(t, Chapters[2]) // demo 3's settings
	base.SetNum("n", 400)
	steps := []struct {
		set      map[string]float64
		wantHits int // jobs the cache must answer after this change
	}{
		{nil, 0},
		// TPOT objective: demo 2 (7 rates), demo 4 (5 budgets) and the prefill-only goodput read none of it.
		{map[string]float64{"slotpot": 20}, 7 + 5 + 1},
		// TTFT objective: demo 2, demo 4 and the decode-only goodput (TPOT 20, seen just before) are answered.
		{map[string]float64{"slotpot": 20, "slottft": 150}, 7 + 5 + 1},
		// Demo 4's rate: only demo 4 recomputes (demo 3, its splits included, has the same inputs as before).
		{map[string]float64{"slotpot": 20, "slottft": 150, "rate": 30}, 7 + 3 + 2},
		// The workload: nothing is the same.
		{map[string]float64{"slotpot": 20, "slottft": 150, "rate": 30, "prompt": 384}, 0},
		// Back to the start: every job was seen.
		{nil, 7 + 5 + 3 + 2},
	}
	c := &LectureCache{}
	for i, st := range steps {
		s := base.Clone()
		for k, v := range st.set {
			s.SetNum(k, v)
		}
		before := c.Hits
		cached, err := RunLecture(s, c)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := RunLecture(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cached, fresh) {
			t.Errorf("step %d %v: the cached table differs from a fresh one:\ncached %+v\nfresh  %+v", i, st.set, cached, fresh)
		}
		if got := c.Hits - before; got != st.wantHits {
			t.Errorf("step %d %v: the cache answered %d jobs, want %d", i, st.set, got, st.wantHits)
		}
	}
}

// TestLectureCacheIsBounded: past its size the oldest results go (they
// are computed again), the newest stay.
func TestLectureCacheIsBounded(t *testing.T) {
	c := &LectureCache{}
	runs := 0
	job := func(i int) lecture.Job {
		var out float64
		return lecture.Job{Demo: 2, Key: lecture.JobKey{Kind: "test", Rate: float64(i)}, Out: &out,
			Run: func(*sim.Scratch) error { runs++; out = float64(i); return nil }}
	}
	for i := 0; i < maxCachedJobs+100; i++ {
		c.RunJob(lecture.Lecture{}, job(i))
	}
	if len(c.jobs.m) != maxCachedJobs || len(c.jobs.order) != maxCachedJobs {
		t.Fatalf("the cache holds %d results (%d in order), want at most %d", len(c.jobs.m), len(c.jobs.order), maxCachedJobs)
	}
	runs = 0
	newest, oldest := job(maxCachedJobs+99), job(0)
	if hit, _ := c.RunJob(lecture.Lecture{}, newest); !hit || runs != 0 || *newest.Out.(*float64) != float64(maxCachedJobs+99) {
		t.Errorf("the newest result was not kept (hit %v, runs %d)", hit, runs)
	}
	if hit, _ := c.RunJob(lecture.Lecture{}, oldest); hit || runs != 1 {
		t.Errorf("the oldest result was kept past the bound (hit %v, runs %d)", hit, runs)
	}
}

// TestLabCache: the lab's unchunked side does not read the budget, so a
// budget change reuses it; what the cache gives equals a fresh simulation;
// it keeps at most maxCachedLabs runs.
func TestLabCache(t *testing.T) {
	s := chapterState(t, Chapters[4])
	s.Lab.Duration, s.Lab.InjectAfter, s.Lab.LongInputLen = 12, 4, 8000
	c := &LectureCache{}
	u1, err := c.LabSide(s, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s2 := s.Clone()
	s2.SetNum("budget", 512)
	s2.View.T0 = 3 // the view is no input either
	u2, _ := c.LabSide(s2, nil, false)
	if u2 != u1 || c.Hits != 1 {
		t.Errorf("a budget change simulated the unchunked side again (same run %v, hits %d)", u2 == u1, c.Hits)
	}
	fresh, err := Simulate(labSide(s2, false))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*u2.Lab, *fresh.Lab) || !reflect.DeepEqual(u2.ITL, fresh.ITL) {
		t.Errorf("the cached unchunked side differs from a fresh one: %+v vs %+v", *u2.Lab, *fresh.Lab)
	}
	c2, _ := c.LabSide(s2, nil, true)
	c1, _ := c.LabSide(s, nil, true)
	if c1 == c2 || c1.Lab.WorstGap == c2.Lab.WorstGap {
		t.Errorf("budgets 2048 and 512 gave the same chunked run (worst gap %v)", c1.Lab.WorstGap)
	}
	if r := c.Run(labSide(s, true)); r != c1 {
		t.Errorf("the timeline's run for the chunked state is not the kept one")
	}
	for _, st := range []float64{8, 12, 20} {
		x := s.Clone()
		x.SetNum("streams", st)
		if _, err := c.LabSide(x, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	// The timeline's run, when it is the side asked for, is used and kept.
	x := s.Clone()
	x.SetNum("streams", 6)
	main, err := Simulate(labSide(x, true))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := c.LabSide(x, main, true); r != main || !c.Holds(main) {
		t.Errorf("the timeline's own run was simulated again (same %v) or not kept (%v)", r == main, c.Holds(main))
	}
	if len(c.labs) != maxCachedLabs || c.Holds(u1) {
		t.Errorf("the cache holds %d lab runs (the first still: %v), want at most %d, oldest gone", len(c.labs), c.Holds(u1), maxCachedLabs)
	}
}

// TestLabPrefillRowCountsTheStall: the lab chapter's "ITL P99 across its
// prefill" row counts the gap that ends just after the long prompt's first
// token, so unchunked (one stall every stream waits through) reads larger
// than chunked, as the chapter's narrative says; run.py's own during window
// ends a step before that stall's gap does.
func TestLabPrefillRowCountsTheStall(t *testing.T) {
	s, notes := ParseQuery("chapter=lab")
	if len(notes) > 0 {
		t.Fatal(notes)
	}
	lp, err := RunLabPair(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var row *LabRow
	for _, r := range lp.Rows() {
		if r.Key == "prefillgap" {
			row = &r
		}
	}
	if row == nil {
		t.Fatal("the lab table has no prefill row")
	}
	u, c := lp.Unchunked.Lab, lp.Chunked.Lab
	t.Logf("ITL P99 across the prefill: unchunked %.2f ms, chunked %.2f ms (run.py's itl_during_p99: %.2f, %.2f ms)",
		row.Unchunked*1e3, row.Chunked*1e3, u.ITLDuringP99*1e3, c.ITLDuringP99*1e3)
	if !(row.Unchunked > 5*row.Chunked) {
		t.Errorf("unchunked %.2f ms is not well above chunked %.2f ms: the stall is not counted", row.Unchunked*1e3, row.Chunked*1e3)
	}
	if math.Abs(row.Unchunked-u.WorstGap) > 1e-9 {
		t.Errorf("unchunked %.2f ms, want the stall, the run's worst gap %.2f ms", row.Unchunked*1e3, u.WorstGap*1e3)
	}
	if row.Chunked > c.WorstGap+1e-9 || row.Chunked < c.ITLDuringP99-1e-9 {
		t.Errorf("chunked %.2f ms, want between run.py's during P99 %.2f and the worst gap %.2f ms", row.Chunked*1e3, c.ITLDuringP99*1e3, c.WorstGap*1e3)
	}
	// The window: a gap that began at or after the first token is not counted.
	first := lp.Unchunked.Inject + u.LongTTFT
	if _, worst, n, ok := lp.Unchunked.PrefillGaps(); !ok || n < s.Lab.ShortConcurrency || worst != row.Unchunked {
		t.Errorf("unchunked prefill gaps: %d gaps, largest %.2f ms, ok %v (first token at %.4f s)", n, worst*1e3, ok, first)
	}
	// The narrative carries both figures, in each language.
	for _, lang := range Langs() {
		for _, k := range []string{"{pu}", "{pc}"} {
			if !strings.Contains(T(lang, "ch.lab.narrative"), k) {
				t.Errorf("the %s lab narrative does not name %s", lang, k)
			}
		}
		if !strings.Contains(T(lang, "def.prefillgap"), "itl_during_p99") {
			t.Errorf("the %s definition does not say how it differs from run.py's itl_during_p99", lang)
		}
	}
}

// TestChapterTermsAppearInTheirTexts: each term a chapter defines appears
// in the chapter's own texts in every language (so the page can define it
// where it first appears), and has a definition there.
func TestChapterTermsAppearInTheirTexts(t *testing.T) {
	for _, ch := range Chapters {
		for _, lang := range Langs() {
			var text string
			for _, part := range []string{"question", "fixed", "moves", "narrative"} {
				text += T(lang, "ch."+ch.ID+"."+part) + "\n"
			}
			for _, k := range ch.Terms {
				name, def := T(lang, "term."+k), T(lang, "def."+k)
				if name == "term."+k || def == "def."+k {
					t.Errorf("%s: term %s has no name or definition in %s", ch.ID, k, lang)
					continue
				}
				if !strings.Contains(FoldCase(text), FoldCase(name)) {
					t.Errorf("%s (%s): the texts never say %q (term %s)", ch.ID, lang, name, k)
				}
			}
		}
	}
}

// TestEveryChapterSaysWhatToLookAt: each chapter has a sentence pointing
// at the canvas, in every language.
func TestEveryChapterSaysWhatToLookAt(t *testing.T) {
	for _, ch := range Chapters {
		for _, lang := range Langs() {
			if k := "ch." + ch.ID + ".look"; catalogues[lang][k] == "" {
				t.Errorf("%s: no %s", lang, k)
			}
		}
	}
}
