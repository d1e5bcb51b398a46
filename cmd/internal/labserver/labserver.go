// Package labserver is servelab's simulated lab server: an OpenAI-compatible
// HTTP API (/v1/models, /v1/completions, /v1/chat/completions, streaming and
// not) whose every token is timed by ONE sim.Engine run in real time.
//
// One driver goroutine owns the engine. Each iteration it hands the frames
// of every token the iteration emits to the writers (one per CPU), sleeps
// until the iteration's end on the wall clock (simulated seconds times
// TimeScale), then submits the requests that arrived meanwhile. So a long
// prompt arriving stalls every other stream's next token for exactly as
// long as the simulator says, which per-request fake servers cannot show.
//
// A thousand frames cannot all be written at the same instant, and how long
// each write takes varies, so each stream holds a slot for its whole life:
// its writer writes its frames at the iteration's end plus a fixed offset
// (slot × a gap of about two writes), waiting for that moment if early.
// Others coming, going or writing slowly then no longer move its frames,
// and its every gap is the simulator's.
//
// A client that stops reading fills its socket buffers, and a write to it
// then blocks. A watchdog replaces a writer whose write has blocked for
// longer than stuckAfter with a fresh one, which carries on with the other
// streams on time; the blocked stream's frames queue behind its blocked
// write and are written from then on by a goroutine of its own. So a slow
// reader costs only itself: it gets its frames late, and is dropped once a
// write to it has waited writeWait.
//
// With Cadence set the engine is replaced by a metronome (every stream gets
// a token every Cadence), a self-test for judging a client's own timing
// error: its frames also carry "servelab_t", the server's send time, so a
// client's error can be told from the server's.
//
// Prompt length is counted as whitespace-separated words times
// TokensPerWord; the lab's prompts are lists of integers, one "token" each
// in the lab script's own accounting.
//
// A client that goes away stops receiving frames at once and its request is
// aborted (Engine.Cancel) before the next iteration, wherever it is.
package labserver

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"servelab/sim"
)

// Config is the lab server's setup.
type Config struct {
	Engine         sim.Config    // step model, policy and limits of the one simulated engine
	ModelName      string        // model id served; default the step model's name
	MaxModelLen    int           // longest prompt+max_tokens accepted; 0: the model's max context
	TimeScale      float64       // wall seconds per simulated second; 0 means 1 (2 = half speed)
	StreamInterval int           // tokens per SSE frame, as vLLM's --stream-interval; 0 means 1
	Cadence        time.Duration // > 0: self-test mode, a token every Cadence on every stream, no engine
	TokensPerWord  float64       // prompt tokens per whitespace-separated word; 0 means 1
	NaturalLen     int           // without ignore_eos a response ends after this many tokens; 0: never early
	APIKey         string        // when set, every /v1 request needs "Authorization: Bearer <APIKey>"
	MaxBodyBytes   int64         // request body limit; 0: sized to MaxModelLen (bodyLimit)
}

// Server is a running lab server. Its Handler serves the API; Close stops it.
type Server struct {
	cfg     Config
	model   []byte // JSON-quoted model name, spliced into every frame
	submit  chan *stream
	gone    chan int // IDs of streams whose clients went away, for the driver to abort
	quit    chan struct{}
	stopped chan struct{} // closed when the driver and the writers are gone
	closing sync.Once
	writers []chan []emission
	roles   []*writerRole  // per writer: its batches and the goroutine doing its job now
	wg      sync.WaitGroup // the writers' goroutines (replaced ones too) and the slow streams' drains
	slots   slots          // the driver's: each stream's writer and place in time
	cost    []atomic.Int64 // per writer: how long its writes take lately, in ns (a moving average)
	nextID  atomic.Int64
	active  atomic.Int64
	started time.Time
	lat     lateness // frame written minus the simulator's time for it
	gapErr  lateness // |gap between a stream's writes - gap the simulator says|
	wake    lateness // driver woke up minus the iteration's end
	iters   atomic.Int64
	reqs    atomic.Int64
	running atomic.Int64 // sequences decoding in the engine after the last iteration
	waiting atomic.Int64 // sequences waiting for (more) prefill after the last iteration
}

// stream is one request in flight. Its handler writes the headers, then
// hands the response to the writers until the last frame: st.mu is held
// while anything writes, and after over is set nobody writes again.
type stream struct {
	id       int
	prompt   int
	output   int
	blocks   []uint64      // the prompt's block names (prefix caching)
	sent     int           // driver-owned: tokens the engine has given it
	left     atomic.Bool   // the client went away: deliver nothing more
	finished chan struct{} // closed by the writer after the last frame
	emitted  int           // metronome-only: tokens delivered
	writer   int           // driver-owned: the writer that writes this stream (fixed once placed)
	slot     int           // driver-owned: its place in the writer's order once placed; -1 once released
	offset   time.Duration // driver-owned: its frames are written this long after the simulator's time
	placed   bool          // it has had a writer and slot

	mu   sync.Mutex
	over bool
	out  *response

	// Frames waiting for the one writing this stream (write): usually just
	// the frame being written; more behind a write that blocks.
	qmu      sync.Mutex
	queue    []emission
	slow     atomic.Bool // a write to it blocked: its frames are written by drainSlow
	draining atomic.Bool // a drainSlow goroutine is running for it
}

// push queues e for st's writer.
func (st *stream) push(e emission) {
	st.qmu.Lock()
	st.queue = append(st.queue, e)
	st.qmu.Unlock()
}

// pop takes the oldest queued frame; ok is false when none is queued.
func (st *stream) pop() (e emission, ok bool) {
	st.qmu.Lock()
	defer st.qmu.Unlock()
	if len(st.queue) == 0 {
		return e, false
	}
	e = st.queue[0]
	n := copy(st.queue, st.queue[1:])
	st.queue[n] = emission{}
	st.queue = st.queue[:n]
	return e, true
}

// queued reports whether a frame is waiting.
func (st *stream) queued() bool {
	st.qmu.Lock()
	defer st.qmu.Unlock()
	return len(st.queue) > 0
}

// writerRole is one writer's job: its channel of batches, the batch being
// written (shared, so that a replacement goroutine carries on where a
// blocked one stopped) and the goroutine doing it now.
type writerRole struct {
	ch    chan []emission
	cost  *atomic.Int64
	cur   atomic.Pointer[batchCursor]
	owner atomic.Pointer[writerRun]
}

// batchCursor is a batch and the index of its next emission to write.
type batchCursor struct {
	items []emission
	next  atomic.Int64
}

// writerRun is one goroutine doing a writer's job. busy is when its current
// write to a client began (UnixNano), 0 when it is not writing, and
// replaced once the watchdog has handed its job to another goroutine.
type writerRun struct {
	busy atomic.Int64
}

const replaced = -1

// emission is a delivery from the driver to a writer: tokens for a stream
// at the simulator's time, or the request's failure.
type emission struct {
	st     *stream
	at     time.Time // the simulator's time for it
	due    time.Time // when to write it: at plus the stream's slot offset; zero: at once
	tokens int
	done   bool
	err    string
}

const (
	spinWindow  = time.Millisecond       // Go's timers wake up to ~0.3 ms late (p99), rarely more; spin the last stretch
	busyWindow  = 50 * time.Microsecond  // the last stretch spins without yielding: a yield can cost more
	firstWrite  = 25 * time.Microsecond  // a slow loopback write: the guess until writes have been timed
	minGap      = 1 * time.Microsecond   // between a writer's slots
	maxGap      = 100 * time.Microsecond //
	resetAfter  = 50_000                 // requests before an idle engine is replaced (bounds memory)
	bodySlack   = 1 << 20                // bodyLimit: JSON, chat framing, other fields
	bytesPerTok = 16                     // bodyLimit: a word or token id and its separator (run.py: 6)
	maxTokens   = sim.MaxTokens          // per prompt or output
	queueDepth  = 1 << 14                // submissions waiting for the driver
	defaultChat = 256                    // max_tokens when a chat request gives none
	defaultComp = 16                     // max_tokens when a completions request gives none (OpenAI's default)
	writeWait   = 2 * time.Second        // a client that takes longer to accept a frame is dropped
	stuckAfter  = 2 * time.Millisecond   // a writer whose write has blocked this long is replaced (watch)
	watchIdle   = 50 * time.Millisecond  // the watchdog's period while no stream is active
	dropEvery   = 10_000                 // requests between forgetting finished ones
)

// bodyLimit is the default request body limit: room for a prompt that fills
// the context (tokens as words, or token ids) and the request's other
// fields, so that a few concurrent bodies cannot hold gigabytes.
func bodyLimit(maxModelLen int, tokensPerWord float64) int64 {
	perTok := float64(bytesPerTok) * max(1, 1/tokensPerWord)
	return bodySlack + int64(float64(maxModelLen)*perTok)
}

// New checks cfg, builds the engine and starts the driver and the writers.
func New(cfg Config) (*Server, error) {
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 1
	}
	if !(cfg.TimeScale > 0) || cfg.TimeScale > 1e6 {
		return nil, fmt.Errorf("time scale must be in (0, 1e6] wall seconds per simulated second, got %g", cfg.TimeScale)
	}
	if cfg.StreamInterval == 0 {
		cfg.StreamInterval = 1
	}
	if cfg.StreamInterval < 1 || cfg.StreamInterval > 1<<20 {
		return nil, fmt.Errorf("stream interval must be in 1..%d tokens per frame, got %d", 1<<20, cfg.StreamInterval)
	}
	if cfg.Cadence < 0 || (cfg.Cadence > 0 && cfg.Cadence < 100*time.Microsecond) || cfg.Cadence > time.Hour {
		return nil, fmt.Errorf("cadence must be 0 (off) or between 100µs and 1h, got %v", cfg.Cadence)
	}
	if cfg.TokensPerWord == 0 {
		cfg.TokensPerWord = 1
	}
	if !(cfg.TokensPerWord > 0) || cfg.TokensPerWord > 1000 {
		return nil, fmt.Errorf("tokens per word must be in (0, 1000], got %g", cfg.TokensPerWord)
	}
	if cfg.NaturalLen < 0 || cfg.MaxModelLen < 0 || cfg.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("natural length, max model length and body limit must not be negative")
	}
	if cfg.Cadence == 0 {
		if cfg.Engine.Policy == nil {
			p, err := sim.NewPolicy("chunked", 0)
			if err != nil {
				return nil, err
			}
			cfg.Engine.Policy = p
		}
		if _, err := sim.NewEngine(cfg.Engine); err != nil {
			return nil, err
		}
	}
	if cfg.ModelName == "" {
		cfg.ModelName = cfg.Engine.Step.Model.Name
		if cfg.ModelName == "" {
			cfg.ModelName = "servelab-lab"
		}
	}
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = cfg.Engine.Step.Model.MaxContext
	}
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = 1 << 20
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = bodyLimit(cfg.MaxModelLen, cfg.TokensPerWord)
	}
	s := &Server{cfg: cfg, model: quoteJSON(cfg.ModelName), submit: make(chan *stream, queueDepth), gone: make(chan int, queueDepth),
		quit: make(chan struct{}), stopped: make(chan struct{}), started: time.Now()}
	// One writer per CPU; a stream always goes to the same writer, at the
	// same offset from every iteration's end (its slot).
	s.writers = make([]chan []emission, max(1, runtime.GOMAXPROCS(0)))
	s.slots, s.cost = newSlots(len(s.writers)), make([]atomic.Int64, len(s.writers))
	s.roles = make([]*writerRole, len(s.writers))
	for i := range s.writers {
		s.writers[i] = make(chan []emission, 64)
		r := &writerRole{ch: s.writers[i], cost: &s.cost[i]}
		run := &writerRun{}
		r.owner.Store(run)
		s.roles[i] = r
		s.wg.Add(1)
		go s.writer(r, run)
	}
	watchDone := make(chan struct{})
	go s.watch(watchDone)
	go func() {
		if cfg.Cadence > 0 {
			s.metronome()
		} else {
			s.drive()
		}
		s.failQueued()
		for _, w := range s.writers {
			close(w)
		}
		s.wg.Wait()
		close(watchDone)
		close(s.stopped)
	}()
	return s, nil
}

// Close stops the driver; streams in flight end with an error frame.
func (s *Server) Close() {
	s.closing.Do(func() { close(s.quit) })
	<-s.stopped
}

// Config returns the server's configuration with defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// enqueue passes a new stream to the driver, failing when it is closing or swamped.
func (s *Server) enqueue(st *stream) error {
	select {
	case <-s.quit:
		return errors.New("the lab server is shutting down")
	default:
	}
	select {
	case s.submit <- st:
		s.reqs.Add(1)
		return nil
	default:
		return errors.New("too many requests waiting for the engine")
	}
}

// failQueued fails the streams still waiting for the driver at shutdown.
func (s *Server) failQueued() {
	var batch []emission
	for {
		select {
		case st := <-s.submit:
			batch = append(batch, emission{st: st, at: time.Now(), err: "the lab server is shutting down"})
		default:
			s.dispatch(batch)
			return
		}
	}
}

// dispatch hands a batch of emissions to the writers, each to its stream's
// writer (so a stream's frames never overtake each other), in the order
// they are due.
func (s *Server) dispatch(batch []emission) {
	if len(batch) == 0 {
		return
	}
	parts := make([][]emission, len(s.writers))
	for _, e := range batch {
		parts[e.st.writer] = append(parts[e.st.writer], e)
	}
	for i, p := range parts {
		if len(p) > 0 {
			slices.SortStableFunc(p, func(a, b emission) int { return a.due.Compare(b.due) })
			s.writers[i] <- p
		}
	}
}

// writer does r's job as run: it writes the frames of r's streams, each
// when it is due, and keeps r's cost up to date with how long a write
// takes. It returns when r's channel is closed, or right after the write
// during which the watchdog replaced it.
func (s *Server) writer(r *writerRole, run *writerRun) {
	defer s.wg.Done()
	avg := r.cost.Load() // a replacement carries on with the average so far
	if avg == 0 {
		avg = int64(firstWrite)
	}
	for {
		cur := r.cur.Load()
		if cur == nil || cur.next.Load() >= int64(len(cur.items)) {
			batch, ok := <-r.ch
			if !ok {
				return
			}
			cur = &batchCursor{items: batch}
			r.cur.Store(cur)
		}
		for {
			i := cur.next.Add(1) - 1
			if i >= int64(len(cur.items)) {
				break
			}
			e := cur.items[i]
			if !e.due.IsZero() {
				s.waitUntil(e.due) // when closing, write at once: the error frames follow
			}
			took := s.write(e, run)
			if run.busy.Load() == replaced {
				return // another goroutine has the job; this write's time says nothing about the others
			}
			if took > 0 {
				avg += (int64(took) - avg) / 32
			}
		}
		r.cost.Store(avg)
	}
}

// watch is the watchdog: a writer whose write to one client has blocked for
// longer than stuckAfter (a client not reading, its socket buffers full)
// gets a fresh goroutine that carries on with the writer's other streams
// from the next emission, so they keep their times; when the blocked write
// returns, its stream is marked slow. It runs until done is closed.
func (s *Server) watch(done <-chan struct{}) {
	timer := time.NewTimer(watchIdle)
	defer timer.Stop()
	for {
		select {
		case <-done:
			return
		case <-timer.C:
		}
		now := time.Now().UnixNano()
		for _, r := range s.roles {
			run := r.owner.Load()
			b := run.busy.Load()
			if b > 0 && now-b > int64(stuckAfter) && run.busy.CompareAndSwap(b, replaced) {
				next := &writerRun{}
				r.owner.Store(next)
				s.wg.Add(1) // the blocked goroutine is still counted, so the count is not zero
				go s.writer(r, next)
			}
		}
		if s.active.Load() > 0 {
			timer.Reset(stuckAfter / 2)
		} else {
			timer.Reset(watchIdle)
		}
	}
}

// schedule returns the slot gap for the streams placed now, in iterations
// period long with inFlight streams, and how many streams one writer can
// take. The slots fit in the first half of the period, so that no frame is
// held back for long. A writer takes as many streams as it can write at
// twice its recent write time, so that it keeps ahead of its slots (or its
// lateness would pile up from slot to slot); only the rest go to the next
// writer, as every busy writer is a thread spinning for its slots. In the
// self-test (cadence) mode, where precision is all that matters, the slots
// spread over that whole half period; with the engine, where a frame's
// delay adds to what a client measures, they are no further apart than two
// writes. Streams placed earlier keep their offsets.
func (s *Server) schedule(period time.Duration, inFlight int) (gap time.Duration, perWriter int) {
	var c int64
	for i := range s.cost {
		c = max(c, s.cost[i].Load())
	}
	write := max(time.Duration(c)*2, minGap)
	perWriter = max(1, int(period/2/write))
	gap = min(maxGap, period/2/time.Duration(max(1, s.slots.most(), min(inFlight, perWriter))))
	if s.cfg.Cadence == 0 {
		gap = min(gap, write)
	}
	return max(gap, minGap).Round(time.Microsecond / 4), perWriter
}

// slots places streams in time: writer w writes the stream in its slot k at
// an iteration's end plus k × the slot gap. A new stream takes the first
// free slot of the first writer with room (the least loaded one when none
// has) and keeps it until it ends.
type slots struct {
	used [][]bool // per writer: which slots are taken
	n    []int    // per writer: how many
}

func newSlots(writers int) slots {
	return slots{used: make([][]bool, writers), n: make([]int, writers)}
}

// most is the largest number of slots any writer has held at once.
func (t *slots) most() int {
	m := 0
	for _, u := range t.used {
		m = max(m, len(u))
	}
	return m
}

// place gives st a writer (one with fewer than perWriter streams if any),
// a slot and, from the slot gap now, its offset, unless it has had them.
// The offset never changes after, even if the gap does: a stream's frames
// keep their place in time.
func (t *slots) place(st *stream, gap time.Duration, perWriter int) {
	if st.placed {
		return
	}
	w := slices.IndexFunc(t.n, func(n int) bool { return n < perWriter })
	if w < 0 {
		w = 0
		for i := range t.n {
			if t.n[i] < t.n[w] {
				w = i
			}
		}
	}
	k := slices.Index(t.used[w], false)
	if k < 0 {
		k = len(t.used[w])
		t.used[w] = append(t.used[w], false)
	}
	t.used[w][k] = true
	t.n[w]++
	st.writer, st.slot, st.offset, st.placed = w, k, time.Duration(k)*gap, true
}

// release frees st's slot; its writer stays, for any failure frame to come.
func (t *slots) release(st *stream) {
	if st.slot < 0 || !st.placed {
		return
	}
	t.used[st.writer][st.slot] = false
	t.n[st.writer]--
	st.slot = -1
}

// write delivers one emission to its stream's client, as run, or queues it
// behind a write to that client in progress elsewhere (whose goroutine then
// writes it, in order). A slow stream's frames go to its own goroutine
// (drainSlow). It returns how long writing a frame took, or 0 when it
// wrote none.
func (s *Server) write(e emission, run *writerRun) (took time.Duration) {
	st := e.st
	st.push(e)
	if st.slow.Load() {
		s.startDrain(st)
		return 0
	}
	// Whoever holds st.mu writes what is queued, and after letting go looks
	// again, so no frame is left behind.
	for st.mu.TryLock() {
		took = max(took, s.drainLocked(st, run))
		st.mu.Unlock()
		if !st.queued() {
			break
		}
	}
	return took
}

// startDrain starts st's drainSlow goroutine unless one is running.
func (s *Server) startDrain(st *stream) {
	if st.draining.CompareAndSwap(false, true) {
		s.wg.Add(1) // from a writer, which is counted
		go s.drainSlow(st)
	}
}

// drainSlow writes a slow stream's queued frames, blocking on that client
// alone, and returns when none is left.
func (s *Server) drainSlow(st *stream) {
	defer s.wg.Done()
	for {
		st.mu.Lock()
		s.drainLocked(st, nil)
		st.mu.Unlock()
		st.draining.Store(false)
		if !st.queued() || !st.draining.CompareAndSwap(false, true) {
			return
		}
	}
}

// drainLocked writes st's queued frames in order; st.mu is held. run, when
// not nil, is marked busy during each write, for the watchdog. It returns
// the longest time a frame took to write.
func (s *Server) drainLocked(st *stream, run *writerRun) (took time.Duration) {
	for {
		e, ok := st.pop()
		if !ok {
			return took
		}
		took = max(took, s.writeLocked(e, run))
	}
}

// writeLocked delivers one emission to its stream's client; e.st.mu is
// held. It returns how long writing a frame took, or 0 when it wrote none.
// A client whose write fails (gone, or not reading for writeWait) is
// dropped: its stream ends and the driver aborts its request.
func (s *Server) writeLocked(e emission, run *writerRun) (took time.Duration) {
	st := e.st
	if st.over {
		return 0
	}
	end := func() {
		st.over = true
		close(st.finished)
	}
	start := time.Now()
	if run != nil && run.busy.CompareAndSwap(0, start.UnixNano()) {
		defer func() {
			if !run.busy.CompareAndSwap(start.UnixNano(), 0) {
				st.slow.Store(true) // the watchdog found this write blocked
			}
		}()
	}
	if e.err != "" {
		st.out.fail(e.err)
		end()
		return 0
	}
	if st.left.Load() {
		end()
		return 0
	}
	wrote, ok := st.out.tokens(e.tokens, e.done)
	if wrote {
		now := time.Now()
		took = now.Sub(start)
		s.lat.add(now.Sub(e.at))
		if o := st.out; !o.lastAt.IsZero() {
			d := now.Sub(o.lastWrite) - e.at.Sub(o.lastAt)
			s.gapErr.add(max(d, -d))
		}
		st.out.lastAt, st.out.lastWrite = e.at, now
	}
	if !ok {
		st.left.Store(true) // the driver aborts the request at its next token
	}
	if !ok || e.done {
		end()
	}
	return took
}

// sleepUntil sleeps until about t (Go timers can wake ~1 ms late): enough for
// the driver, whose frames were handed out ahead and are timed by the
// writers. It reports false at once when the server is closing.
func (s *Server) sleepUntil(t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.quit:
		return false
	}
}

// waitUntil sleeps until t, precisely: a timer for most of the wait (Go
// timers can wake ~1 ms late), then a spin that yields to other goroutines,
// and for the last few microseconds one that does not. It reports false at
// once when the server is closing.
func (s *Server) waitUntil(t time.Time) bool {
	for {
		d := time.Until(t)
		switch {
		case d <= 0:
			return true
		case d > spinWindow:
			timer := time.NewTimer(d - spinWindow)
			select {
			case <-timer.C:
			case <-s.quit:
				timer.Stop()
				return false
			}
		case d > busyWindow:
			select {
			case <-s.quit:
				return false
			default:
				runtime.Gosched()
			}
		}
	}
}

// drive is the engine's real-time driver: the one loop that turns simulated
// iterations into token deliveries.
func (s *Server) drive() {
	var (
		eng       *sim.Engine
		base      time.Time // wall time of simulated 0
		submitted int
		streams   = map[int]*stream{}
	)
	fresh := func() {
		eng, _ = sim.NewEngine(s.cfg.Engine) // validated in New
		base, submitted = time.Now(), 0
	}
	fresh()
	wall := func(simT float64) time.Time {
		return base.Add(time.Duration(simT * s.cfg.TimeScale * float64(time.Second)))
	}
	add := func(st *stream) {
		submitted++
		if submitted%dropEvery == 0 {
			eng.DropFinished() // an engine that never idles must not keep every request it served
		}
		err := eng.Submit(sim.Request{ID: st.id, Arrival: eng.Now(), Prompt: st.prompt, Output: st.output, Blocks: st.blocks})
		if err != nil {
			s.dispatch([]emission{{st: st, at: time.Now(), err: err.Error()}})
			return
		}
		streams[st.id] = st
	}
	drop := func(st *stream) {
		delete(streams, st.id)
		s.slots.release(st)
	}
	failAll := func(msg string) {
		var b []emission
		for _, st := range streams {
			b = append(b, emission{st: st, at: time.Now(), err: msg})
			drop(st)
		}
		s.dispatch(b)
	}
	defer func() { failAll("the lab server is shutting down") }()
	for {
		if !eng.Busy() {
			if submitted >= resetAfter || len(streams) > 0 {
				failAll("the engine could not schedule this request")
				fresh()
			}
			select {
			case st := <-s.submit:
				eng.AdvanceTo(time.Since(base).Seconds() / s.cfg.TimeScale)
				add(st)
			case <-s.quit:
				return
			}
		}
	drain:
		for {
			select {
			case st := <-s.submit:
				add(st)
			case id := <-s.gone:
				// Abort it wherever it is, queued or prefilling too: a client
				// that gave up on a long prompt must not stall everyone.
				if st := streams[id]; st != nil {
					eng.Cancel(id)
					drop(st)
				}
			default:
				break drain
			}
		}
		it, ok := eng.Step()
		if !ok {
			if eng.Busy() { // the iteration cap: start over rather than hang
				failAll("the simulated engine hit its iteration limit")
				fresh()
			}
			continue
		}
		s.iters.Add(1)
		if len(it.Rejected) > 0 { // found unable ever to run: say so now, not when the engine idles
			var b []emission
			for _, id := range it.Rejected {
				if st := streams[id]; st != nil {
					b = append(b, emission{st: st, at: time.Now(), err: "the engine could not schedule this request (KV cache or sequence limit)"})
					drop(st)
				}
			}
			s.dispatch(b)
		}
		// The frames go to the writers now, before the iteration's end, so
		// each writer is awake and waiting when its first slot comes.
		deadline := wall(it.End())
		batch := make([]emission, 0, len(it.Items))
		gap, perWriter := s.schedule(deadline.Sub(wall(it.Start)), len(streams))
		var ended []*stream
		for _, item := range it.Items {
			if item.Cached > 0 { // its prefill starts after a cached prefix: usage reports it
				if st := streams[item.ID]; st != nil {
					st.out.f.cached.Store(item.Cached)
				}
			}
			if !item.Emit {
				continue
			}
			st := streams[item.ID]
			if st == nil {
				continue
			}
			left := st.left.Load()
			if !left {
				s.slots.place(st, gap, perWriter)
				n := 1
				if item.Accepted > 0 { // a speculating step: its accepted drafts too, up to the output
					n = min(int(item.Accepted)+1, st.output-st.sent)
				}
				st.sent += n
				batch = append(batch, emission{st: st, at: deadline, due: deadline.Add(st.offset), tokens: n, done: item.Done})
			}
			if item.Done || left {
				ended = append(ended, st) // after the loop, so no other stream takes its slot in this batch
			}
			if !item.Done && left {
				eng.Cancel(item.ID) // the client went away: abort, as vLLM does when it notices
			}
		}
		for _, st := range ended {
			drop(st)
		}
		waiting, running := eng.Queued()
		s.waiting.Store(int64(waiting))
		s.running.Store(int64(running))
		s.dispatch(batch)
		if !s.sleepUntil(deadline) {
			return
		}
		s.wake.add(time.Since(deadline))
	}
}

// metronome is the self-test driver: every stream in flight gets one token
// at each tick of a fixed grid, so every true gap is exactly Cadence. As in
// drive, a tick's frames go to the writers a tick ahead.
func (s *Server) metronome() {
	var active []*stream
	d := s.cfg.Cadence
	next := time.Now().Add(d)
	defer func() {
		var b []emission
		for _, st := range active {
			b = append(b, emission{st: st, at: time.Now(), err: "the lab server is shutting down"})
		}
		s.dispatch(b)
	}()
	for {
		if len(active) == 0 {
			select {
			case st := <-s.submit:
				active = append(active, st)
				// Stay on the grid: the next tick after now.
				if now := time.Now(); next.Before(now) {
					next = next.Add((now.Sub(next)/d + 1) * d)
				}
			case <-s.quit:
				return
			}
		}
	drain:
		for {
			select {
			case st := <-s.submit:
				active = append(active, st)
			default:
				break drain
			}
		}
		s.iters.Add(1)
		batch := make([]emission, 0, len(active))
		gap, perWriter := s.schedule(d, len(active))
		var ended []*stream
		k := 0
		for _, st := range active {
			if st.left.Load() {
				ended = append(ended, st)
				continue
			}
			s.slots.place(st, gap, perWriter)
			st.emitted++
			done := st.emitted >= st.output
			batch = append(batch, emission{st: st, at: next, due: next.Add(st.offset), tokens: 1, done: done})
			if done {
				ended = append(ended, st)
			} else {
				active[k] = st
				k++
			}
		}
		for _, st := range ended {
			s.slots.release(st) // after the loop, so no other stream takes its slot in this batch
		}
		clear(active[k:])
		active = active[:k]
		s.dispatch(batch)
		if !s.sleepUntil(next) {
			return
		}
		s.wake.add(time.Since(next))
		next = next.Add(d)
	}
}

// Stats is the server's own account of its timing.
type Stats struct {
	Frames       int64   `json:"frames"`         // SSE frames with tokens written
	LateP50ms    float64 `json:"late_p50_ms"`    // frame written minus the simulator's time for it
	LateP99ms    float64 `json:"late_p99_ms"`    //
	LateMaxms    float64 `json:"late_max_ms"`    //
	GapErrP50ms  float64 `json:"gap_err_p50_ms"` // |gap between a stream's writes - the simulator's gap|
	GapErrP99ms  float64 `json:"gap_err_p99_ms"` //
	GapErrMaxms  float64 `json:"gap_err_max_ms"` //
	WakeP99ms    float64 `json:"wake_p99_ms"`    // driver woke up minus the iteration's end
	Iterations   int64   `json:"iterations"`     // engine iterations (or metronome ticks)
	Requests     int64   `json:"requests"`       // requests accepted
	Active       int64   `json:"active_streams"` // streams being written now
	Running      int64   `json:"engine_running"` // sequences decoding in the engine (a vanished client's is aborted)
	Waiting      int64   `json:"engine_waiting"` // sequences waiting for (more) prefill
	UptimeS      float64 `json:"uptime_s"`
	Mode         string  `json:"mode"` // "engine" or "cadence"
	Policy       string  `json:"policy,omitempty"`
	TimeScale    float64 `json:"time_scale"`
	CadenceMs    float64 `json:"cadence_ms,omitempty"`
	StreamTokens int     `json:"stream_interval"`
}

// Stats reports timing so far; with reset the counters start again.
func (s *Server) Stats(reset bool) Stats {
	st := Stats{Iterations: s.iters.Load(), Requests: s.reqs.Load(), Active: s.active.Load(), Running: s.running.Load(), Waiting: s.waiting.Load(),
		UptimeS: time.Since(s.started).Seconds(), TimeScale: s.cfg.TimeScale, StreamTokens: s.cfg.StreamInterval}
	n, p50, p99, mx := s.lat.snapshot(reset)
	st.Frames, st.LateP50ms, st.LateP99ms, st.LateMaxms = n, p50, p99, mx
	_, st.GapErrP50ms, st.GapErrP99ms, st.GapErrMaxms = s.gapErr.snapshot(reset)
	_, _, st.WakeP99ms, _ = s.wake.snapshot(reset)
	if s.cfg.Cadence > 0 {
		st.Mode, st.CadenceMs = "cadence", float64(s.cfg.Cadence)/1e6
	} else {
		st.Mode, st.Policy = "engine", s.cfg.Engine.Policy.Name()
	}
	return st
}

// lateness is a histogram of delays in 10 µs buckets up to 1 s.
type lateness struct {
	mu      sync.Mutex
	buckets [100_000]uint32
	n       int64
	max     time.Duration
}

const bucket = 10 * time.Microsecond

func (l *lateness) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := int(d / bucket)
	l.mu.Lock()
	if i >= len(l.buckets) {
		i = len(l.buckets) - 1
	}
	l.buckets[i]++
	l.n++
	l.max = max(l.max, d)
	l.mu.Unlock()
}

// snapshot returns the count and the p50, p99 and max in milliseconds
// (bucket upper edges, so never optimistic).
func (l *lateness) snapshot(reset bool) (n int64, p50, p99, mx float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, mx = l.n, float64(l.max)/1e6
	at := func(p float64) float64 {
		if l.n == 0 {
			return 0
		}
		want := int64(p*float64(l.n-1)) + 1
		var seen int64
		for i, c := range l.buckets {
			seen += int64(c)
			if seen >= want {
				return min(float64(time.Duration(i+1)*bucket)/1e6, mx)
			}
		}
		return mx
	}
	p50, p99 = at(0.50), at(0.99)
	if reset {
		l.buckets, l.n, l.max = [100_000]uint32{}, 0, 0
	}
	return n, p50, p99, mx
}
