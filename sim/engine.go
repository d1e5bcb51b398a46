package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Seq is a request inside the engine: how far its prefill and decode have got
// and what KV-cache room it holds.
type Seq struct {
	Req       RequestHead
	need      int // tokens to prefill before the next token: the prompt, or prompt+generated after a preemption
	prefilled int
	kv        int // tokens in the KV cache
	blocks    int // KV blocks held
	generated int
	preempted int32
	admitted  bool // holds a running slot (counted against MaxSeqs)
	done      bool // finished its work on this instance
	cancelled bool // withdrawn by its client
	rejected  bool // never ran: the reason is the engine's (Engine.why)
	first     float64
	last      float64
	finish    float64
	maxITL    float64
	here      float64 // time of the first token this engine emitted for it (0: none yet)
	from, due int32   // lazy mode: the decode step it is settled up to, and the one it finishes at (below maxLazySteps+MaxTokens)
	// pc is 1 + the index of its record in the prefix cache (0: none), and
	// cached the prompt tokens its first prefill took from the cache.
	pc, cached int32
	// tokens is 1 + the index of its token times in the engine's (0: none
	// kept). A Seq holds no pointer, so a run's many of them cost the
	// collector nothing: what few requests have is kept by the engine.
	tokens int32
}

// Remaining is the prefill tokens still to process before the next token.
func (s *Seq) Remaining() int { return s.need - s.prefilled }

// Generated is the output tokens emitted so far.
func (s *Seq) Generated() int { return s.generated }

// Limits are the engine's real-world constraints; zero values mean "none"
// so the lecture's idealised runs stay reproducible.
type Limits struct {
	MaxSeqs    int  // sequences holding KV at once (vLLM max_num_seqs); 0: unlimited
	KVBlocks   int  // KV-cache capacity in blocks; 0: unlimited
	BlockSize  int  // tokens per KV block (default 16)
	Preempt    bool // memory full: preempt the newest running sequence and recompute it later (else reserve whole requests up front and wait)
	MaxContext int  // longest prompt+output accepted; 0: the model's max context
	// PrefixCaching keeps KV blocks by content (Request.Blocks): a prompt
	// reuses its longest cached prefix, and freed blocks stay cached until
	// evicted, least recently used first (prefix.go).
	PrefixCaching bool
	// MaxIterations cuts a run short (reported as Truncated); 0: DefaultMaxIterations.
	MaxIterations int
}

// DefaultMaxIterations bounds any single run so no input can hang a caller.
const DefaultMaxIterations = 5_000_000

// Config is everything an engine needs.
type Config struct {
	Step         StepModel
	Policy       Policy
	Limits       Limits
	RecordTokens bool // keep every token's time per request (for ITL series)
	Trace        bool // keep every iteration with its items (for the timeline)
	// CountGaps counts every inter-token gap by value (Outcome.Gaps): exact
	// ITL percentiles in a few bytes per step rather than 8 per token.
	CountGaps bool
	// Spec is speculative decoding (spec.go); the zero value is off.
	Spec Speculation
	// Pause, when set, is called every pauseEvery steps. It may block (the
	// page lets the browser draw and answer there, the run being one of
	// its background jobs) and returns true to end the run where it is,
	// reported as Truncated. It changes nothing else in the run.
	Pause func() (stop bool)
}

// pauseEvery is how many steps a run takes between calls to Config.Pause:
// a few hundred µs of work in the browser.
const pauseEvery = 64

// Item is one sequence's share of an iteration. (A trace holds one per
// token: it stays 24 bytes.)
type Item struct {
	ID      int  `json:"id"`
	Tokens  int  `json:"tokens"`  // tokens processed for it this step
	Prefill bool `json:"prefill"` // a prefill chunk (else one decode token)
	Emit    bool `json:"emit"`    // it got an output token at the end of the step
	Done    bool `json:"done"`    // it finished at the end of the step
	// Accepted is, for a speculating decode (Tokens is then its drafts
	// plus one), the drafts accepted: it got Accepted+1 tokens (capped at
	// its output).
	Accepted uint8 `json:"accepted,omitempty"`
	// Cached is the prompt tokens taken from the prefix cache before this,
	// the prompt's first chunk (they were not computed).
	Cached int32 `json:"cached,omitempty"`
}

// Iteration is one engine step: when, how long, what it carried and why it took that long.
type Iteration struct {
	Index    int     `json:"index"`
	Start    float64 `json:"start"`
	Duration float64 `json:"duration"`
	Kind     string  `json:"kind"` // "decode", "prefill" or "mixed"
	Cost     Cost    `json:"cost"`
	Decodes  int     `json:"decodes"`
	Prefill  int     `json:"prefill_tokens"`
	Items    []Item  `json:"items"`
	// Rejected are requests found unable ever to run while this step was
	// formed (their results say why); online drivers must tell their clients.
	Rejected []int `json:"rejected,omitempty"`
	// With Config.Trace only (the fast path never fills them): the KV-cache
	// blocks held while the step ran (with a KV limit), the requests pushed
	// out of the cache while it was formed, and what kept the queue's head
	// from (more) prefill when a limit did: "kv" (no KV room) or "seqs"
	// (max sequences).
	KVBlocks int `json:"kv_blocks,omitempty"`
	// KVCached is the blocks among the free ones that hold cached
	// content (prefix caching).
	KVCached  int    `json:"kv_cached,omitempty"`
	Preempted []int  `json:"preempted,omitempty"`
	Held      string `json:"held,omitempty"`
	// MaxGap is the largest inter-token gap of the tokens this step emits
	// (0: none follows an earlier token), for a view's gap lane; a whole
	// run without a trace leaves it 0.
	MaxGap float64 `json:"-"`
}

// End is when the iteration's tokens are emitted.
func (it *Iteration) End() float64 { return it.Start + it.Duration }

// Engine runs iterations one at a time. It is steppable online: Submit may
// be called between Steps, and each Step advances exactly one iteration.
type Engine struct {
	cfg     Config
	role    Role
	now     float64
	pending []*Seq // submitted, not yet arrived, sorted by arrival
	waiting []*Seq // arrived, prefill not finished (FCFS)
	running []*Seq // decoding
	runKV   int    // sum of kv over running: a decode step's attention pairs without a walk
	all     []*Seq
	freeKV  int
	active  int // sequences holding a slot
	iters   int
	queue   Queue
	plan    Plan
	it      Iteration
	maxCtx  int
	noItems bool  // a whole run without a trace reads no items (nor a step's cost and kind): skip them
	lecture bool  // the step model is the lecture's (no refinement): its seconds need no check per step
	keep    bool  // each token is counted or recorded (Config.CountGaps, RecordTokens)
	slab    []Seq // Seqs are carved from slabs: one allocation per 256 requests, or per run (reserve)
	gaps    []GapCount
	// sincePause counts the steps since cfg.Pause was last called; paused:
	// it asked the run to end.
	sincePause int
	paused     bool
	// Scratch of decodeRun: each step's duration and end.
	durs, ends []float64
	// runHook, when set, sees every decodeRun: the batch size, each step's
	// duration and end, and how many the last one finished (a cluster's
	// router counts the work and time with it).
	runHook func(n int, durs, ends []float64, done int)
	lz      lazyState
	busy    float64  // seconds spent in iterations, summed in their order
	done    int      // sequences the last step finished
	expect  int      // requests a whole-run driver will submit (reserve)
	sc      *scratch // memory left by the previous run of a search
	// What few sequences have, kept apart (see Seq): each rejection's
	// reason, and the token times of a run that records them.
	reasons map[*Seq]string
	times   [][]float64
	pc      prefixCache // with Limits.PrefixCaching
	// specStats counts speculation's drafts (with Config.Spec).
	specStats SpecStats
}

// reject marks s as rejected for reason.
func (e *Engine) reject(s *Seq, reason string) {
	if e.reasons == nil {
		e.reasons = map[*Seq]string{}
	}
	s.rejected = true
	e.reasons[s] = reason
}

// why is the reason s was rejected ("" if it was not).
func (e *Engine) why(s *Seq) string {
	if !s.rejected {
		return ""
	}
	return e.reasons[s]
}

// tokenTimes is s's token times (nil unless recorded).
func (e *Engine) tokenTimes(s *Seq) []float64 {
	if s.tokens == 0 {
		return nil
	}
	return e.times[s.tokens-1]
}

// addTokens records token times for s (a run that records them).
func (e *Engine) addTokens(s *Seq, t ...float64) {
	e.times[s.tokens-1] = append(e.times[s.tokens-1], t...)
}

// reserve sizes the engine's lists for n requests, so that a whole run
// allocates each once. Every request enters pending, waiting and running at
// most once but for preemptions, and leaves them from the front (a
// reslice), so n slots last the run.
func (e *Engine) reserve(n int) {
	n = min(n, MaxRequests)
	e.expect = min(n, 1<<14)
	e.all = slices.Grow(e.all, n)
	e.pending = slices.Grow(e.pending, n)
	e.waiting = slices.Grow(e.waiting, n)
	e.running = slices.Grow(e.running, n)
}

// NewEngine checks the configuration and returns an idle engine at time 0.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Policy == nil {
		return nil, fmt.Errorf("engine needs a policy; valid: %v", PolicyNames())
	}
	if cfg.Step.f == 0 {
		s, err := cfg.Step.Prepare()
		if err != nil {
			return nil, err
		}
		cfg.Step = s
	}
	l := &cfg.Limits
	if l.BlockSize == 0 {
		l.BlockSize = 16
	}
	if l.MaxIterations == 0 {
		l.MaxIterations = DefaultMaxIterations
	}
	if err := cfg.Spec.check(); err != nil {
		return nil, fmt.Errorf("speculative decoding: %w", err)
	}
	if l.MaxSeqs < 0 || l.KVBlocks < 0 || l.BlockSize < 1 || l.BlockSize > 1<<16 || l.MaxContext < 0 || l.MaxIterations < 0 {
		return nil, fmt.Errorf("limits must be non-negative (block size 1..65536), got %+v", *l)
	}
	e := &Engine{cfg: cfg, freeKV: l.KVBlocks, maxCtx: l.MaxContext, lecture: !cfg.Step.Physics.refined(),
		keep: cfg.CountGaps || cfg.RecordTokens}
	if e.maxCtx == 0 {
		e.maxCtx = cfg.Step.Model.MaxContext
	}
	if r, ok := cfg.Policy.(Roled); ok {
		e.role = r.Role()
	}
	e.queue.admit = e.admit
	if l.PrefixCaching {
		e.pc.init(*l)
		e.queue.reuse = e.reuse
	}
	return e, nil
}

// Now is the engine's clock: the end of the last iteration (or a later idle time).
func (e *Engine) Now() float64 { return e.now }

// AdvanceTo moves an idle engine's clock forward to t (an online driver's
// wall clock); it never moves time backwards.
func (e *Engine) AdvanceTo(t float64) {
	if t > e.now {
		e.now = t
	}
}

// DropFinished forgets requests that are done, rejected or cancelled, so a
// long-lived online driver (the lab server) does not keep every request it
// ever served; Results then covers only those still in flight.
func (e *Engine) DropFinished() {
	k := 0
	for _, s := range e.all {
		if !(s.done || s.cancelled || s.rejected) {
			e.all[k] = s
			k++
			continue
		}
		if s.tokens != 0 {
			e.times[s.tokens-1] = nil
		}
		delete(e.reasons, s)
	}
	clear(e.all[k:])
	e.all = e.all[:k]
}

// Queued is how many arrived requests wait for (more) prefill and how many are decoding.
func (e *Engine) Queued() (waiting, running int) { return len(e.waiting), len(e.running) }

// Busy reports whether any submitted request is unfinished.
func (e *Engine) Busy() bool { return len(e.pending)+len(e.waiting)+len(e.running) > 0 }

// Submit adds a request. One that arrives before Now is treated as arriving
// now. A request that can never run (too long for the context or for the KV
// cache) is rejected at once, with the reason kept in its result; Submit
// returns that reason as an error too.
func (e *Engine) Submit(r Request) error {
	if r.Arrival < e.now || !finite(r.Arrival) {
		r.Arrival = e.now
	}
	if len(e.slab) == cap(e.slab) {
		e.slab = make([]Seq, 0, max(256, e.expect))
	}
	e.slab = append(e.slab, Seq{Req: r.Head(), need: r.Prompt})
	s := &e.slab[len(e.slab)-1]
	if e.cfg.RecordTokens {
		e.times = append(e.times, make([]float64, 0, min(max(r.Output, 1), 4096)))
		s.tokens = int32(len(e.times))
	}
	e.all = append(e.all, s)
	if reason := e.check(r); reason != "" {
		e.reject(s, reason)
		s.finish = r.Arrival
		return fmt.Errorf("request %d rejected: %s", r.ID, reason)
	}
	if e.pc.on {
		e.pcSubmit(s, &r)
	}
	// Keep pending sorted; workloads arrive in order, so this is an append.
	if n := len(e.pending); n == 0 || e.pending[n-1].Req.Arrival <= r.Arrival {
		e.pending = append(e.pending, s)
		return nil
	}
	i := sort.Search(len(e.pending), func(i int) bool { return e.pending[i].Req.Arrival > r.Arrival })
	e.pending = append(e.pending, nil)
	copy(e.pending[i+1:], e.pending[i:])
	e.pending[i] = s
	return nil
}

func (e *Engine) check(r Request) string {
	switch {
	case r.Prompt < 1 || r.Output < 1:
		return fmt.Sprintf("prompt and output must be >= 1 token, got %d and %d", r.Prompt, r.Output)
	case e.maxCtx > 0 && r.Prompt+r.Output > e.maxCtx:
		return fmt.Sprintf("prompt %d + output %d tokens exceeds the max context of %d", r.Prompt, r.Output, e.maxCtx)
	case e.cfg.Limits.KVBlocks > 0 && e.blocksFor(r.Prompt+r.Output) > e.cfg.Limits.KVBlocks:
		return fmt.Sprintf("needs %d KV blocks but the cache holds %d", e.blocksFor(r.Prompt+r.Output), e.cfg.Limits.KVBlocks)
	}
	return ""
}

func (e *Engine) blocksFor(tokens int) int {
	return (tokens + e.cfg.Limits.BlockSize - 1) / e.cfg.Limits.BlockSize
}

// admit reserves room for s to take tokens more prefill tokens (see Queue.Admit).
func (e *Engine) admit(s *Seq, tokens int) bool {
	l := e.cfg.Limits
	if !s.admitted && l.MaxSeqs > 0 && e.active >= l.MaxSeqs {
		e.held("seqs")
		return false
	}
	if l.KVBlocks > 0 {
		want := e.blocksFor(s.kv + tokens)
		if !l.Preempt {
			want = e.blocksFor(s.Req.Prompt + s.Req.Output) // reserve the whole request up front
		}
		if extra := want - s.blocks; extra > 0 {
			if extra > e.freeKV {
				e.held("kv")
				return false
			}
			e.freeKV -= extra
			s.blocks = want
			if e.pc.on {
				e.pcTrim()
			}
		}
	}
	if !s.admitted {
		s.admitted = true
		e.active++
	}
	return true
}

// held notes, for the trace, which limit refused a sequence room this step.
func (e *Engine) held(why string) {
	if e.cfg.Trace {
		e.it.Held = why
	}
}

// preempted notes, for the trace, that s lost its KV cache this step.
func (e *Engine) preempted(s *Seq) {
	if e.cfg.Trace {
		e.it.Preempted = append(e.it.Preempted, s.Req.ID)
	}
}

func (e *Engine) release(s *Seq) {
	if e.pc.on {
		if freed := e.pcRelease(s); e.pc.limited {
			e.freeKV += freed
		}
	} else {
		e.freeKV += s.blocks
	}
	s.blocks = 0
	if s.admitted {
		s.admitted = false
		e.active--
	}
}

// Cancel withdraws the request with this ID, as a server aborts a request
// whose client went away: it leaves the queue or the batch and frees its KV
// cache. It reports false when no unfinished request has that ID. Call it
// between Steps.
func (e *Engine) Cancel(id int) bool {
	if e.lz.on {
		e.lazyLeave() // the batch's counts must be exact to take one out (the next whole step goes lazy again)
	}
	remove := func(list []*Seq) ([]*Seq, *Seq) {
		for i, s := range list {
			if s.Req.ID == id {
				return append(list[:i], list[i+1:]...), s
			}
		}
		return list, nil
	}
	var s *Seq
	if e.running, s = remove(e.running); s != nil {
		e.runKV -= s.kv
	} else if e.waiting, s = remove(e.waiting); s == nil {
		if e.pending, s = remove(e.pending); s == nil {
			return false
		}
	}
	e.release(s)
	s.cancelled, s.finish = true, e.now
	return true
}

// arrive moves requests whose arrival time has come into the queue.
func (e *Engine) arrive() {
	n := 0
	for n < len(e.pending) && e.pending[n].Req.Arrival <= e.now {
		s := e.pending[n]
		if e.role == DecodeOnly { // its KV was built elsewhere; the first token is out
			// (prefilled stays 0 until it is admitted below: a sequence in
			// waiting with its prefill done would be taken for one ready to run)
			s.need = s.Req.Prompt
			s.generated, s.first, s.last = 1, s.Req.Arrival, s.Req.Arrival
		}
		e.waiting = append(e.waiting, s)
		n++
	}
	if n > 0 { // (a pointer write only when something moved: the collector taxes them)
		e.pending = e.pending[n:]
	}
	if e.role == DecodeOnly && len(e.waiting) > 0 {
		// A decode instance cannot prefill: its KV arrives whole (a preempted
		// sequence's is taken to come back the same way, prompt + generated).
		k := 0
		for ; k < len(e.waiting) && e.admit(e.waiting[k], e.waiting[k].need); k++ {
			s := e.waiting[k]
			s.kv, s.prefilled = s.need, s.need
			e.runKV += s.kv
			e.join(s)
		}
		if k > 0 {
			e.waiting = e.waiting[k:]
		}
	}
}

// join adds s to the running batch.
func (e *Engine) join(s *Seq) {
	e.running = append(e.running, s)
	if e.lz.on {
		e.lazyJoin(s)
	}
}

// makeDecodeRoom gives every running sequence a block for its next token,
// preempting the newest running sequences (recompute) when the cache is full.
func (e *Engine) makeDecodeRoom() {
	l := e.cfg.Limits
	if l.KVBlocks == 0 || !l.Preempt {
		return
	}
	bs := l.BlockSize
	next := 1 + e.cfg.Spec.K // a speculating step writes the drafts' KV too
	for i := 0; i < len(e.running); i++ {
		s := e.running[i]
		if s.kv+next <= s.blocks*bs {
			continue // its last block has room for the next token
		}
		want := e.blocksFor(s.kv + next)
		for want > s.blocks && e.freeKV < want-s.blocks && len(e.running) > i+1 {
			e.preempt(e.running[len(e.running)-1])
		}
		if want > s.blocks && e.freeKV >= want-s.blocks {
			e.freeKV -= want - s.blocks
			s.blocks = want
			if e.pc.on {
				e.pcTrim()
			}
		} else if want > s.blocks {
			e.preempt(s) // alone and still no room: start it over later
			i--
		}
	}
}

// reclaimBehind frees the KV blocks and slots of every waiting sequence but
// the head, reporting whether any were held. Their prefill starts over.
func (e *Engine) reclaimBehind() bool {
	freed := false
	for _, s := range e.waiting[1:] {
		if s.admitted || s.blocks > 0 {
			e.preempted(s)
			e.release(s)
			s.preempted++
			s.kv, s.prefilled = 0, 0
			s.need = s.Req.Prompt + s.generated
			freed = true
		}
	}
	return freed
}

func (e *Engine) preempt(s *Seq) {
	for i, r := range e.running {
		if r == s {
			e.running = append(e.running[:i], e.running[i+1:]...)
			e.runKV -= s.kv
			break
		}
	}
	e.preempted(s)
	e.release(s)
	s.preempted++
	s.kv, s.prefilled = 0, 0
	s.need = s.Req.Prompt + s.generated // recompute what it had
	e.waiting = append([]*Seq{s}, e.waiting...)
}

// Step runs one iteration and returns it; the returned value is reused by
// the next Step. If nothing is queued it jumps the clock to the next
// arrival; with nothing submitted at all it returns false.
func (e *Engine) Step() (*Iteration, bool) {
	if e.iters >= e.cfg.Limits.MaxIterations || e.paused {
		return nil, false
	}
	if e.cfg.Pause != nil {
		if e.sincePause++; e.sincePause >= pauseEvery {
			e.sincePause = 0
			if e.cfg.Pause() {
				e.paused = true // (every later Step ends the run too)
				return nil, false
			}
		}
	}
	e.it.Rejected = e.it.Rejected[:0]
	e.it.Preempted, e.it.Held = e.it.Preempted[:0], ""
	for {
		e.arrive()
		if len(e.waiting)+len(e.running) == 0 {
			if len(e.pending) == 0 {
				return nil, false
			}
			e.now = e.pending[0].Req.Arrival
			continue
		}
		e.makeDecodeRoom()
		e.plan.Decodes, e.plan.Chunks = 0, e.plan.Chunks[:0]
		e.queue.Waiting, e.queue.Running = e.waiting, e.running
		e.cfg.Policy.Plan(&e.queue, &e.plan)
		e.plan.Decodes = max(0, min(e.plan.Decodes, len(e.running)))
		if e.plan.Decodes+len(e.plan.Chunks) > 0 {
			if e.lz.ok {
				// Lazy mode holds while each step decodes all or none of the batch.
				whole := e.plan.Decodes == len(e.running) || e.plan.Decodes == 0
				if e.lz.on && !whole {
					e.lazyLeave()
				} else if !e.lz.on && whole {
					e.lazyEnter()
				}
			}
			break
		}
		// Nothing could be scheduled and nothing runs. Partly prefilled
		// sequences queued behind the head may hold the room it needs (a
		// preempted sequence goes back to the front): take it back from them,
		// they will recompute. Only if none held any can the head never run.
		if len(e.running) == 0 && len(e.waiting) > 0 {
			if e.reclaimBehind() {
				continue
			}
			head := e.waiting[0]
			e.waiting = e.waiting[1:]
			e.release(head)
			e.reject(head, "did not fit in the KV cache or sequence limit with nothing else running")
			head.finish = e.now
			e.it.Rejected = append(e.it.Rejected, head.Req.ID)
			continue
		}
		if len(e.pending) == 0 {
			return nil, false
		}
		e.now = math.Max(e.now, e.pending[0].Req.Arrival)
	}
	return e.execute(), true
}

// execute prices the plan, advances the clock and applies its effects.
func (e *Engine) execute() *Iteration {
	it := &e.it
	it.Items, it.MaxGap = it.Items[:0], 0
	sameItems := e.lz.items && e.lz.fresh == 0 // (see lazyItems)
	e.lz.items = false
	if e.cfg.Trace && e.cfg.Limits.KVBlocks > 0 {
		it.KVBlocks = e.cfg.Limits.KVBlocks - e.freeKV
		it.KVCached = e.pc.free
	}
	decodes := e.running[:e.plan.Decodes]
	w := Work{Window: e.cfg.Step.Model.SlidingWindow}
	spec := e.cfg.Spec.K > 0 && len(decodes) > 0
	draft := 0.0
	if spec {
		plain := w
		kv := 0
		for _, s := range decodes {
			plain.AddDecode(s.kv)
			w.AddVerify(s.kv, e.cfg.Spec.K+1)
			kv += s.kv
		}
		draft = e.draftSeconds(len(decodes), float64(kv), &plain)
	} else if len(decodes) == len(e.running) && w.Window == 0 {
		n, kv := float64(len(decodes)), float64(e.runKV)
		w = Work{Tokens: n, Pairs: kv, KVTokens: kv + n, Seqs: n, Sampled: n} // what AddDecode would sum
	} else {
		for _, s := range decodes {
			w.AddDecode(s.kv)
		}
	}
	e.runKV += len(decodes) // each decode adds its token to the cache
	prefillTokens := 0
	for _, c := range e.plan.Chunks {
		w.AddChunk(c.Seq.prefilled, c.Tokens, c.Seq.prefilled+c.Tokens == c.Seq.need)
		prefillTokens += c.Tokens
		if c.Seq.pc != 0 && e.pcOf(c.Seq).fresh > 0 {
			w.NewPrompts++ // its prefill starts, after the cached prefix
		}
	}
	var secs float64
	if e.noItems { // (a whole run without a trace reads only the step's time and counts)
		if e.lecture {
			secs = e.cfg.Step.lectureSeconds(w.Tokens, w.Pairs, w.KVTokens) // Seconds without its check
		} else {
			secs = e.cfg.Step.Seconds(&w)
		}
		secs += draft
	} else {
		if e.lecture {
			it.Cost = e.cfg.Step.priceLecture(w)
		} else {
			it.Cost = e.cfg.Step.Price(w)
		}
		it.Cost.Seconds += draft
		it.Cost.Draft = draft
		secs = it.Cost.Seconds
		switch {
		case prefillTokens == 0:
			it.Kind = "decode"
		case len(decodes) == 0:
			it.Kind = "prefill"
		default:
			it.Kind = "mixed"
		}
	}
	it.Index, it.Start, it.Duration = e.iters, e.now, secs
	it.Decodes, it.Prefill = len(decodes), prefillTokens
	e.iters++
	e.now += secs
	e.busy += secs
	end := e.now

	e.done = 0
	if spec {
		e.specDecodeAll(decodes, end, it)
	} else if e.lz.on && len(decodes) > 0 {
		if !e.noItems {
			it.MaxGap = e.lazyGap(end)
		}
		e.done = e.lazyDecode(len(decodes), end) // the whole batch: nobody is touched but who finishes
		if !e.noItems {
			e.lazyItems(it, sameItems && e.done == 0)
		}
	} else {
		e.decodeAll(decodes, end, it)
	}
	decodesDone := e.done
	prefilled := 0 // chunks that completed their prefill: promoted, or done at the first token
	for _, c := range e.plan.Chunks {
		s := c.Seq
		s.prefilled += c.Tokens
		s.kv += c.Tokens
		item := Item{ID: s.Req.ID, Tokens: c.Tokens, Prefill: true}
		if s.pc != 0 {
			q := e.pcOf(s)
			item.Cached, q.fresh = int32(q.fresh), 0
			e.pcRegister(s)
		}
		if s.prefilled == s.need {
			prefilled++
			item.Emit = true
			if s.generated > 0 && end-s.last > it.MaxGap { // (a recomputed prefill's token follows earlier ones)
				it.MaxGap = end - s.last
			}
			item.Done = e.emit(s, end) || e.role == PrefillOnly
			if item.Done {
				s.done, s.finish = true, end
				e.release(s)
				e.done++
			}
		}
		if !e.noItems {
			it.Items = append(it.Items, item)
		}
	}
	if decodesDone > 0 || prefilled > 0 {
		e.compactAfter(decodesDone, prefilled)
	}
	return it
}

// decodeAll gives each of decodes its next token at end, noting the step's
// items and largest gap in it. It is emit for the batch, written out: the
// hot loop of a traced run, where a call per token is much of a step's
// cost in the browser's wasm. Equal gaps in a row (a batch mostly shares
// one) are counted at once.
func (e *Engine) decodeAll(decodes []*Seq, end float64, it *Iteration) {
	// Locals only in the loop: the browser's wasm keeps them in registers.
	keepItems, count, rec, fromElsewhere := !e.noItems, e.cfg.CountGaps, e.cfg.RecordTokens, e.role == DecodeOnly
	items := it.Items
	n := len(items)
	if keepItems {
		items = slices.Grow(items, len(decodes)+len(e.plan.Chunks))[:n+len(decodes)]
	}
	var run GapCount // the gaps being counted
	top, done := 0.0, 0
	for k, s := range decodes {
		s.kv++
		// (a decode instance's first token came from elsewhere: no recorded time)
		if s.generated > 1 || s.generated > 0 && !fromElsewhere {
			g := end - s.last
			if g > top {
				top = g
			}
			if count {
				if run.N > 0 && g == run.Gap {
					run.N++
				} else {
					if run.N > 0 {
						e.countGap(run.Gap, run.N)
					}
					run = GapCount{Gap: g, N: 1}
				}
			}
		}
		if rec {
			e.addTokens(s, end)
		}
		fin := s.token(end)
		if fin {
			done++
		}
		if keepItems {
			items[n+k] = Item{ID: s.Req.ID, Tokens: 1, Emit: true, Done: fin}
		}
	}
	if run.N > 0 {
		e.countGap(run.Gap, run.N)
	}
	e.done += done
	it.Items, it.MaxGap = items, top
}

// emit gives s its next token at time t and reports whether it is finished.
func (e *Engine) emit(s *Seq, t float64) bool {
	if e.keep {
		e.keepToken(s, t)
	}
	return s.token(t)
}

// token is emit when the token is neither counted nor recorded. It is
// small enough to be inlined: a call per token is much of a step's cost
// in the browser's wasm.
func (s *Seq) token(t float64) bool {
	if s.generated > 0 {
		if gap := t - s.last; gap > s.maxITL {
			s.maxITL = gap
		}
	} else {
		s.first = t
	}
	if s.here == 0 {
		s.here = t
	}
	s.generated++
	s.last = t
	return s.generated >= s.Req.Output
}

// keepToken counts the gap before s's next token at t, or records its
// time, as the run's config asks (emit, before s is updated).
func (e *Engine) keepToken(s *Seq, t float64) {
	if e.cfg.CountGaps && s.generated > 0 && (s.generated > 1 || e.role != DecodeOnly) {
		e.countGap(t-s.last, 1) // (a decode instance's first token came from elsewhere: no recorded time)
	}
	if e.cfg.RecordTokens {
		e.addTokens(s, t)
	}
}

// compact drops finished sequences from running and moves completed
// prefills from waiting to running, keeping both orders.
func (e *Engine) compact() {
	e.dropFinished(-1)
	e.waiting = e.promote(e.waiting)
}

// dropFinished drops finished sequences from running, keeping its order. It
// writes a pointer only where one moves: finishers are usually the oldest,
// at the front, and dropping those is a reslice. (Pointer writes are what
// the garbage collector taxes.)
//
// n is how many finished, when the caller knows (else -1): the walk stops
// at the last of them.
func (e *Engine) dropFinished(n int) {
	finished := func(s *Seq) bool {
		if s.generated < s.Req.Output {
			return false
		}
		s.done, s.finish = true, s.last
		e.runKV -= s.kv
		e.release(s)
		return true
	}
	for n != 0 && len(e.running) > 0 && finished(e.running[0]) {
		e.running = e.running[1:]
		n--
	}
	if n == 0 {
		return
	}
	k := 0
	for j, s := range e.running {
		if n != 0 && finished(s) {
			n--
			continue
		}
		if k != j {
			e.running[k] = s
		}
		k++
	}
	e.running = e.running[:k]
}

// compactAfter is compact after a step in which decodes decodes finished
// and n chunks completed their prefill. Only those can have to move. The shipped policies take their chunks from the head of the queue,
// so that is a reslice rather than a walk of a queue that can be thousands
// long when it overflows.
func (e *Engine) compactAfter(decodes, n int) {
	if !e.shippedPolicy() {
		e.compact() // other policies may prefill anywhere in the queue
		return
	}
	if decodes > 0 {
		e.dropFinished(decodes)
	}
	w := e.waiting
	i := 0
	for i < len(w) && i < n && w[i].prefilled >= w[i].need {
		i++
	}
	e.promote(w[:i])
	e.waiting = w[i:]
	if i < n {
		e.waiting = e.promote(e.waiting) // one further back: walk the queue
	}
}

// promote moves the completed prefills of list to running, in order, drops
// those finished, and returns the rest, in order, in list's array.
func (e *Engine) promote(list []*Seq) []*Seq {
	k := 0
	for j, s := range list {
		switch {
		case s.prefilled < s.need:
			if k != j {
				list[k] = s
			}
			k++
		case !s.done:
			e.runKV += s.kv
			e.join(s)
		}
	}
	return list[:k]
}
