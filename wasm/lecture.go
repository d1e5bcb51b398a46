//go:build js && wasm

package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	lect "servelab/sim/lecture"
	"servelab/wasm/play"
)

// lecture is the lecture mode's state: the open chapter and its table,
// computed by sim's demo jobs a few per frame so the page never freezes.
type lecture struct {
	ch    play.Chapter
	index int
	key   string // play.LectureKey of the settings the table is for
	lec   lect.Lecture
	res   *lect.Interference // the table being filled (complete when done)
	last  *lect.Interference // the last complete table, shown while res fills
	jobs  []lect.Job
	// filled are the rows of res computed so far (demo 2's or 4's, demo
	// 3's single instances: their jobs' Outs), shown over last as they come.
	filled []any
	split  bool // demo 3's split jobs were queued
	lab    *play.LabPair
	study  *play.StudyTable // a study chapter's table being filled (complete when done)
	lastS  *play.StudyTable // the last complete one, shown while study fills
	labU   *play.SimRun     // the lab's unchunked run, made a frame before the chunked one
	over   *play.Overlay    // the lab's unchunked gaps, for the canvas
	err    string
	t0     time.Time
	// tookMs is how long the last recomputation took, from the change to the full table.
	tookMs float64
	done   bool
	gen    int // bumps when a table is complete
	// The predict question: the option picked (0: none yet), kept across
	// moves, and what the simulation says at the current settings (nil
	// until the table after the pick is complete).
	picked   int
	right    int
	revealed map[string]string
	// predicted is every chapter's prediction so far, by chapter ID: it
	// goes with the student from chapter to chapter and back.
	predicted map[string]int
	// cache keeps results across changes and chapters; took is how long
	// each kind of job last ran, so a frame starts only what fits in it.
	cache *play.LectureCache
	took  map[string]time.Duration
	// worked is the frame (when its work began) in which a job last
	// really ran: a frame starts one job at least, whatever its estimate.
	worked time.Time
	// shown: something of the table for the current settings is on the
	// page (a study's first new row, or the whole table); the timeline's
	// re-simulation then goes before the rest of the table.
	shown bool
	// row is the study row being run on a goroutine of its own (nil: none);
	// rowSync: a row is being run in the frame itself (its runs cannot yield).
	row     *studyRun
	rowSync bool
	app     *App
}

// studyRun is one study row run on a goroutine: its table and index, and
// once it ends (done) its figures or error.
type studyRun struct {
	t    *play.StudyTable
	i    int
	v    map[string]float64
	err  error
	done bool
}

// lectureFrame is the chapter's share of a frame: its jobs start while
// they fit in it (one at least), so the page still answers between frames.
const lectureFrame = 40 * time.Millisecond

// lectureView is what the chapter panel renders.
type lectureView struct {
	ch       play.Chapter
	index    int
	res      *lect.Interference
	partial  bool // res is the last table with some of the new rows
	lab      *play.LabPair
	study    *play.StudyTable
	done     bool
	err      string
	tookMs   float64
	picked   int
	right    int
	revealed map[string]string
}

func (l *lecture) view() *lectureView {
	res, partial := l.res, false
	if !l.done {
		res = l.last // the previous table stays up (marked) until the new one is complete
		if o := l.rowsOver(); o != nil {
			res, partial = o, true // with the new rows as they come
		}
	}
	st := l.study
	if !l.done {
		st = l.lastS
		if l.study != nil && l.study.Done > 0 {
			st = l.study.Over(l.lastS) // the new rows as they come
		}
	}
	return &lectureView{ch: l.ch, index: l.index, res: res, partial: partial, lab: l.lab, study: st, done: l.done, err: l.err, tookMs: l.tookMs,
		picked: l.picked, right: l.right, revealed: l.revealed}
}

// rowsOver is the last complete table with the rows of demo 2 or 4, or
// demo 3's single instances, computed so far for the new settings in
// place of its own (nil: none yet, or the two tables' rows are not the
// same rates or budgets).
func (l *lecture) rowsOver() *lect.Interference {
	if l.last == nil || l.res == nil || len(l.filled) == 0 {
		return nil
	}
	o := *l.last
	o.Config = l.res.Config
	o.Demo2, o.Demo4 = slices.Clone(o.Demo2), slices.Clone(o.Demo4)
	o.Demo3.SLO, o.Demo3.Attainment = l.res.Demo3.SLO, l.res.Demo3.Attainment
	for _, out := range l.filled {
		switch p := out.(type) {
		case *float64: // one of demo 3's single instances
			switch p {
			case &l.res.Demo3.Colocated:
				o.Demo3.Colocated = *p
			case &l.res.Demo3.Prefill:
				o.Demo3.Prefill = *p
			case &l.res.Demo3.Decode:
				o.Demo3.Decode = *p
			default:
				return nil
			}
		case *lect.Demo2Row:
			i := rowOf(l.res.Demo2, p)
			if i < 0 || i >= len(o.Demo2) || o.Demo2[i].Rate != p.Rate {
				return nil
			}
			o.Demo2[i] = *p
		case *lect.Demo4Row:
			i := rowOf(l.res.Demo4, p)
			if i < 0 || i >= len(o.Demo4) || o.Demo4[i].Policy != p.Policy || o.Demo4[i].Budget != p.Budget {
				return nil
			}
			o.Demo4[i] = *p
		}
	}
	return &o
}

// rowOf is the index of the row p points at in rows (-1: none).
func rowOf[T any](rows []T, p *T) int {
	for i := range rows {
		if &rows[i] == p {
			return i
		}
	}
	return -1
}

// hasTable reports whether the view has a table to show (a previous one
// while the next is computed).
func (l *lectureView) hasTable() bool {
	switch {
	case l.ch.Study != nil:
		return l.study != nil
	case l.ch.Demo == 0:
		return l.lab != nil
	}
	return l.res != nil
}

// owns reports whether key is one the chapter lets the student move
// (moving it keeps the chapter's preset and its description).
func (l *lecture) owns(key string) bool {
	for _, k := range l.ch.Moves {
		if k == key {
			return true
		}
	}
	return false
}

// settingsChanged restarts the table when a setting it depends on moved.
func (l *lecture) settingsChanged(s play.State) {
	key := play.LectureKey(s)
	if l.ch.Study != nil {
		key = l.ch.Study.Key(s)
	}
	if key == l.key {
		return
	}
	// The lab pair and the last table stay shown until their successors are complete.
	l.key, l.t0, l.done, l.err, l.split, l.labU, l.shown = key, time.Now(), false, "", false, nil, false
	l.right, l.revealed = 0, nil // the prediction stays; its reveal follows the new table
	l.jobs, l.filled = nil, nil
	if l.ch.Study != nil {
		if prev := l.study; prev != nil && !prev.Complete() {
			// A table replaced before it was complete: what was on the page
			// (its new rows over the last complete table) stays until the
			// new table's rows come, rather than going back to the older one.
			if o := prev.Over(l.lastS); o.Complete() {
				l.lastS = o
			}
		}
		// tick runs its rows, each on a goroutine that yields as it goes
		var t *play.StudyTable
		s.Pause = l.rowPause(func() *play.StudyTable { return t })
		t = l.ch.Study.NewTable(s)
		t.Remember(l.cache) // (the rows the move left as they were are not run again)
		l.study = t
		return
	}
	if l.ch.Demo == 0 {
		return // the lab: tick runs the pair
	}
	lec, d, err := play.LectureOf(s)
	if err != nil {
		l.err, l.done, l.res = err.Error(), true, nil
		return
	}
	res, jobs := lec.Interference(d)
	l.lec, l.res = lec, res
	for _, j := range jobs {
		if j.Demo == l.ch.Demo {
			l.jobs = append(l.jobs, j)
		}
	}
	if len(l.jobs) == 0 {
		l.finish() // demo 1 is computed already: show it with this render
	}
}

// pending reports whether the table is still being computed.
func (l *lecture) pending() bool { return !l.done }

// fits reports whether a job of kind may start in the frame that began at
// frame (by how long it last took); the first job of a frame always does.
func (l *lecture) fits(kind string, frame time.Time) bool {
	return !l.worked.Equal(frame) || time.Now().Add(l.took[kind]).Before(frame.Add(lectureFrame))
}

// run runs a job through the cache, noting how long a real run took.
func (l *lecture) run(j lect.Job, frame time.Time) error {
	t := time.Now()
	hit, err := l.cache.RunJob(l.lec, j)
	if !hit {
		l.took[j.Key.Kind], l.worked = time.Since(t), frame
	}
	return err
}

// tick runs the table's jobs that fit in the frame that began at frame
// (those the cache answers cost nothing); it reports whether the table
// changed (finished).
func (l *lecture) tick(s play.State, main *play.SimRun, frame time.Time) bool {
	if l.done {
		return false
	}
	if l.ch.Study != nil {
		return l.tickStudy()
	}
	if l.ch.Demo == 0 {
		return l.tickLab(s, main, frame)
	}
	added := false
	for len(l.jobs) > 0 && (l.cache.Has(l.lec, l.jobs[0]) || l.fits(l.jobs[0].Key.Kind, frame)) {
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		if err := l.run(j, frame); err != nil {
			l.err = err.Error()
			l.jobs = nil
			return l.finish()
		}
		if j.Demo == 2 || j.Demo == 4 || j.Demo == 3 && !l.split { // a row of the table: shown as it comes
			l.filled = append(l.filled, j.Out)
			added = true
			if !l.shown && len(l.jobs) > 0 {
				break // the move's first new row on the page now, the timeline next
			}
		}
		if len(l.jobs) == 0 && l.ch.Demo == 3 && !l.split {
			l.split = true
			l.jobs = l.lec.Demo3Splits(l.res)
		}
	}
	if len(l.jobs) == 0 {
		return l.finish()
	}
	return added
}

// tickLab makes the lab's two runs: each is a whole simulated minute, so
// a frame simulates what fits; a side the cache or the timeline already
// has (the unchunked side does not read the budget) costs nothing.
func (l *lecture) tickLab(s play.State, main *play.SimRun, frame time.Time) bool {
	for {
		chunked := l.labU != nil
		fresh := l.cache.LabCached(s, main, chunked) == nil
		if fresh && !l.fits("lab", frame) {
			return false
		}
		t := time.Now()
		r, err := l.cache.LabSide(s, main, chunked)
		if fresh {
			l.took["lab"], l.worked = time.Since(t), frame
		}
		if err != nil {
			l.err = err.Error()
			l.labU = nil
			return l.finish()
		}
		if !chunked {
			l.labU = r
			continue
		}
		l.lab = &play.LabPair{Unchunked: l.labU, Chunked: r}
		l.over = play.SimOverlay(l.labU, "unchunked")
		l.labU = nil
		return l.finish()
	}
}

// tickStudy puts the row whose run ended into the table and starts the
// next; it reports whether a row was added (each is shown as it comes).
// A row's runs go on a goroutine between frames and events (rowPause):
// one took 20-110 ms, 80-440 ms on a slow laptop, and the next move of a
// slider waited for it.
func (l *lecture) tickStudy() bool {
	t := l.study
	added := false
	if r := l.row; r != nil && r.done {
		l.row = nil
		if r.t == t {
			t.Put(r.i, r.v, r.err)
			added = true
		}
	}
	if t != nil && t.Known() > 0 {
		added = true
	}
	if t != nil && t.Ran == 0 && !t.Complete() {
		// The first row to run is the move's answer: run at once, in this
		// frame, with nothing in between (sliced, the frames between its
		// slices took a slow laptop's main thread as long again).
		l.rowSync = true
		v, err := runRow(t, t.Done)
		l.rowSync = false
		t.Put(t.Done, v, err)
		t.Known()
		added = true
	}
	if t == nil || !t.Complete() {
		if t != nil && (l.row == nil || l.row.t != t) {
			l.startRow(t)
		}
		return added
	}
	if t.Err != nil {
		l.err = t.Err.Error()
	}
	return l.finish()
}

// startRow runs t's next row on a goroutine; when it ends, its figures
// wait in l.row for the next tick, which comes at once (workNow).
func (l *lecture) startRow(t *play.StudyTable) {
	r := &studyRun{t: t, i: t.Done}
	l.row = r
	go func() {
		v, err := runRow(t, r.i)
		a := l.app
		a.postNow("a chapter's row", func() { r.v, r.err, r.done = v, err, true })
		a.workNow()
	}()
}

// runRow runs t's row i, a panic its error.
func runRow(t *play.StudyTable, i int) (v map[string]float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return t.Run(i)
}

// rowPause is the Pause of the runs of the table that table returns (a
// func: the table is made after its rows take their Pause): it yields to
// the browser (pauser), waits while the timeline has its turn (the first
// new row is on the page and the timeline's run is not yet drawn), and
// ends a run whose table was replaced (the slider moved on) or left.
func (l *lecture) rowPause(table func() *play.StudyTable) func() bool {
	p := pauser(func() bool { return l.app.lec != l || l.study != table() },
		func() bool { return l.shown && (l.app.timelineDue() || l.app.sched.restDue) })
	return func() bool { return !l.rowSync && p() } // (in the frame a run cannot yield, nor be stale)
}

func (l *lecture) finish() bool {
	l.done = true
	if l.err == "" {
		l.last = l.res
		if l.study != nil {
			l.lastS = l.study
		}
	}
	l.gen++
	l.tookMs = float64(time.Since(l.t0).Microseconds()) / 1e3
	return true
}

// openChapter enters lecture mode at chapter id ("" leaves it); with
// preset it also loads the chapter's settings.
func (a *App) openChapter(id string, preset bool) {
	if id == "" {
		a.lec = nil
		a.sched.urlDirty = true
		a.tl.dirty = true
		a.render()
		return
	}
	ch, i, ok := play.ChapterByID(id)
	if !ok {
		a.s.notes = []string{play.Tf(a.disp.lang, "msg.unknownchapter", id)}
		return
	}
	if preset || a.s.state.Preset == "" && play.QueryValue(a.pg.win.Get("location").Get("search").String(), "preset") == "" {
		a.applyPreset(ch.Preset)
	}
	next := &lecture{ch: ch, index: i, cache: &play.LectureCache{}, took: map[string]time.Duration{}, app: a}
	if a.lec != nil {
		next.cache, next.took = a.lec.cache, a.lec.took // the results stay good across chapters
		next.predicted = a.lec.predicted
	}
	if next.predicted == nil {
		next.predicted = map[string]int{}
	}
	next.picked = next.predicted[ch.ID]
	a.lec = next
	a.pn.chapter.snippet = ""
	a.s.needSim = true
	a.sched.urlDirty = true
}

// tickLecture advances the open chapter's table, before the timeline
// re-simulates: the table is what the student moved the slider for.
func (a *App) tickLecture(frame time.Time) {
	if a.lec == nil || a.s.run == nil && a.timelineDue() {
		return // nothing is drawn yet: the timeline comes first
	}
	if a.sched.restDue {
		return // a run landed and is not on the canvas yet: its frame first
	}
	if a.sched.paintWait {
		return // what the table just showed is painted first, in this frame
	}
	if a.sched.presenting {
		return // the canvas just drew: its picture reaches the screen first
	}
	defer func() {
		if r := recover(); r != nil {
			// The table ends with the error, so the timeline is not held back by it.
			l := a.lec
			l.err, l.jobs, l.labU = fmt.Sprint(r), nil, nil
			l.finish()
			a.fail("the chapter's table", r)
		}
	}()
	if a.s.needSim {
		a.lec.settingsChanged(a.s.state) // a change from the form, a preset, a language
	}
	main := a.s.run // the timeline's run, unless a change waits for its re-simulation
	if a.timelineDue() {
		main = nil
		if a.lec.shown {
			return // the new table has begun to show: the timeline's turn, then the rest
		}
	}
	if a.lec.tick(a.s.state, main, frame) {
		a.lec.shown = true
		if a.lec.ch.Layout == "lab" {
			a.tl.dirty = true // the lab's unchunked run is drawn on the canvas
		}
		if l := a.lec; l.done && l.picked > 0 && l.revealed == nil {
			a.reveal() // the prediction, set against the new table
		}
		a.trace("table")
		a.pn.chapter.render(a.pg, a.ui()) // only the chapter shows the table
		a.publish()
		a.waitPaint() // the table on screen before the timeline re-simulates
		// On the page's clock, for the benchmark: when the table was shown.
		a.pg.win.Set("servelabChapterShownMs", a.pg.win.Get("performance").Call("now"))
	}
}

// lectureBusy reports whether the timeline's re-simulation must wait: the
// chapter's table has nothing new on the page yet, or it took this frame.
func (a *App) lectureBusy(frameAt time.Time) bool {
	if a.lec == nil || a.s.run == nil {
		return false // nothing is drawn yet: the timeline comes first
	}
	return a.lec.pending() && !a.lec.shown || time.Since(frameAt) > lectureFrame/2
}

// answer records the student's prediction, once per chapter (a second
// click cannot change it), and reveals what happened.
func (a *App) answer(opt int) {
	l := a.lec
	if l == nil || l.picked > 0 || opt < 1 || opt > l.ch.Options {
		return
	}
	l.picked = opt
	l.predicted[l.ch.ID] = opt
	if l.done && l.err == "" {
		a.reveal()
	}
	a.render()
}

// reveal computes what the simulation says at the current settings, for the
// prediction to be set against.
func (a *App) reveal() {
	l := a.lec
	right, vals, err := play.Reveal(l.ch, a.s.state, play.Tables{Res: l.res, Lab: l.lab, Study: l.study}, l.cache)
	if err != nil {
		l.err = err.Error()
	}
	l.right, l.revealed = right, vals
}

// chapterOverlay is the lab chapter's unchunked run, drawn on the chunked
// run's clock and gap axis so the two stalls compare at one scale.
func (a *App) chapterOverlay() *play.Overlay {
	if a.lec == nil || a.s.state.Workload != "lab" {
		return nil
	}
	return a.lec.over
}

// holds reports whether the chapter keeps r (so it must not be recycled).
func (l *lecture) holds(r *play.SimRun) bool {
	return r != nil && (l.labU == r || l.lab != nil && (l.lab.Chunked == r || l.lab.Unchunked == r) || l.cache.Holds(r))
}

// stepChapter moves to the next (+1) or previous (-1) chapter; outside
// lecture mode it opens the first.
func (a *App) stepChapter(d int) {
	if a.lec == nil {
		a.openChapter(play.Chapters[0].ID, true)
		return
	}
	if i := a.lec.index + d; i >= 0 && i < len(play.Chapters) {
		a.openChapter(play.Chapters[i].ID, true)
	}
}

// selectMixedStep selects, on demo 1's timeline, the step that carries a
// prefill beside the most running decodes, so the step explanation shows
// interference in one step (the chapter's point) without a click.
func (a *App) selectMixedStep() {
	// The step that holds up the most decoding users (ties: the longest
	// prefill): demo 1's prompt among its whole batch, not a step of the
	// batch's own prompts being prefilled beside the first of them.
	best, bestDec, bestTok := -1, 0, 0
	its := a.s.run.Rows[0].Iters
	for k := range its {
		if it := &its[k]; it.Prefill > 0 && it.Decodes > 0 && (it.Decodes > bestDec || it.Decodes == bestDec && it.Prefill > bestTok) {
			best, bestDec, bestTok = k, it.Decodes, it.Prefill
		}
	}
	if best < 0 {
		return
	}
	a.tl.view.SelRow, a.tl.view.Sel = 0, best
	if it := &its[best]; it.Start < a.tl.view.T0 || it.End() > a.tl.view.T0+a.tl.view.Span {
		a.tl.view.T0 = math.Max(0, it.Start-a.tl.view.Span/3)
	}
}
