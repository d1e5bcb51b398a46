package play

import (
	"fmt"
	"math"
	"slices"
	"time"

	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/lecture"
	"servelab/sim/scenario"
)

// MaxIterations cuts any one simulation short so the tab never freezes; a
// cut run says so on the page.
const MaxIterations = 150_000

// MaxTraceItems bounds the trace a run keeps (one item per decode token or
// prefill chunk, 24 bytes each): a long run of many long outputs would
// otherwise fill the tab's memory. A run that reaches it is cut short.
const MaxTraceItems = 3_000_000

// MaxSimTime is the wall time after which the playground's own trace
// driver stops a run (cut short, with a message) rather than hold the tab.
const MaxSimTime = 2 * time.Second

// Row is one GPU (or instance) lane of the timeline: its iterations in time order.
type Row struct {
	Name  string
	Iters []sim.Iteration
	// Requests is how many requests a disaggregated run's router sent here (0: colocated).
	Requests int
}

// SimRun is one simulation and what the view needs from it. Everything drawn
// comes from here; the view never prices a step itself.
type SimRun struct {
	State     State
	Step      sim.StepModel
	Rows      []Row
	Results   []sim.Result
	Summary   sim.Summary
	Truncated bool
	End       float64
	Inject    float64 // lab: when the long prompt arrives (else -1)
	LongIDs   map[int]bool
	Lab       *lab.Summary
	SimMs     float64
	// KVCapacity is each GPU's KV cache in blocks of BlockSize tokens (0: the
	// ideal engine, no limit); Preemptions and Rejected count over the run.
	KVCapacity, BlockSize int
	Preemptions, Rejected int
	trust                 map[string]string // Trust's line by language, once computed
	// Prefix is the prefix cache's figures (nil with caching off), Spec
	// speculative decoding's (nil when off).
	Prefix *sim.PrefixStats
	Spec   *sim.SpecStats
	// Choices is, per result, the replica a run across replicas sent the
	// request to (nil for one engine); each replica is a Row, and Replicas
	// their figures (its iterations are the Row's).
	Choices  []int
	Replicas []sim.ReplicaRun
	// Placements is, per result, where a disaggregated run sent the request
	// and when its KV cache moved (nil when colocated).
	Placements []sim.Placement

	// byID maps a request ID to its index in Results.
	byID idIndex
	// buf and recycle give the trace's arrays back for reuse.
	buf     buffers
	recycle func()
	// FirstPrefill is, per result index, the start of its first prefill step (-1: none).
	FirstPrefill []float64
	// ITL is each step's largest inter-token gap at the step's end, sorted by time.
	ITL []GapAt
	// gaps counts every inter-token gap by value.
	gaps []sim.GapCount
	// indexed is set when the trace driver already derived the above.
	indexed bool
	// ITLMax is the largest gap of all.
	ITLMax float64
}

// GapAt is an inter-token gap and when its later token arrived.
type GapAt struct{ T, Gap float64 }

// Simulate runs the state's experiment with its trace kept (the view reads
// the inter-token gaps from the trace: no token times are kept).
func Simulate(s State) (*SimRun, error) { return simulate(s, false) }

// simulate is Simulate, keeping every token's time in the results with tokens.
func simulate(s State, tokens bool) (*SimRun, error) {
	j, err := start(s, tokens)
	if err != nil {
		return nil, err
	}
	for !j.Advance(time.Hour) {
	}
	if j.err != nil {
		return nil, j.err
	}
	return j.Run(), nil
}

// Job is one simulation under way. Advance runs it a slice at a time, so
// the page can spread a long run (a replayed trace of thousands of
// requests) over frames and keep answering; Run hands the finished run.
type Job struct {
	r      *SimRun
	tr     *tracer // nil when Start made the whole run (disaggregated)
	finish func()  // the workload's own ending after the last step (the lab's)
	spent  time.Duration
	// horizon is the simulated time the run is expected to reach (Progress).
	horizon float64
	items   int  // the trace items expected (0: not known)
	stepped bool // the last step is made
	ended   bool // the results are made (land is left)
	done    bool
	// whole makes a run of several engines (a cluster's, replicas') in one
	// piece, at the first Advance; err is what it failed with.
	whole func() error
	err   error
}

// Whole reports whether the run is made in one piece by the next Advance
// (several engines, routed or handed over between, have no slices): the
// page runs that Advance on a goroutine, its engines yielding through the
// state's Pause, which only such a run calls.
func (j *Job) Whole() bool { return j.whole != nil }

// Err is what the run failed with (a run made whole can fail in Advance).
func (j *Job) Err() error { return j.err }

// setWhole has the first Advance make the run in one piece with run; the
// run's time is start's (since t0) and run's.
func (j *Job) setWhole(t0 time.Time, run func() error) {
	built := time.Since(t0)
	j.whole = func() error {
		t1 := time.Now()
		err := run()
		j.spent = built + time.Since(t1)
		return err
	}
}

// longItems is the trace items from which a run takes more than a frame's
// slice in the browser (about 150 ns an item).
const longItems = 400_000

// Long reports whether the run is known to need several frames' slices.
func (j *Job) Long() bool { return j.items >= longItems }

// Start begins the state's experiment; nothing is simulated until Advance
// (except a disaggregated run, made whole here). It takes a spare set of
// trace arrays from the pool: the run shown stays intact until the new
// one is done.
func Start(s State) (*Job, error) { return start(s, false) }

func start(s State, tokens bool) (*Job, error) {
	t0 := time.Now()
	b, err := build(s)
	if err != nil {
		return nil, err
	}
	step, lim := b.Step, b.Config.Limits
	// The engine counts the gaps and notes each step's largest (the view's
	// gap lane): no pass over every token here.
	cfg := b.Config
	cfg.Trace, cfg.RecordTokens, cfg.CountGaps = true, tokens, true
	// A run of one engine goes in slices (Advance's budget) and must not
	// block inside one: only a run made whole calls the state's Pause.
	pause := cfg.Pause
	cfg.Pause = nil
	r := &SimRun{State: s.Clone(), Step: step, Inject: -1, KVCapacity: lim.KVBlocks, BlockSize: lim.BlockSize}
	r.State.Pause = nil // (the run shown is no one's job)
	j := &Job{r: r}
	switch {
	case s.Workload == scenario.Lab:
		if !OneGPUColocated(s.Policy) {
			return nil, fmt.Errorf("the lab workload runs on one colocated GPU; pick prefill-first or chunked")
		}
		w := s.Lab
		if w.InjectAfter >= w.Duration {
			return nil, fmt.Errorf("inject time %gs must be before the end of the lab run (%gs)", w.InjectAfter, w.Duration)
		}
		// Each lab step carries at most one item per stream and long prompt.
		cfg.Limits.MaxIterations = min(MaxIterations, MaxTraceItems/(w.ShortConcurrency+w.LongCount))
		buf := s.Sess.takeBuffers()
		l, err := sim.NewLab(cfg, w, buf.arrivals)
		if err != nil {
			return nil, err
		}
		l.Engine().SettleLazily() // the tracer reads only the steps, then the results
		j.tr = r.newTracer(l.Engine(), l.Step, buf, idIndex{}, true)
		j.horizon = w.Duration
		j.finish = func() {
			r.byID = newIDIndex(r.Results)
			lo := l.Finish(&sim.Outcome{Results: r.Results})
			r.buf.arrivals = lo.Run.Arrivals
			r.Inject = w.InjectAfter
			r.LongIDs = map[int]bool{}
			for _, res := range r.Results {
				if res.Arrival == w.InjectAfter && res.Prompt == w.LongInputLen && res.Output == w.LongOutputLen && res.ID >= w.ShortConcurrency {
					r.LongIDs[res.ID] = true
				}
			}
			sum := lab.Of(lo)
			r.Lab = &sum
		}
	default:
		reqs, err := requests(s, s.Rate)
		if err != nil {
			return nil, err
		}
		if b.Cluster != nil || b.Replicas != nil {
			// Several engines: every output token is a trace item (and, in
			// a cluster, a recorded time): keep the first requests that fit
			// and say the run was cut short.
			cut := false
			if k := MaxTraceItems / (s.Output + 1); k < len(reqs) {
				reqs, cut = reqs[:k], true
			}
			j.setWhole(t0, func() error {
				if b.Cluster != nil {
					c := *b.Cluster
					c.Trace, c.RecordTokens = true, tokens
					co, err := sim.RunDisaggregated(c, reqs)
					if err != nil {
						return err
					}
					for _, in := range co.Instances {
						name := fmt.Sprintf("%s %d", in.Role, in.Index+1)
						r.Rows = append(r.Rows, Row{Name: name, Iters: in.Iterations, Requests: in.Requests})
					}
					r.Results, r.Truncated, r.End = co.Results, co.Truncated || cut, co.End
					r.Placements = co.Placements
					return nil
				}
				c := *b.Replicas
				c.Config = cfg
				c.Config.Pause = pause
				buf := s.Sess.takeBuffers()
				c.Reuse = buf.replicas
				ro, err := sim.RunReplicas(c, reqs)
				if err != nil {
					s.Sess.giveBack(buf)
					return err
				}
				buf.replicas = ro.TraceArrays()
				r.buf = buf
				r.recycle = func() { r.State.Sess.giveBack(r.buf) }
				for _, rr := range ro.Replicas {
					r.Rows = append(r.Rows, Row{Name: fmt.Sprintf("replica %d", rr.Index+1), Iters: rr.Iterations, Requests: rr.Requests})
				}
				r.Results, r.Truncated, r.End = ro.Results, ro.Truncated || cut, ro.End
				r.Choices, r.Prefix, r.Spec, r.Replicas = ro.Choices, ro.Prefix, ro.Spec, ro.Replicas
				return nil
			})
			return j, nil
		}
		e, err := sim.NewEngine(cfg)
		if err != nil {
			return nil, err
		}
		e.SettleLazily() // the tracer reads only the steps, then the results
		buf := s.Sess.takeBuffers()
		e.UseMemory(buf.mem, len(reqs)) // its sequences and results: the run's until recycled
		for _, q := range reqs {
			_ = e.Submit(q) // a rejection is recorded in the result
			j.horizon = max(j.horizon, q.Arrival)
		}
		identity := true // Poisson numbers requests by position: no lookup needed
		items := 0       // a request's items: about one per output token
		for i, q := range reqs {
			identity = identity && q.ID == i
			items += max(q.Output, 1)
		}
		j.items = items
		buf.reserve(min(items, MaxTraceItems+1), expectedSteps(step, j.horizon, items))
		j.tr = r.newTracer(e, e.Step, buf, newIDIndexReqs(reqs), identity)
	}
	j.spent = time.Since(t0)
	return j, nil
}

// Advance simulates for about budget of wall time and reports whether the
// run is done. A run that has spent MaxSimTime in all is cut short.
func (j *Job) Advance(budget time.Duration) bool {
	if j.done {
		return true
	}
	if f := j.whole; f != nil {
		j.whole = nil
		if j.err = f(); j.err != nil {
			j.done = true
			return true
		}
		j.land()
		return true
	}
	t0 := time.Now()
	// A long run's ending gets slices of its own, one for its results and
	// one for their percentiles (each tens of ms for thousands of requests).
	if !j.stepped {
		j.stepped = j.tr.advance(t0.Add(budget), t0.Add(MaxSimTime-j.spent))
		if !j.stepped || j.Long() {
			j.spent += time.Since(t0)
			return false
		}
	}
	if !j.ended {
		j.tr.end()
		if j.finish != nil {
			j.finish()
		}
		j.ended = true
		if j.Long() {
			j.spent += time.Since(t0)
			return false
		}
	}
	j.spent += time.Since(t0)
	j.land()
	return true
}

// land derives what the view reads from a finished run.
func (j *Job) land() {
	t0 := time.Now()
	r := j.r
	r.index()
	r.summarize()
	for i := range r.Results {
		r.Preemptions += r.Results[i].Preemptions
		if r.Results[i].Rejected != "" {
			r.Rejected++
		}
	}
	j.spent += time.Since(t0)
	r.SimMs = float64(j.spent.Microseconds()) / 1e3
	j.done = true
}

// Progress is how far the run has come, 0..1 (by simulated time against
// the last arrival, or the lab's duration).
func (j *Job) Progress() float64 {
	if j.done {
		return 1
	}
	if j.horizon <= 0 || j.tr == nil {
		return 0
	}
	return min(0.99, j.tr.e.Now()/j.horizon)
}

// Run is the finished run (nil before Advance reports done, or when it failed: Err).
func (j *Job) Run() *SimRun {
	if !j.done || j.err != nil {
		return nil
	}
	return j.r
}

// Abandon gives an unfinished run's arrays back to the pool.
func (j *Job) Abandon() {
	if j.done || j.tr == nil {
		return
	}
	t := j.tr
	t.r.State.Sess.giveBack(buffers{its: t.its[:0], items: t.items[:0], offs: t.offs[:0], itl: t.x.itl[:0], gaps: t.e.Gaps()[:0], arrivals: t.buf.arrivals, mem: t.buf.mem, replicas: t.buf.replicas})
	j.tr, j.done = nil, true
}

// tracer runs a step function (an engine's, or a driver's around it) with
// the trace kept in flat arrays taken from a spent run, so a re-simulation
// allocates a few large arrays rather than one per step.
type tracer struct {
	r     *SimRun
	e     *sim.Engine
	step  func() (*sim.Iteration, bool)
	buf   buffers
	its   []sim.Iteration
	items []sim.Item
	offs  []int
	x     *indexer
	cut   bool
}

// newTracer starts tracing e through step into buf's arrays. byID maps
// request IDs to results when they are not numbered by position (identity).
func (r *SimRun) newTracer(e *sim.Engine, step func() (*sim.Iteration, bool), buf buffers, byID idIndex, identity bool) *tracer {
	e.CountGapsInto(buf.gaps)
	r.byID = byID
	// While each step is at hand, note what the view needs (see indexer).
	return &tracer{r: r, e: e, step: step, buf: buf, its: buf.its[:0], items: buf.items[:0], offs: buf.offs[:0],
		x: r.newIndexer(len(e.Results()), identity, buf.itl)}
}

// advance steps until the run ends (true), the slice's deadline passes
// (false), or the run's own limit does (cut short: true).
func (t *tracer) advance(deadline, limit time.Time) bool {
	its, items, offs := t.its, t.items, t.offs
	defer func() { t.its, t.items, t.offs = its, items, offs }()
	check := len(items) // the clock is read every 16 steps or 8192 tokens (a big run's step carries hundreds)
	for n := 1; ; n++ {
		if n&15 == 0 || len(items) > check {
			check = len(items) + 8192
			if now := time.Now(); now.After(limit) {
				t.cut = true
				return true
			} else if now.After(deadline) {
				return false
			}
		}
		if len(items) > MaxTraceItems {
			t.cut = true
			return true
		}
		it, ok := t.step()
		if !ok {
			return true
		}
		offs = append(offs, len(items))
		items = append(items, it.Items...)
		c := *it
		c.Items = nil
		if len(it.Rejected) > 0 || len(it.Preempted) > 0 { // the engine reuses these buffers
			c.Rejected, c.Preempted = slices.Clone(it.Rejected), slices.Clone(it.Preempted)
		}
		its = append(its, c)
		t.x.noted(it)
	}
}

// end hands the trace and what was noted to the run.
func (t *tracer) end() {
	r, e, its, items, offs := t.r, t.e, t.its, t.items, t.offs
	results := e.Results() // (in the run's memory: call it once)
	t.x.gaps = e.Gaps()
	t.x.done(len(results))
	for k := range its {
		end := len(items)
		if k+1 < len(offs) {
			end = offs[k+1]
		}
		its[k].Items = items[offs[k]:end:end]
	}
	r.Rows = []Row{{Name: r.Step.GPU.Name, Iters: its}}
	r.Results, r.End, r.Truncated = results, e.Now(), e.Busy() || t.cut
	r.Prefix, r.Spec = e.PrefixStats(), e.SpecStats()
	r.buf = buffers{its: its, items: items, offs: offs, itl: r.ITL, gaps: r.gaps, arrivals: t.buf.arrivals, mem: t.buf.mem, replicas: t.buf.replicas}
	r.recycle = func() { r.State.Sess.giveBack(r.buf) }
}

// takeBuffers takes the arrays of a run no longer shown, if there is one:
// allocating (and collecting) megabytes per slider move is most of the cost.
func (ss *Session) takeBuffers() buffers {
	var buf buffers
	if ss != nil {
		if n := len(ss.pool); n > 0 {
			buf, ss.pool = ss.pool[n-1], ss.pool[:n-1]
		}
	}
	if buf.mem == nil {
		buf.mem = &sim.Scratch{}
	}
	return buf
}

// expectedSteps is about the most steps a run of the given items can take
// whose requests arrive until horizon: an engine kept busy steps at most
// once per its shortest step (one token at no context), plus a drain; never
// more than one per item or the cut. A guess, not a bound (a backlog can
// drain longer), that keeps a big run's trace from growing by copies.
func expectedSteps(step sim.StepModel, horizon float64, items int) int {
	n := min(items, MaxIterations+1)
	if shortest := step.Decode(1, 1).Seconds; shortest > 0 && horizon/shortest < float64(n) {
		n = min(n, int(horizon/shortest)+1024)
	}
	return n
}

// reserve makes room for items trace items and steps steps in one
// allocation each: a slice grown by appends copies itself at each
// doubling, and for a big run (a 9000-request upload, tens of MB) those
// copies and their collections took most of the run's time and held frames.
// An array made anew gets a quarter more room than asked: a slider moved
// up step by step asks a little more each time, and each run's arrays
// are the next-but-one run's.
func (b *buffers) reserve(items, steps int) {
	if cap(b.items) < items {
		b.items = make([]sim.Item, 0, items+items/4)
	}
	if cap(b.its) < steps {
		b.its = make([]sim.Iteration, 0, steps+steps/4)
	}
	if cap(b.offs) < steps {
		b.offs = make([]int, 0, steps+steps/4)
	}
	if cap(b.itl) < steps {
		b.itl = make([]GapAt, 0, steps+steps/4)
	}
}

// buffers are one traced run's arrays, for a later run to refill.
type buffers struct {
	its      []sim.Iteration
	items    []sim.Item
	offs     []int
	itl      []GapAt
	gaps     []sim.GapCount
	arrivals []lab.Arrival // the lab's
	// replicas are a routed run's traces, one per replica (see
	// sim.Replicas.Reuse): tens of MB a run, most of its time in the
	// browser when they were grown anew at each move.
	replicas []sim.TraceArrays
	// mem is the engine's own memory (sequences, queues, the results):
	// the run's results live in it until the run is recycled.
	mem *sim.Scratch
}

// Recycle hands the run's arrays to the next simulation; call it when the
// run is no longer shown.
func (r *SimRun) Recycle() {
	if r != nil && r.recycle != nil {
		r.recycle()
		r.recycle = nil
	}
}

// index derives the lookups the view needs from the results and the trace
// of a run on several GPUs (runTraced derives them for one GPU as it goes).
func (r *SimRun) index() {
	if r.indexed {
		return // runTraced did it as it went
	}
	r.byID = newIDIndex(r.Results)
	identity := true // the workloads number requests by position: no lookup needed
	for i := range r.Results {
		identity = identity && r.Results[i].ID == i
	}
	x := r.newIndexer(len(r.Results), identity, r.ITL)
	// Every token lands at the end of its step (the time the engine records
	// for it, bit for bit), so taking the steps of all GPUs in the order
	// they end sees every request's tokens in order, across the hand-over
	// from a prefill GPU to a decode GPU too.
	next := make([]int, len(r.Rows))
	for {
		row, at := -1, 0.0
		for i := range r.Rows {
			if k := next[i]; k < len(r.Rows[i].Iters) {
				if end := r.Rows[i].Iters[k].End(); row < 0 || end < at {
					row, at = i, end
				}
			}
		}
		if row < 0 {
			break
		}
		x.add(&r.Rows[row].Iters[next[row]])
		next[row]++
	}
	x.done(len(r.Results))
}

// indexer notes, one step at a time in the order steps end, what the view
// needs from a trace: each request's first prefill step, every
// inter-token gap counted by value (a step's decodes mostly share one gap,
// so a run of equal gaps is one count), and each step's largest gap — in
// step order, so already sorted by time for the gap lane.
type indexer struct {
	r        *SimRun
	identity bool // request IDs are result positions
	last     []float64
	gaps     []sim.GapCount
	itl      []GapAt
	max      float64
}

// newIndexer starts indexing n requests into r, refilling itl.
func (r *SimRun) newIndexer(n int, identity bool, itl []GapAt) *indexer {
	r.FirstPrefill = make([]float64, n)
	for i := range n {
		r.FirstPrefill[i] = -1
	}
	return &indexer{r: r, identity: identity, itl: itl[:0]}
}

// id is the result index of request ID i.
func (x *indexer) id(i int) (int, bool) {
	if x.identity {
		return i, uint(i) < uint(len(x.r.FirstPrefill))
	}
	return x.r.byID.get(i)
}

// noted is add for a step of an engine that counted the gaps itself and
// noted the step's largest (Config.CountGaps, Iteration.MaxGap): only its
// prefill items, which come after its decodes, are read.
func (x *indexer) noted(it *sim.Iteration) {
	if it.Prefill > 0 {
		for k := len(it.Items) - 1; k >= 0 && it.Items[k].Prefill; k-- {
			id := it.Items[k].ID
			for x.identity && id >= len(x.r.FirstPrefill) && id < 1<<30 { // a closed loop's requests come as it runs
				x.r.FirstPrefill = append(x.r.FirstPrefill, -1)
			}
			if i, ok := x.id(id); ok && x.r.FirstPrefill[i] < 0 {
				x.r.FirstPrefill[i] = it.Start
			}
		}
	}
	x.stepGap(it.End(), it.MaxGap)
}

// stepGap notes a step's largest gap mg, at its end.
func (x *indexer) stepGap(end, mg float64) {
	if mg > 0 {
		x.itl = append(x.itl, GapAt{end, mg})
		if mg > x.max {
			x.max = mg
		}
	}
}

// add notes one step, token by token.
func (x *indexer) add(it *sim.Iteration) {
	if x.last == nil {
		x.last = make([]float64, len(x.r.FirstPrefill))
		for i := range x.last {
			x.last[i] = -1
		}
	}
	end, start := it.End(), it.Start
	last, fp, gaps := x.last, x.r.FirstPrefill, x.gaps
	n := len(last)
	mg := 0.0
	// The hot loop of a re-simulation: locals only, no builtin max (NaN handling costs under wasm).
	for k := range it.Items {
		item := &it.Items[k]
		i := item.ID
		if !x.identity {
			var ok bool
			if i, ok = x.r.byID.get(item.ID); !ok {
				continue
			}
		} else if uint(i) >= uint(n) {
			continue
		}
		if item.Prefill && fp[i] < 0 {
			fp[i] = start
		}
		if item.Emit {
			l := last[i]
			last[i] = end
			if l >= 0 {
				g := end - l
				if m := len(gaps) - 1; m >= 0 && gaps[m].Gap == g {
					gaps[m].N++
				} else {
					gaps = append(gaps, sim.GapCount{Gap: g, N: 1})
				}
				if g > mg {
					mg = g
				}
			}
		}
	}
	x.gaps = gaps
	x.stepGap(end, mg)
}

// done hands what was noted about n requests to the run.
func (x *indexer) done(n int) {
	for len(x.r.FirstPrefill) < n {
		x.r.FirstPrefill = append(x.r.FirstPrefill, -1) // (a closed loop's last requests never ran)
	}
	x.r.gaps, x.r.ITL, x.r.ITLMax, x.r.indexed = x.gaps, x.itl, x.max, true
}

// summarize fills Summary, its ITL figures from the gaps counted by value
// (the same nearest-rank percentiles as from every gap, in linear time).
func (r *SimRun) summarize() {
	r.Summary = sim.SummarizeGaps(r.Results, r.gaps)
}

// Steps is how many steps the run traced, over every GPU.
func (r *SimRun) Steps() int {
	n := 0
	for _, row := range r.Rows {
		n += len(row.Iters)
	}
	return n
}

// Span is the simulated time the run covers.
func (r *SimRun) Span() float64 {
	if r.End > 0 {
		return r.End
	}
	return 1
}

// Figures are the numbers shown beside the canvas (seconds, req/s).
type Figures struct {
	TTFT, TPOT, ITL [3]float64 // P50, P90, P99
	ITLMax          float64
	Attainment      float64
	Completed       int
	Submitted       int
	Throughput      float64
	Goodput         float64 // -1 while being computed
	GoodputNote     string  // a catalogue key (or a message) saying why there is no goodput
	Truncated       bool
}

// Figures reads the run's figures; goodput comes later from the background job.
func (r *SimRun) Figures() Figures {
	s := r.Summary
	f := Figures{TTFT: [3]float64{s.TTFTP50, s.TTFTP90, s.TTFTP99}, TPOT: [3]float64{s.TPOTP50, s.TPOTP90, s.TPOTP99},
		ITL: [3]float64{s.ITLP50, s.ITLP90, s.ITLP99}, ITLMax: s.ITLMax, Completed: s.Completed, Submitted: s.Submitted,
		Throughput: s.Throughput, Goodput: -1, Truncated: r.Truncated}
	f.Attainment = sim.Attainment(r.Results, runSLO(r.State))
	switch {
	case r.State.Workload == scenario.Lab:
		f.GoodputNote = "note.closedloop"
	case r.State.Workload == scenario.Trace || r.State.Workload == scenario.Step:
		f.GoodputNote = "note.trace"
	case r.Truncated:
		f.GoodputNote = "note.cut"
	case SweepTooBig(r.State):
		f.GoodputNote = "note.toobig"
	}
	return f
}

// runSLO is the SLO a run is judged on: a prefill-only instance on TTFT
// alone and a decode-only one on TPOT alone, as the lecture's demo 3
// judges them (each phase's other latency happens elsewhere).
func runSLO(s State) sim.SLO { return lecture.Demo3SLO(s.Policy, s.SLO) }

// OneGPUColocated reports whether policy runs prefill and decode on one
// GPU (what the lab's closed loop and a lab server are).
func OneGPUColocated(policy string) bool {
	return policy == scenario.PrefillFirst || policy == scenario.Chunked
}

// AttainmentAt runs the state's Poisson experiment at another rate, without
// trace, for the goodput search and the latency-vs-rate view. yield (nil:
// none) is called every few dozen steps of a run on one GPU: the page's
// background job lets the browser draw and answer there (a whole run took
// up to 100 ms of a slow laptop's main thread); an error from it ends
// the run and is returned.
func AttainmentAt(s State, rate float64, yield func() error) (sim.Summary, float64, error) {
	b, err := build(s)
	if err != nil {
		return sim.Summary{}, 0, err
	}
	reqs, err := requests(s, rate)
	if err != nil {
		return sim.Summary{}, 0, err
	}
	var rs []sim.Result
	if b.Cluster != nil {
		co, err := sim.RunDisaggregated(*b.Cluster, reqs)
		if err != nil {
			return sim.Summary{}, 0, err
		}
		rs = co.Results
	} else {
		cfg, stopped := pausing(b.Config, yield)
		out, err := sim.RunOn(cfg, reqs, s.Sess.sweepMemory())
		if err == nil {
			err = *stopped
		}
		if err != nil {
			return sim.Summary{}, 0, err
		}
		rs = out.Results
	}
	return sim.Summarize(rs), sim.Attainment(rs, runSLO(s)), nil
}

// pausing is cfg with its runs calling yield (when not nil) every few
// dozen steps, and where the error that ended one will be.
func pausing(cfg sim.Config, yield func() error) (sim.Config, *error) {
	stopped := new(error)
	if yield != nil {
		cfg.Pause = func() bool {
			*stopped = yield()
			return *stopped != nil
		}
	}
	return cfg, stopped
}

// Goodput is the state's goodput: the highest rate up to hi whose SLO
// attainment reaches 90% in AttainmentAt's experiment, found by the CLI's
// search (sim.InstanceGoodput, or sim.ClusterGoodput when disaggregated),
// whose runs end as soon as their answer is known and reuse their memory.
// yield is called before each experiment and, on one GPU, every few dozen
// steps of each; an error from it ends the search.
func Goodput(s State, hi float64, yield func() error) (rate float64, saturated bool, err error) {
	b, err := build(s)
	if err != nil {
		return 0, false, err
	}
	wl := func(rate float64) ([]sim.Request, error) { return requests(s, rate) }
	if s.Workload == scenario.Poisson && !s.SharesPrefixes() {
		p, o, err := s.Lengths()
		if err != nil {
			return 0, false, err
		}
		wl = sim.PoissonSearch(s.Requests, p, o, s.Seed)
	}
	each := func(rate float64) ([]sim.Request, error) {
		if err := yield(); err != nil {
			return nil, err
		}
		return wl(rate)
	}
	if b.Cluster != nil {
		rate, _, saturated, err = sim.ClusterGoodput(*b.Cluster, each, runSLO(s), 0.9, hi)
		return rate, saturated, err
	}
	cfg, stopped := pausing(b.Config, yield)
	rate, saturated, err = sim.InstanceGoodput(cfg, each, runSLO(s), 0.9, hi)
	if err == nil && *stopped != nil {
		return 0, false, *stopped // a run was cut short: its answer is not one
	}
	return rate, saturated, err
}

// maxSweepTokens bounds the output tokens of one background run: the
// goodput search and the latency-vs-rate view run about twenty of them.
const maxSweepTokens = 600_000

// SweepTooBig reports whether the background figures (goodput, latency vs
// rate) would take too long for s: they are skipped, with a note.
func SweepTooBig(s State) bool {
	return s.Workload != scenario.Poisson || s.Requests*s.Output > maxSweepTokens
}

// RatePoint is one point of the latency-vs-rate view.
type RatePoint struct {
	Rate       float64 `json:"rate"`
	TTFTP90    float64 `json:"ttft_p90"`
	TPOTP90    float64 `json:"tpot_p90"`
	Attainment float64 `json:"attainment"`
}

// RatesFor is the latency-vs-rate sweep around the current rate.
func RatesFor(rate float64) []float64 {
	fs := []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2}
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = math.Round(rate*f*100) / 100
		if out[i] <= 0 {
			out[i] = 0.01
		}
	}
	return out
}

// idIndex maps request IDs to result indices: a slice when the IDs are
// small (every workload numbers requests from 0), else a map.
type idIndex struct {
	dense []int32
	m     map[int]int
}

// newIDIndexReqs indexes the requests' IDs by position.
func newIDIndexReqs(reqs []sim.Request) idIndex {
	return newIDIndexOf(len(reqs), func(i int) int { return reqs[i].ID })
}

// newIDIndex indexes the results' IDs by position.
func newIDIndex(rs []sim.Result) idIndex {
	return newIDIndexOf(len(rs), func(i int) int { return rs[i].ID })
}

// newIDIndexOf indexes the n IDs id(0..n-1) by position.
func newIDIndexOf(n int, id func(i int) int) idIndex {
	maxID := 0
	for i := range n {
		maxID = max(maxID, id(i))
	}
	var x idIndex
	if maxID < 4*n+16 {
		x.dense = make([]int32, maxID+1)
		for i := range x.dense {
			x.dense[i] = -1
		}
		for i := range n {
			if id(i) >= 0 {
				x.dense[id(i)] = int32(i)
			}
		}
		return x
	}
	x.m = make(map[int]int, n)
	for i := range n {
		x.m[id(i)] = i
	}
	return x
}

func (x idIndex) get(id int) (int, bool) {
	if x.m != nil {
		i, ok := x.m[id]
		return i, ok
	}
	if id < 0 || id >= len(x.dense) || x.dense[id] < 0 {
		return 0, false
	}
	return int(x.dense[id]), true
}
