package sim

import (
	"fmt"
	"math"
	"slices"
)

// Result is one request's outcome.
type Result struct {
	ID          int       `json:"id"`
	Arrival     float64   `json:"arrival"`
	Prompt      int       `json:"prompt"`
	Output      int       `json:"output"`
	Generated   int       `json:"generated"`
	Done        bool      `json:"done"`        // finished on this instance (a prefill instance is done at the first token)
	FirstToken  float64   `json:"first_token"` // absolute time of the first token
	Finish      float64   `json:"finish"`      // absolute time of the last token (or rejection)
	MaxITL      float64   `json:"max_itl"`
	Preemptions int       `json:"preemptions"`
	Rejected    string    `json:"rejected,omitempty"`
	Cancelled   bool      `json:"cancelled,omitempty"`   // withdrawn by its client (Engine.Cancel)
	Cached      int       `json:"cached,omitempty"`      // prompt tokens its first prefill took from the prefix cache
	TokenTimes  []float64 `json:"token_times,omitempty"` // with Config.RecordTokens
}

// Completed reports whether the request finished its work (every requested
// token, or on a prefill instance its first token).
func (r *Result) Completed() bool { return r.Rejected == "" && !r.Cancelled && r.Done }

// TTFT is the time from arrival to the first token.
func (r *Result) TTFT() float64 { return r.FirstToken - r.Arrival }

// E2E is the time from arrival to the last token.
func (r *Result) E2E() float64 { return r.Finish - r.Arrival }

// TPOT is (E2E - TTFT) / (output - 1): the mean time per output token after the first.
func (r *Result) TPOT() float64 {
	if r.Generated < 2 {
		return 0
	}
	return (r.Finish - r.FirstToken) / float64(r.Generated-1)
}

// Gaps returns the inter-token gaps counted so far by value (with
// Config.CountGaps); the engine goes on appending to it.
func (e *Engine) Gaps() []GapCount {
	e.settleAll() // (a lazily settled sequence counts its gaps when settled)
	return e.gaps
}

// CountGapsInto has the engine count its gaps in buf's memory (a caller
// running one engine after another reuses it); call it before the first step.
func (e *Engine) CountGapsInto(buf []GapCount) { e.gaps = buf[:0] }

// Results returns every submitted request's outcome so far, in submission order.
func (e *Engine) Results() []Result {
	e.settleAll()
	var out []Result
	if e.sc != nil && cap(e.sc.results) >= len(e.all) {
		out = e.sc.results[:len(e.all)]
	} else {
		out = make([]Result, len(e.all))
		if e.sc != nil {
			e.sc.results = out
		}
	}
	for i, s := range e.all {
		e.result(s, &out[i])
	}
	return out
}

// settleAll brings a lazily settled batch up to date (see lazy.go).
func (e *Engine) settleAll() {
	for _, s := range e.running {
		e.settle(s)
	}
}

// result writes s's outcome so far to r.
func (e *Engine) result(s *Seq, r *Result) {
	lat := e.cfg.Step.Physics.ReqLatency // the client sent it this much before the engine saw it
	*r = Result{ID: s.Req.ID, Arrival: s.Req.Arrival - lat, Prompt: s.Req.Prompt, Output: s.Req.Output,
		Generated: s.generated, Done: s.done, FirstToken: s.first, Finish: s.finish, MaxITL: s.maxITL,
		Preemptions: int(s.preempted), Rejected: e.why(s), Cancelled: s.cancelled, Cached: int(s.cached), TokenTimes: e.tokenTimes(s)}
}

// Outcome is a whole run: every request's result, and the iterations when traced.
type Outcome struct {
	Results    []Result    `json:"results"`
	Iterations []Iteration `json:"iterations,omitempty"`
	Steps      int         `json:"steps"`
	End        float64     `json:"end"`       // simulated seconds at the last iteration's end
	Truncated  bool        `json:"truncated"` // cut short by MaxIterations
	// Gaps counts every inter-token gap by value, with Config.CountGaps (see Summary).
	Gaps []GapCount `json:"gaps,omitempty"`
	// Prefix is the prefix cache's figures (nil with caching off).
	Prefix *PrefixStats `json:"prefix,omitempty"`
	// Spec is speculative decoding's figures (nil when off).
	Spec *SpecStats `json:"spec,omitempty"`

	items  []Item // every traced iteration's items, back to back (one allocation, not one per step)
	counts []int  // items per traced iteration
	arrays TraceArrays
}

// TraceArrays are one traced engine run's arrays (its steps, their items
// and counts), kept for a later traced run to refill (see Replicas.Reuse).
type TraceArrays struct {
	its    []Iteration
	items  []Item
	counts []int
}

// refill makes o record its trace into a's arrays.
func (o *Outcome) refill(a TraceArrays) {
	o.Iterations, o.items, o.counts = a.its[:0], a.items[:0], a.counts[:0]
}

// record counts a step and, when tracing, keeps a copy of it.
func (o *Outcome) record(it *Iteration, trace bool) {
	o.Steps++
	if trace {
		c := *it
		c.Items = nil
		c.Rejected = slices.Clone(it.Rejected) // the engine reuses its buffers
		c.Preempted = slices.Clone(it.Preempted)
		o.Iterations = append(o.Iterations, c)
		o.items = append(o.items, it.Items...)
		o.counts = append(o.counts, len(it.Items))
	}
}

// finish takes the results from the engine and points each traced iteration at its items.
func (o *Outcome) finish(e *Engine) {
	o.Results = e.Results()
	o.close(e)
}

// close is finish without the results, for a cluster that reads its
// instances' sequences itself (settled: see settleAll).
func (o *Outcome) close(e *Engine) {
	e.settleAll()
	o.End, o.Truncated = e.Now(), e.Busy()
	if sc := e.sc; sc != nil { // the clock's buffers may have grown: keep them for the next run
		sc.ends, sc.peaks, sc.due = e.lz.ends, e.lz.peaks, e.lz.due
	}
	if e.cfg.CountGaps {
		o.Gaps = append([]GapCount{}, e.gaps...)
	}
	o.Prefix = e.PrefixStats()
	o.Spec = e.SpecStats()
	at := 0
	for i, n := range o.counts {
		o.Iterations[i].Items = o.items[at : at+n : at+n]
		at += n
	}
	o.arrays = TraceArrays{its: o.Iterations, items: o.items, counts: o.counts}
	o.items, o.counts = nil, nil
}

// Run simulates reqs to completion: the whole-run driver of the engine.
func Run(cfg Config, reqs []Request) (*Outcome, error) { return run(cfg, reqs, nil) }

// RunClosed simulates reqs as a closed loop: concurrency requests are sent
// at time 0 and each later one, in reqs' order, the moment one ends (or is
// refused); the requests' own arrival times are ignored. It returns an error
// when concurrency is below 1 or reqs is empty.
func RunClosed(cfg Config, reqs []Request, concurrency int) (*Outcome, error) {
	return RunClosedEach(cfg, reqs, concurrency, nil)
}

// RunClosedEach is RunClosed calling each (when not nil) with every step
// as it is made, for a caller that reads the steps without keeping them
// (cfg.Trace keeps them all).
func RunClosedEach(cfg Config, reqs []Request, concurrency int, each func(*Iteration)) (*Outcome, error) {
	if concurrency < 1 || len(reqs) == 0 {
		return nil, fmt.Errorf("closed loop: want a concurrency ≥ 1 and requests, got %d and %d", concurrency, len(reqs))
	}
	e, err := NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	next := 0
	// submit sends the next request; one refused at once (its result says
	// why) frees its slot for the one after.
	submit := func(at float64) {
		for next < len(reqs) {
			r := reqs[next]
			r.Arrival = at
			next++
			if e.Submit(r) == nil {
				return
			}
		}
	}
	for next < len(reqs) && next < concurrency {
		submit(0)
	}
	out := &Outcome{}
	for {
		it, ok := e.Step()
		if !ok {
			break
		}
		out.record(it, cfg.Trace)
		if each != nil {
			each(it)
		}
		for _, item := range it.Items {
			if item.Done && next < len(reqs) {
				submit(it.End())
			}
		}
		for range it.Rejected {
			if next < len(reqs) {
				submit(it.End())
			}
		}
	}
	out.finish(e)
	return out, nil
}

// RunOn is Run on mem's memory (see Engine.UseMemory): the outcome's
// results live in mem until it serves another run.
func RunOn(cfg Config, reqs []Request, mem *Scratch) (*Outcome, error) {
	return run(cfg, reqs, mem.runScratch())
}

// scratch is the memory one run of a search leaves to the next (a goodput
// bisection runs one experiment after another): its sequences and results.
// A run with scratch returns results in it, valid until the next such run.
type scratch struct {
	seqs    []Seq
	lists   [4][]*Seq // all, pending, waiting, running
	results []Result
	ends    []float64 // the lazy decode clock's buffers
	peaks   []peak
	due     []*Seq
	// a cluster instance's own queues (see instance)
	events []event
	subs   []int
}

// Scratch is memory that runs made one after another reuse: a search's
// experiments, or a page's table jobs run one at a time. One Scratch must
// never serve two runs at once.
type Scratch struct {
	run     scratch
	cluster clusterScratch
	reqs    []Request // the requests of the runs in progress (see Scratch.Poisson)
	vals    []float64 // one metric of a run's results (see Scratch.Values)
}

// Values returns Values(rs, m) in s's buffer (nil s: a new slice), valid
// until s's next Values.
func (s *Scratch) Values(rs []Result, m Metric) []float64 {
	if s == nil {
		return Values(rs, m)
	}
	s.vals = valuesInto(s.vals, rs, m)
	return s.vals
}

// Poisson returns d's requests at rate (see PoissonDraws.Fill) in s's
// request buffer (nil s: a new slice), valid until s's next Poisson.
func (s *Scratch) Poisson(d *PoissonDraws, rate float64) ([]Request, error) {
	if s == nil {
		return d.Fill(nil, rate)
	}
	reqs, err := d.Fill(s.reqs, rate)
	if err == nil {
		s.reqs = reqs
	}
	return reqs, err
}

// runScratch is s's memory for one engine's runs (nil s: a fresh one).
func (s *Scratch) runScratch() *scratch {
	if s == nil {
		return &scratch{}
	}
	return &s.run
}

// clusterScratch is s's memory for cluster runs (nil s: a fresh one).
func (s *Scratch) clusterRuns() *clusterScratch {
	if s == nil {
		return &clusterScratch{}
	}
	return &s.cluster
}

// UseMemory runs a new engine on mem's memory, sized for n requests: its
// sequences, queues and results (Results then returns a list in mem, valid
// until mem serves another run). A caller running one engine after another
// on the same memory allocates next to nothing. Call it before Submit.
func (e *Engine) UseMemory(mem *Scratch, n int) { e.useScratch(mem.runScratch(), n) }

// useScratch runs the engine on sc's memory, sized for n requests.
func (e *Engine) useScratch(sc *scratch, n int) {
	if cap(sc.seqs) < n {
		sc.seqs = make([]Seq, 0, n)
		for i := range sc.lists {
			sc.lists[i] = make([]*Seq, 0, n)
		}
	}
	e.sc, e.slab = sc, sc.seqs[:0]
	e.all, e.pending, e.waiting, e.running = sc.lists[0][:0], sc.lists[1][:0], sc.lists[2][:0], sc.lists[3][:0]
	e.lz.ends, e.lz.peaks, e.lz.due = sc.ends[:0], sc.peaks[:0], sc.due[:0]
}

// run is Run, reusing sc's memory when sc is not nil.
func run(cfg Config, reqs []Request, sc *scratch) (*Outcome, error) {
	e, out, err := startRun(cfg, reqs, sc)
	if err != nil {
		return nil, err
	}
	e.runOut(out, nil)
	out.finish(e)
	return out, nil
}

// startRun makes the engine of a whole run with every request submitted,
// and its outcome to record into.
func startRun(cfg Config, reqs []Request, sc *scratch) (*Engine, *Outcome, error) {
	e, err := NewEngine(cfg)
	if err != nil {
		return nil, nil, err
	}
	e.noItems = !cfg.Trace
	e.allowLazy()
	if sc != nil {
		e.useScratch(sc, len(reqs))
	} else {
		e.reserve(len(reqs))
	}
	for _, r := range reqs {
		_ = e.Submit(r) // a rejection is recorded in the result
	}
	out := &Outcome{}
	if cfg.Trace { // size the trace up front: one item per token plus a few chunks per prompt
		n := 0
		for _, r := range reqs {
			n += min(r.Output, MaxTokens) + 2
		}
		out.items = make([]Item, 0, n)
	}
	return e, out, nil
}

// runOut runs the engine to the end, recording into out; stop, when not
// nil, is asked after every step whether to end the run there (it reports
// true once its question is answered).
func (e *Engine) runOut(out *Outcome, stop func() bool) {
	trace := e.cfg.Trace
	for {
		if !trace {
			out.Steps += e.decodeRun(math.Inf(1))
		}
		it, ok := e.Step()
		if !ok {
			return
		}
		out.record(it, trace)
		if stop != nil && stop() {
			return
		}
	}
}

// Counts tallies a run's requests.
type Counts struct {
	Submitted   int `json:"submitted"`
	Completed   int `json:"completed"`
	Rejected    int `json:"rejected"`
	Cancelled   int `json:"cancelled"`
	Unfinished  int `json:"unfinished"` // still in flight when the run was cut short
	Preemptions int `json:"preemptions"`
}

// Count tallies results; Completed+Rejected+Cancelled+Unfinished always equals Submitted.
func Count(rs []Result) Counts {
	c := Counts{Submitted: len(rs)}
	for i := range rs {
		r := &rs[i]
		c.Preemptions += r.Preemptions
		switch {
		case r.Rejected != "":
			c.Rejected++
		case r.Cancelled:
			c.Cancelled++
		case r.Completed():
			c.Completed++
		default:
			c.Unfinished++
		}
	}
	return c
}

// String reads like a ledger line.
func (c Counts) String() string {
	s := fmt.Sprintf("%d submitted: %d completed, %d rejected, ", c.Submitted, c.Completed, c.Rejected)
	if c.Cancelled > 0 {
		s += fmt.Sprintf("%d cancelled, ", c.Cancelled)
	}
	return s + fmt.Sprintf("%d unfinished; %d preemptions", c.Unfinished, c.Preemptions)
}
