// Package labserver is servelab's simulated lab server: an OpenAI-compatible
// HTTP API (/v1/models, /v1/completions, /v1/chat/completions, streaming and
// not) whose every token is timed by ONE sim.Engine run in real time.
//
// One driver goroutine owns the engine. Each iteration it sleeps until the
// iteration's end on the wall clock (simulated seconds times TimeScale),
// writes the frame of every token the iteration emitted (itself for a small
// batch; through one writer per CPU for a large one, each stream always in
// the same place in the order), then submits the requests that arrived
// meanwhile. So a long prompt arriving stalls every
// other stream's next token for exactly as long as the simulator says, which
// per-request fake servers cannot show. With Cadence set the engine is
// replaced by a metronome (every stream gets a token every Cadence), a
// self-test for judging a client's own timing error: its frames also carry
// "servelab_t", the server's send time, so a client's error can be told
// from the server's.
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
	MaxBodyBytes   int64         // request body limit; 0 means 64 MiB
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
	pending atomic.Int64   // emissions handed to the writers and not yet written
	wg      sync.WaitGroup // the writers
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
	left     atomic.Bool   // the client went away: deliver nothing more
	finished chan struct{} // closed by the writer after the last frame
	emitted  int           // metronome-only: tokens delivered

	mu   sync.Mutex
	over bool
	out  *response
}

// emission is a delivery from the driver to a writer: tokens for a stream
// at the simulator's time, or the request's failure.
type emission struct {
	st     *stream
	at     time.Time
	tokens int
	done   bool
	err    string
}

const (
	spinWindow  = 2 * time.Millisecond  // Go's timers wake up to ~1 ms late; spin the last stretch
	resetAfter  = 50_000                // requests before an idle engine is replaced (bounds memory)
	maxRequest  = 64 << 20              // default body limit
	maxTokens   = sim.MaxTokens         // per prompt or output
	queueDepth  = 1 << 14               // submissions waiting for the driver
	defaultChat = 256                   // max_tokens when a chat request gives none
	defaultComp = 16                    // max_tokens when a completions request gives none (OpenAI's default)
	waitAtLeast = 50 * time.Microsecond // below this a deadline counts as reached
	writeWait   = 2 * time.Second       // a client that takes longer to accept a frame is dropped
	inlineMax   = 384                   // batches up to this size the driver writes itself
	dropEvery   = 10_000                // requests between forgetting finished ones
)

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
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = maxRequest
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
	s := &Server{cfg: cfg, model: quoteJSON(cfg.ModelName), submit: make(chan *stream, queueDepth), gone: make(chan int, queueDepth),
		quit: make(chan struct{}), stopped: make(chan struct{}), started: time.Now()}
	// One writer per CPU; a stream always goes to the same writer, which
	// writes its streams in the same order every iteration, so the spread
	// of write times shows up as a fixed offset per stream, not as jitter.
	s.writers = make([]chan []emission, max(1, runtime.GOMAXPROCS(0)))
	for i := range s.writers {
		s.writers[i] = make(chan []emission, 64)
		s.wg.Add(1)
		go s.writer(s.writers[i])
	}
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

// dispatch delivers a batch of emissions. A small batch the driver writes
// itself, at once (waking another goroutine costs tens of microseconds, and
// milliseconds on a busy machine); a large one goes to the writers, each
// stream to its own writer, so a thousand streams are written in parallel.
func (s *Server) dispatch(batch []emission) {
	if len(batch) == 0 {
		return
	}
	if len(batch) <= inlineMax && s.pending.Load() == 0 {
		for _, e := range batch {
			s.write(e)
		}
		return
	}
	n := len(s.writers)
	s.pending.Add(int64(len(batch)))
	if n == 1 {
		s.writers[0] <- batch
		return
	}
	parts := make([][]emission, n)
	for _, e := range batch {
		i := e.st.id % n
		parts[i] = append(parts[i], e)
	}
	for i, p := range parts {
		if len(p) > 0 {
			s.writers[i] <- p
		}
	}
}

// writer writes the frames of its streams, batch after batch.
func (s *Server) writer(ch <-chan []emission) {
	defer s.wg.Done()
	for batch := range ch {
		for _, e := range batch {
			s.write(e)
		}
		// Only when no writer holds frames may the driver write inline
		// again, or a stream's frames could overtake each other.
		s.pending.Add(-int64(len(batch)))
	}
}

// write delivers one emission to its stream's client.
func (s *Server) write(e emission) {
	st := e.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.over {
		return
	}
	end := func() {
		st.over = true
		close(st.finished)
	}
	if e.err != "" {
		st.out.fail(e.err)
		end()
		return
	}
	if st.left.Load() {
		end()
		return
	}
	wrote, ok := st.out.tokens(e.tokens, e.done)
	if wrote {
		now := time.Now()
		s.lat.add(now.Sub(e.at))
		if o := st.out; !o.lastAt.IsZero() {
			d := now.Sub(o.lastWrite) - e.at.Sub(o.lastAt)
			s.gapErr.add(max(d, -d))
		}
		st.out.lastAt, st.out.lastWrite = e.at, now
	}
	if !ok || e.done {
		end()
	}
}

// waitUntil sleeps until t, precisely: a timer for most of the wait (Go
// timers can wake ~1 ms late), then a yielding spin. It reports false when
// the server is closing.
func (s *Server) waitUntil(t time.Time) bool {
	for {
		d := time.Until(t)
		if d < waitAtLeast {
			return true
		}
		if d > spinWindow {
			timer := time.NewTimer(d - spinWindow)
			select {
			case <-timer.C:
			case <-s.quit:
				timer.Stop()
				return false
			}
			continue
		}
		for time.Now().Before(t) {
			runtime.Gosched()
		}
		return true
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
		batch     []emission
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
		err := eng.Submit(sim.Request{ID: st.id, Arrival: eng.Now(), Prompt: st.prompt, Output: st.output})
		if err != nil {
			s.dispatch([]emission{{st: st, at: time.Now(), err: err.Error()}})
			return
		}
		streams[st.id] = st
	}
	failAll := func(msg string) {
		var b []emission
		for id, st := range streams {
			b = append(b, emission{st: st, at: time.Now(), err: msg})
			delete(streams, id)
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
				if streams[id] != nil {
					eng.Cancel(id)
					delete(streams, id)
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
					delete(streams, id)
				}
			}
			s.dispatch(b)
		}
		deadline := wall(it.End())
		if !s.waitUntil(deadline) {
			return
		}
		s.wake.add(time.Since(deadline))
		batch = batch[:0]
		for _, item := range it.Items {
			if !item.Emit {
				continue
			}
			st := streams[item.ID]
			if st == nil {
				continue
			}
			if item.Done || st.left.Load() {
				delete(streams, item.ID)
			}
			if !item.Done && st.left.Load() {
				eng.Cancel(item.ID) // the client went away: abort, as vLLM does when it notices
			}
			if !st.left.Load() {
				batch = append(batch, emission{st: st, at: deadline, tokens: 1, done: item.Done})
			}
		}
		waiting, running := eng.Queued()
		s.waiting.Store(int64(waiting))
		s.running.Store(int64(running))
		s.dispatch(slices.Clone(batch))
	}
}

// metronome is the self-test driver: every stream in flight gets one token
// at each tick of a fixed grid, so every true gap is exactly Cadence.
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
		if !s.waitUntil(next) {
			return
		}
		s.wake.add(time.Since(next))
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
		k := 0
		for _, st := range active {
			if st.left.Load() {
				continue
			}
			st.emitted++
			done := st.emitted >= st.output
			batch = append(batch, emission{st: st, at: next, tokens: 1, done: done})
			if !done {
				active[k] = st
				k++
			}
		}
		clear(active[k:])
		active = active[:k]
		s.dispatch(batch)
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
