package play

import (
	"fmt"
	"math"
	"strconv"

	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/lecture"
	"servelab/sim/scenario"
)

// Chapter is one chapter of the lecture mode, as data: its texts are the
// catalogue keys "ch.ID.*" (title, question, fixed, moves, narrative,
// predict, o1..oN, reveal), its table is demo Demo of lecture.Lecture (0: the
// lab's two runs), its figure is Layout.
type Chapter struct {
	ID      string   // demo1..demo4, lab: the URL's ?chapter=
	Demo    int      // which demo's jobs fill its table; 0 for the lab
	Preset  string   // the settings the chapter opens with
	Moves   []string // the settings the student moves (sliders in the chapter)
	Layout  string   // the figure: "step", "curves", "goodput", "budget", "lab"
	Options int      // the predict question's options (keys ch.ID.o1..)
	Answer  int      // the right option, 1-based, at the chapter's preset (a test checks it)
	// Terms are the glossary's terms the chapter's texts use: each is
	// defined (hover, tap, focus) where it first appears on the chapter's page.
	Terms []string
	// Study makes the chapter's table of whole runs (Layout "study"); nil
	// for the lecture's chapters, whose tables are its demos.
	Study *Study
	// Tasks end the chapter (texts ch.ID.task1..); see Task.
	Tasks []Task
	// Order places a chapter declared in its own file (addChapter) after
	// the lecture's (0).
	Order int
}

// Chapters are the lecture's four demos and the lab, in order.
var Chapters = []Chapter{
	{ID: "demo1", Demo: 1, Preset: "demo1", Moves: []string{"batch", "ctx", "effc", "ovh"}, Layout: "step", Options: 3, Answer: 2,
		Terms: []string{"prefill", "decode", "step", "batch"}, Tasks: []Task{taskDemo1}},
	{ID: "demo2", Demo: 2, Preset: "demo2", Moves: []string{"prompt", "output", "effc"}, Layout: "curves", Options: 2, Answer: 1,
		Terms: []string{"prefill", "decode", "p90", "tpot"}, Tasks: []Task{taskDemo2}},
	{ID: "demo3", Demo: 3, Preset: "demo3", Moves: []string{"slottft", "slotpot", "output"}, Layout: "goodput", Options: 3, Answer: 3,
		Terms: []string{"goodput", "slo", "ttft", "tpot"}, Tasks: []Task{taskDemo3}},
	{ID: "demo4", Demo: 4, Preset: "demo4", Moves: []string{"rate", "prompt"}, Layout: "budget", Options: 3, Answer: 3,
		Terms: []string{"prefill", "decode", "ttft", "tpot"}, Tasks: []Task{taskDemo4}},
	{ID: "lab", Demo: 0, Preset: "lab-chunked", Moves: []string{"streams", "long", "budget"}, Layout: "lab", Options: 3, Answer: 1,
		Terms: []string{"prefill", "worstgap"}, Tasks: []Task{taskLab}},
}

// FoldCase is s with ASCII letters in lower case and every other byte as
// it is (offsets into it are offsets into s): how a chapter's text is
// searched for its terms ("Goodput" is the term, "goodput" the text's word).
func FoldCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// ChapterByID finds a chapter.
func ChapterByID(id string) (Chapter, int, bool) {
	for i, c := range Chapters {
		if c.ID == id {
			return c, i, true
		}
	}
	return Chapter{}, -1, false
}

// LectureOf is the lecture's setup from the page's settings: the model,
// GPU and assumptions, the Poisson workload (requests, prompt, output,
// seed), demo 1's batch and context, demo 3's SLOs and demo 4's rate.
// `servelab demo interference` with the same flags computes the same tables.
func LectureOf(s State) (lecture.Lecture, lecture.Demos, error) {
	step, err := stepModel(s)
	if err != nil {
		return lecture.Lecture{}, lecture.Demos{}, err
	}
	l, d, err := lecture.Of(&s.Experiment, step)
	d.Rate4 = s.Rate
	return l, d, err
}

// LectureKey is what a chapter's table depends on: when it is unchanged,
// the table need not be recomputed (moving the view does not; an upload
// may replace the model of the same name).
func LectureKey(s State) string {
	x := &s.Experiment
	return fmt.Sprintf("%s|%s|%s|%d|%g|%g|%g|%b|%d|%d|%d|%d|%d|%v|%v|%g|%v|%d|%v", x.Model, x.GPU, x.Profile, s.Sess.FilesGen(),
		x.EffCompute, x.EffMem, x.Overhead, x.Typed, x.TP, x.Requests, x.Prompt, x.Output, x.Seed, x.Probe, x.SLO, x.Rate,
		x.Lab, x.Budget, x.ExcludeDecodes)
}

// RunLecture computes every demo for s, one job after another (the page's
// chapters run the same jobs a few per frame). With a cache, jobs whose
// inputs it has seen are not run again; nil runs every job.
func RunLecture(s State, c *LectureCache) (*lecture.Interference, error) {
	l, d, err := LectureOf(s)
	if err != nil {
		return nil, err
	}
	res, jobs := l.Interference(d)
	for _, j := range jobs {
		if _, err := c.RunJob(l, j); err != nil {
			return nil, err
		}
	}
	for _, j := range l.Demo3Splits(res) {
		if _, err := c.RunJob(l, j); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// LectureCache keeps the chapters' results so that moving a slider runs
// only the jobs whose inputs moved (demo 3's prefill-only goodput does not
// read the TPOT objective; demo 2's rows read no objective at all), and
// the lab's runs (its unchunked side does not read the chunk budget).
// It is bounded: past its size the oldest entries go.
type LectureCache struct {
	jobs kept[jobKey, any]
	labs []*SimRun   // oldest first
	keys []string    // labs[i]'s labKey
	Hits int         // jobs, lab sides and study rows answered from the cache (for tests and notes)
	mem  sim.Scratch // what the jobs, run one at a time, reuse
	// figs are study rows' and their runs' figures by memo key (see
	// StudyTable.Remember, Figures).
	figs kept[string, map[string]float64]
}

// kept is a map that keeps its newest entries: past its bound, the one
// entered first goes. (Every collection marks what a cache keeps.)
type kept[K comparable, V any] struct {
	m     map[K]V
	order []K // oldest first
}

// get is k's value, if kept.
func (b *kept[K, V]) get(k K) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

// put keeps v under k, and at most max entries.
func (b *kept[K, V]) put(k K, v V, max int) {
	if b.m == nil {
		b.m = map[K]V{}
	}
	if _, dup := b.m[k]; !dup {
		b.order = append(b.order, k)
	}
	b.m[k] = v
	for len(b.order) > max {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
}

// Sizes of the cache: a job's result is a row (its key, with the step
// model, under a kilobyte); a lab side is a whole simulated minute with its
// trace (about 8 MB at the lab's preset), and every collection marks what
// is kept: the shown pair and one more (a budget moved back) are enough.
const (
	maxCachedJobs = 512
	maxCachedFigs = 512
	maxCachedLabs = 3
)

// jobKey is everything a lecture job reads: its Lecture (the step model
// with every constant, the workload) and its own inputs.
type jobKey struct {
	L lecture.Lecture
	K lecture.JobKey
}

// RunJob fills j's slot from the cache when the same job ran before, else
// runs it and keeps its result; it reports whether the cache answered.
// A nil cache only runs the job; a failed job is not kept.
func (c *LectureCache) RunJob(l lecture.Lecture, j lecture.Job) (bool, error) {
	if c == nil {
		return false, j.Run(&sim.Scratch{})
	}
	if j.Key.Kind == "" {
		return false, j.Run(&c.mem)
	}
	k := jobKey{l, j.Key}
	if v, ok := c.jobs.get(k); ok && setSlot(j.Out, v) {
		c.Hits++
		return true, nil
	}
	if err := j.Run(&c.mem); err != nil {
		return false, err
	}
	v, ok := slotValue(j.Out)
	if !ok {
		return false, nil // a slot of a kind this cache does not know: not kept
	}
	c.jobs.put(k, v, maxCachedJobs)
	return false, nil
}

// figures is the figures kept under memo key k (a study row's or a run's).
func (c *LectureCache) figures(k string) (map[string]float64, bool) {
	if c == nil || k == "" {
		return nil, false
	}
	return c.figs.get(k)
}

// Figures is the figures kept under key, else f's, kept when f succeeds
// (a nil cache only calls f). key must name everything f reads, the
// session's files (FilesGen) included.
func (c *LectureCache) Figures(key string, f func() (map[string]float64, error)) (map[string]float64, error) {
	if v, ok := c.figures(key); ok {
		c.Hits++
		return v, nil
	}
	v, err := f()
	if err == nil {
		c.keepFigures(key, v)
	}
	return v, err
}

// keepFigures keeps figures under memo key k.
func (c *LectureCache) keepFigures(k string, v map[string]float64) {
	if c != nil {
		c.figs.put(k, v, maxCachedFigs)
	}
}

// Has reports whether the cache holds j's result (RunJob would not run it).
func (c *LectureCache) Has(l lecture.Lecture, j lecture.Job) bool {
	if c == nil || j.Key.Kind == "" {
		return false
	}
	_, ok := c.jobs.get(jobKey{l, j.Key})
	return ok
}

// slotValue is a copy of what a job's slot holds.
func slotValue(out any) (any, bool) {
	switch p := out.(type) {
	case *lecture.Demo2Row:
		return *p, true
	case *lecture.Demo4Row:
		return *p, true
	case *sim.Split:
		return *p, true
	case *float64:
		return *p, true
	}
	return nil, false
}

// setSlot writes a kept value into a job's slot.
func setSlot(out, v any) bool {
	switch p := out.(type) {
	case *lecture.Demo2Row:
		*p = v.(lecture.Demo2Row)
	case *lecture.Demo4Row:
		*p = v.(lecture.Demo4Row)
	case *sim.Split:
		*p = v.(sim.Split)
	case *float64:
		*p = v.(float64)
	default:
		return false
	}
	return true
}

// LabPair is the lab chapter's two runs: the same closed loop and long
// prompt, unchunked (prefill-first) and chunked at the state's budget.
type LabPair struct {
	Unchunked, Chunked *SimRun
}

// PrefillGaps are the inter-token gaps the streams waited through while
// the long prompt was prefilled: every gap open at some moment between its
// arrival and its first token (it ended after the injection and began
// before that first token), with their P99, their largest and how many. The gap that
// closes after the first token is counted: unchunked, the whole prompt is
// prefilled in one step and the streams' next tokens come one step after
// the long prompt's first, so run.py's during window (injection → first
// token, itl_during_p99) ends just before that stall's gap and leaves it
// out. ok is false when the run has no trace or the long prompt never got
// its first token.
func (r *SimRun) PrefillGaps() (p99, worst float64, n int, ok bool) {
	if r == nil || r.Lab == nil || r.Inject < 0 || r.Lab.LongTTFT <= 0 || r.Truncated || len(r.Rows) == 0 {
		return 0, 0, 0, false
	}
	first := r.Inject + r.Lab.LongTTFT
	var gaps []float64
	var last []float64 // each request's latest token, by ID (the lab's count up from 0)
	for _, row := range r.Rows {
		for i := range row.Iters {
			it := &row.Iters[i]
			end := it.End()
			for _, item := range it.Items {
				if !item.Emit || item.ID < 0 {
					continue
				}
				for item.ID >= len(last) {
					last = append(last, -1)
				}
				l := last[item.ID]
				last[item.ID] = end
				if l >= 0 && end > r.Inject && l < first {
					gaps = append(gaps, end-l)
					worst = math.Max(worst, end-l)
				}
			}
		}
	}
	if len(gaps) == 0 {
		return 0, 0, 0, false
	}
	return sim.Percentile(gaps, 99), worst, len(gaps), true
}

// LabRow is one row of the lab chapter's table: the catalogue key of its
// name ("term.KEY" with "def.KEY" when Term, else "lab.KEY") and each
// run's figure, in seconds or, when Ratio, a plain ratio (NaN: none).
type LabRow struct {
	Key                string
	Term, Ratio        bool
	Unchunked, Chunked float64
	Yours              float64 // the student's measured run (YourRun); NaN: none or not measured
}

// Rows are the lab chapter's table: run.py's worst gap, spike ratio and
// long TTFT, the quiet median, and the gaps across the long prompt's
// prefill (PrefillGaps, not run.py's during window: see there).
func (lp LabPair) Rows() []LabRow { return lp.RowsWith(nil) }

// RowsWith are Rows with the student's measured lab run beside the two
// simulations (its summary's figures as run.py wrote them; the gaps across
// the prefill need the simulation's steps, so a measured run has none).
func (lp LabPair) RowsWith(yours *lab.Summary) []LabRow {
	rows := lp.rows()
	for i := range rows {
		rows[i].Yours = math.NaN()
		if yours == nil {
			continue
		}
		switch rows[i].Key {
		case "worstgap":
			rows[i].Yours = yours.WorstGap
		case "spike":
			rows[i].Yours = yours.SpikeRatio
		case "longttft":
			rows[i].Yours = yours.LongTTFT
		case "quiet":
			rows[i].Yours = yours.ITLQuietP50
		}
	}
	return rows
}

func (lp LabPair) rows() []LabRow {
	a, b := lp.Unchunked.Lab, lp.Chunked.Lab
	prefill := func(r *SimRun) float64 {
		if p99, _, _, ok := r.PrefillGaps(); ok {
			return p99
		}
		return math.NaN()
	}
	return []LabRow{
		{Key: "worstgap", Term: true, Unchunked: a.WorstGap, Chunked: b.WorstGap},
		{Key: "spike", Term: true, Ratio: true, Unchunked: a.SpikeRatio, Chunked: b.SpikeRatio},
		{Key: "longttft", Term: true, Unchunked: a.LongTTFT, Chunked: b.LongTTFT},
		{Key: "quiet", Unchunked: a.ITLQuietP50, Chunked: b.ITLQuietP50},
		{Key: "prefillgap", Term: true, Unchunked: prefill(lp.Unchunked), Chunked: prefill(lp.Chunked)},
	}
}

// RunLabPair simulates both lab runs for s's lab knobs. A run already
// made for the same settings (the timeline's) may be passed as have; it
// is used instead of simulating that side again.
func RunLabPair(s State, have *SimRun) (LabPair, error) {
	u, err := RunLabSide(s, have, false)
	if err != nil {
		return LabPair{}, err
	}
	c, err := RunLabSide(s, have, true)
	if err != nil {
		return LabPair{}, err
	}
	return LabPair{u, c}, nil
}

// RunLabSide is one side of the pair: chunked at s's budget, or unchunked
// (the page runs one side a frame).
func RunLabSide(s State, have *SimRun, chunked bool) (*SimRun, error) {
	x := labSide(s, chunked)
	if have != nil && have.State.Query() == x.Query() {
		return have, nil
	}
	return Simulate(x)
}

// labSide is the state of one side of the lab pair.
func labSide(s State, chunked bool) State {
	x := s.Clone()
	x.Workload, x.Policy = scenario.Lab, scenario.PrefillFirst
	if chunked {
		x.Policy = scenario.Chunked
	} else {
		x.Budget, x.ExcludeDecodes = 0, false // unchunked runs with vLLM's default token budget
	}
	return x
}

// labKey is every setting a lab run's simulation reads: the state without
// the view (where the timeline looks, what is selected), the preset's name,
// and, for the unchunked side, the chunk settings it does not use; and
// the uploads so far (one may replace the model of the same name).
func labKey(x State) string {
	k := x.Clone()
	k.Preset, k.View = "", View{}
	if k.Policy != scenario.Chunked {
		k.Budget, k.ExcludeDecodes = 0, false
	}
	return k.Query() + "&files=" + strconv.Itoa(x.Sess.FilesGen())
}

// LabCached is the lab side for s that have or the cache already holds (nil if none).
func (c *LectureCache) LabCached(s State, have *SimRun, chunked bool) *SimRun {
	x := labSide(s, chunked)
	if have != nil && have.State.Query() == x.Query() {
		return have
	}
	if c == nil {
		return nil
	}
	k := labKey(x)
	for i, key := range c.keys {
		if key == k {
			return c.labs[i]
		}
	}
	return nil
}

// LabSide is RunLabSide through the cache: a side it holds (or have) is
// not simulated again; a new one (or have, when it is the side) is kept.
func (c *LectureCache) LabSide(s State, have *SimRun, chunked bool) (*SimRun, error) {
	if r := c.LabCached(s, have, chunked); r != nil {
		if c != nil && r != have {
			c.Hits++
		} else if c != nil && !c.Holds(r) {
			c.keep(r)
		}
		return r, nil
	}
	r, err := Simulate(labSide(s, chunked))
	if err == nil && c != nil {
		c.keep(r)
	}
	return r, err
}

// keep adds a lab run, dropping the oldest past the bound.
func (c *LectureCache) keep(r *SimRun) {
	c.labs, c.keys = append(c.labs, r), append(c.keys, labKey(r.State))
	if len(c.labs) > maxCachedLabs {
		c.labs, c.keys = c.labs[1:], c.keys[1:]
	}
}

// Run is a kept lab run made for exactly s (the timeline may show it
// instead of simulating it again), or nil.
func (c *LectureCache) Run(s State) *SimRun {
	if c == nil {
		return nil
	}
	q, k := s.Query(), labKey(s)
	for i, r := range c.labs {
		if c.keys[i] == k && r.State.Query() == q {
			return r
		}
	}
	return nil
}

// Holds reports whether the cache keeps r (it must not be recycled).
func (c *LectureCache) Holds(r *SimRun) bool {
	if c == nil || r == nil {
		return false
	}
	for _, x := range c.labs {
		if x == r {
			return true
		}
	}
	return false
}

// Reveal is what the chapter's predict question asks about, computed for
// the student's settings: the option that is right (1-based) and the
// numbers that say so (for the "ch.ID.reveal" text). The lab's runs come
// through c when it holds them (nil: all simulated).
func Reveal(ch Chapter, s State, t Tables, c *LectureCache) (int, map[string]string, error) {
	if st := ch.Study; st != nil {
		if t.Study == nil || !t.Study.Complete() {
			return 0, nil, fmt.Errorf("the table is not complete")
		}
		if t.Study.Err != nil {
			return 0, nil, t.Study.Err
		}
		return st.Answer(s, t.Study), st.Vals(s, t.Study), nil
	}
	res := t.Res
	l, d, err := LectureOf(s)
	if err != nil {
		return 0, nil, err
	}
	switch ch.ID {
	case "demo1":
		// Beyond the table: a 4096-token prompt in the same step.
		r := l.Demo1(d.Batch, d.Context, []int{4096})[0]
		pick := 2
		switch {
		case r.DecodeSlowdown < 10:
			pick = 1
		case r.DecodeSlowdown > 30:
			pick = 3
		}
		return pick, map[string]string{"mixed": ms(r.Mixed), "slow": fmt.Sprintf("%.1f", r.DecodeSlowdown)}, nil
	case "demo2":
		// Beyond the table: 80 req/s.
		r, err := l.Demo2Rate(80)
		if err != nil {
			return 0, nil, err
		}
		pick := 1
		if r.DecodeTPOT90 > 2*minTPOT(res) {
			pick = 2
		}
		return pick, map[string]string{"dec": ms(r.DecodeTPOT90), "col": ms(r.ColocatedTPOT90)}, nil
	case "demo3":
		// 1 prefill + 2 decode, by the lecture's arithmetic.
		g := res.Demo3
		s12, s11, s21 := sim.SplitArithmetic(1, 2, g.Prefill, g.Decode), sim.SplitArithmetic(1, 1, g.Prefill, g.Decode), sim.SplitArithmetic(2, 1, g.Prefill, g.Decode)
		pick := 2
		switch {
		case s12.PerGPU > s21.PerGPU:
			pick = 1
		case s12.PerGPU < s11.PerGPU:
			pick = 3
		}
		return pick, map[string]string{"pg12": f1(s12.PerGPU), "pg11": f1(s11.PerGPU), "pg21": f1(s21.PerGPU), "pre": f1(g.Prefill), "dec": f1(g.Decode)}, nil
	case "demo4":
		// Beyond the table: budget 128.
		r, err := l.Demo4Row(d.Rate4, 128)
		if err != nil {
			return 0, nil, err
		}
		base := math.Inf(1)
		for _, x := range res.Demo4 {
			if x.Budget > 0 {
				base = math.Min(base, x.TTFTP90)
			}
		}
		pick := 1
		switch {
		case r.TTFTP90 > 10*base:
			pick = 3
		case r.TTFTP90 < 1.05*base:
			pick = 2
		}
		return pick, map[string]string{"ttft": ms(r.TTFTP90), "tpot": ms(r.TPOTP90)}, nil
	case "lab":
		// The same lab with a 512-token budget instead of the state's.
		s512 := s.Clone()
		s512.Budget = 512
		p, err := c.LabSide(s512, nil, true)
		if err != nil {
			return 0, nil, err
		}
		q, err := c.LabSide(s, nil, true)
		if err != nil {
			return 0, nil, err
		}
		w512, w := p.Lab.WorstGap, q.Lab.WorstGap
		pick := 2
		switch {
		case w512 < 0.9*w:
			pick = 1
		case w512 > 1.1*w:
			pick = 3
		}
		return pick, map[string]string{"w512": ms(w512), "w": ms(w), "budget": strconv.Itoa(s.EffectiveBudget())}, nil
	}
	return 0, nil, fmt.Errorf("chapter %q has no question", ch.ID)
}

func minTPOT(res *lecture.Interference) float64 {
	m := math.Inf(1)
	for _, r := range res.Demo2 {
		m = math.Min(m, r.DecodeTPOT90)
	}
	return m
}

// ms is seconds as milliseconds with two decimals.
func ms(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v*1e3)
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// DistServe's published figures (Zhong et al., OSDI 2024, figure 1: OPT-13B
// on A100, prompt 512 / output 64), as the lecture quotes them, req/s.
var DistServe = struct {
	Colocated, PrefillOnly, DecodeOnly, Total2P1D, PerGPU2P1D, Advantage float64
}{1.6, 5.6, 10, 10, 3.3, 2.1}

// SimOverlay lays a simulated run's inter-token gaps over another run's
// timeline (the lab chapter: unchunked over chunked, on one gap axis).
func SimOverlay(r *SimRun, name string) *Overlay {
	o := &Overlay{Name: name, Kind: "sim", Lab: r.Lab}
	o.Gaps = make([]sim.Gap, len(r.ITL))
	for i, g := range r.ITL {
		o.Gaps[i] = sim.Gap{TRelInject: g.T, Gap: g.Gap}
	}
	return o
}

// StepBreakdown is demo 1's roofline for the chapter's figure: the decode
// batch alone, then with one prompt of each length in the same step
// (the same step model the table's seconds come from).
func StepBreakdown(s State, prompts []int) (alone sim.Cost, mixed []sim.Cost, err error) {
	l, d, err := LectureOf(s)
	if err != nil {
		return sim.Cost{}, nil, err
	}
	alone = l.Step.Decode(d.Batch, d.Batch*d.Context)
	for _, p := range prompts {
		mixed = append(mixed, l.Step.Mixed(d.Batch, d.Batch*d.Context, p))
	}
	return alone, mixed, nil
}
