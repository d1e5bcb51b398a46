// Package labserver is servelab's simulated lab server: an OpenAI-compatible
// HTTP API (/v1/models, /v1/completions, /v1/chat/completions, streaming and
// not) whose every token is timed by ONE sim.Engine run in real time.
//
// One driver goroutine owns the engine. Each iteration it sleeps until the
// iteration's end on the wall clock (simulated seconds times TimeScale),
// hands every emitted token to its stream's handler, then submits the
// requests that arrived meanwhile. So a long prompt arriving stalls every
// other stream's next token for exactly as long as the simulator says, which
// per-request fake servers cannot show. With Cadence set the engine is
// replaced by a metronome (every stream gets a token every Cadence), a
// self-test for judging a client's own timing error.
//
// Prompt length is counted as whitespace-separated words times
// TokensPerWord; the lab's prompts are lists of integers, one "token" each
// in the lab script's own accounting.
//
// A client that goes away stops receiving frames at once; its request keeps
// its place in the simulated batch until it finishes (sim.Engine has no
// cancellation), as a real server keeps computing until it notices.
package labserver

import (
	"errors"
	"fmt"
	"runtime"
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
	quit    chan struct{}
	stopped chan struct{}
	closing sync.Once
	nextID  atomic.Int64
	active  atomic.Int64
	started time.Time
	lat     lateness // handler frames: write done minus intended time
	wake    lateness // driver: wake-up minus intended time
	iters   atomic.Int64
	reqs    atomic.Int64
}

// event is one delivery from the driver to a stream's handler.
type event struct {
	at     time.Time // when the simulator says these tokens exist
	tokens int
	done   bool
	err    string // the request failed (rejected, or the server is closing)
}

// stream is one request in flight between its handler and the driver.
type stream struct {
	id      int
	prompt  int
	output  int
	events  chan event
	gone    atomic.Bool // the client went away; stop delivering
	emitted int         // driver-only: tokens delivered
}

// deliver hands ev to the handler without ever blocking the driver: a
// handler that is a whole buffer behind has a stuck client and is dropped.
func (st *stream) deliver(ev event) {
	if st.gone.Load() {
		return
	}
	select {
	case st.events <- ev:
	default:
		st.gone.Store(true)
	}
}

const (
	eventBuffer = 4096                  // tokens a handler may lag behind before it is dropped
	spinWindow  = 2 * time.Millisecond  // Go's timers wake up to ~1 ms late; spin the last stretch
	resetAfter  = 50_000                // requests before an idle engine is replaced (bounds memory)
	maxRequest  = 64 << 20              // default body limit
	maxTokens   = sim.MaxTokens         // per prompt or output
	queueDepth  = 1 << 14               // submissions waiting for the driver
	defaultChat = 256                   // max_tokens when a chat request gives none
	defaultComp = 16                    // max_tokens when a completions request gives none (OpenAI's default)
	waitAtLeast = 50 * time.Microsecond // below this a deadline counts as reached
)

// New checks cfg, builds the engine and starts the driver.
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
	s := &Server{cfg: cfg, model: quoteJSON(cfg.ModelName), submit: make(chan *stream, queueDepth),
		quit: make(chan struct{}), stopped: make(chan struct{}), started: time.Now()}
	if cfg.Cadence > 0 {
		go s.metronome()
	} else {
		go s.drive()
	}
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
	defer close(s.stopped)
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
		err := eng.Submit(sim.Request{ID: st.id, Arrival: eng.Now(), Prompt: st.prompt, Output: st.output})
		if err != nil {
			st.deliver(event{at: time.Now(), err: err.Error()})
			return
		}
		streams[st.id] = st
	}
	failAll := func(msg string) {
		for id, st := range streams {
			st.deliver(event{at: time.Now(), err: msg})
			delete(streams, id)
		}
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
		deadline := wall(it.End())
		if !s.waitUntil(deadline) {
			return
		}
		s.wake.add(time.Since(deadline))
		for _, item := range it.Items {
			if !item.Emit {
				continue
			}
			st := streams[item.ID]
			if st == nil {
				continue
			}
			st.deliver(event{at: deadline, tokens: 1, done: item.Done})
			if item.Done {
				delete(streams, item.ID)
			}
		}
	}
}

// metronome is the self-test driver: every stream in flight gets one token
// at each tick of a fixed grid, so every true gap is exactly Cadence.
func (s *Server) metronome() {
	defer close(s.stopped)
	var active []*stream
	d := s.cfg.Cadence
	next := time.Now().Add(d)
	defer func() {
		for _, st := range active {
			st.deliver(event{at: time.Now(), err: "the lab server is shutting down"})
		}
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
		k := 0
		for _, st := range active {
			st.emitted++
			done := st.emitted >= st.output
			st.deliver(event{at: next, tokens: 1, done: done})
			if !done && !st.gone.Load() {
				active[k] = st
				k++
			}
		}
		clear(active[k:])
		active = active[:k]
		next = next.Add(d)
	}
}

// Stats is the server's own account of its timing.
type Stats struct {
	Frames       int64   `json:"frames"`         // SSE frames with tokens written
	LateP50ms    float64 `json:"late_p50_ms"`    // frame written minus the simulator's time for it
	LateP99ms    float64 `json:"late_p99_ms"`    //
	LateMaxms    float64 `json:"late_max_ms"`    //
	WakeP99ms    float64 `json:"wake_p99_ms"`    // driver woke up minus the iteration's end
	Iterations   int64   `json:"iterations"`     // engine iterations (or metronome ticks)
	Requests     int64   `json:"requests"`       // requests accepted
	Active       int64   `json:"active_streams"` // streams being written now
	UptimeS      float64 `json:"uptime_s"`
	Mode         string  `json:"mode"` // "engine" or "cadence"
	Policy       string  `json:"policy,omitempty"`
	TimeScale    float64 `json:"time_scale"`
	CadenceMs    float64 `json:"cadence_ms,omitempty"`
	StreamTokens int     `json:"stream_interval"`
}

// Stats reports timing so far; with reset the counters start again.
func (s *Server) Stats(reset bool) Stats {
	st := Stats{Iterations: s.iters.Load(), Requests: s.reqs.Load(), Active: s.active.Load(),
		UptimeS: time.Since(s.started).Seconds(), TimeScale: s.cfg.TimeScale, StreamTokens: s.cfg.StreamInterval}
	n, p50, p99, mx := s.lat.snapshot(reset)
	st.Frames, st.LateP50ms, st.LateP99ms, st.LateMaxms = n, p50, p99, mx
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
