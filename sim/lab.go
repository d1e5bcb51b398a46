package sim

import (
	"fmt"
	"math"
)

// LabWorkload is the lab's closed loop (run.py): ShortConcurrency streams
// each re-submit a short request as soon as the previous one finishes, for
// Duration seconds; at InjectAfter, LongCount long prompts arrive at once.
type LabWorkload struct {
	ShortConcurrency int     `json:"short_concurrency"`
	ShortInputLen    int     `json:"short_input_len"`
	ShortOutputLen   int     `json:"short_output_len"`
	LongInputLen     int     `json:"long_input_len"`
	LongOutputLen    int     `json:"long_output_len"`
	LongCount        int     `json:"long_count"`
	Duration         float64 `json:"duration"`
	InjectAfter      float64 `json:"inject_after"`
}

// DefaultLab is run.py's default workload. A measured file's
// Config.LabWorkload is the workload it ran, so a simulation can repeat it.
func DefaultLab() LabWorkload {
	return LabWorkload{ShortConcurrency: 16, ShortInputLen: 128, ShortOutputLen: 256,
		LongInputLen: 32000, LongOutputLen: 16, LongCount: 1, Duration: 60, InjectAfter: 20}
}

// Validate bounds every field so a run always ends.
func (w LabWorkload) Validate() error {
	ints := []struct {
		name      string
		v, lo, hi int
	}{
		{"short concurrency", w.ShortConcurrency, 1, 4096},
		{"short input length", w.ShortInputLen, 1, MaxTokens},
		{"short output length", w.ShortOutputLen, 1, MaxTokens},
		{"long input length", w.LongInputLen, 1, MaxTokens},
		{"long output length", w.LongOutputLen, 1, MaxTokens},
		{"long count", w.LongCount, 0, 1024},
	}
	for _, c := range ints {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("lab workload: %s must be in %d..%d, got %d", c.name, c.lo, c.hi, c.v)
		}
	}
	if !(w.Duration > 0 && w.Duration <= 3600) {
		return fmt.Errorf("lab workload: duration must be in (0, 3600] s, got %g", w.Duration)
	}
	if !(w.InjectAfter >= 0 && w.InjectAfter < w.Duration) {
		return fmt.Errorf("lab workload: inject-after must be in [0, duration=%g) s, or nothing is injected; got %g", w.Duration, w.InjectAfter)
	}
	return nil
}

// LabOutcome is a simulated lab run: the analysis input built from
// simulated token arrivals, the gaps counted in its windows as the run
// went (nil when the windows they assumed are not the run's: see
// Lab.Finish), and the engine's outcome. Package sim/lab summarises it
// (lab.Of) as run.py summarises a measured run.
type LabOutcome struct {
	Run     LabRun
	Counts  *LabCounts
	Outcome *Outcome
}

// RunLab drives the engine with the lab's closed loop, recording every token
// arrival of every stream and counting the gaps of the analysis's windows,
// and returns the run.
func RunLab(cfg Config, w LabWorkload) (*LabOutcome, error) {
	l, err := NewLab(cfg, w, nil)
	if err != nil {
		return nil, err
	}
	out := &Outcome{}
	if cfg.Trace { // size the trace for the steps the run will about take (see NewLab)
		out.Iterations = make([]Iteration, 0, l.steps)
		out.items = make([]Item, 0, l.steps*(w.ShortConcurrency+1))
		out.counts = make([]int, 0, l.steps)
	}
	for {
		it, ok := l.Step()
		if !ok {
			break
		}
		out.record(it, cfg.Trace)
	}
	out.finish(l.e)
	return l.Finish(out), nil
}

// Lab is the lab's closed loop on an engine, one step at a time: each
// Step runs one iteration and re-submits the streams' requests it
// finished, noting every token arrival as the script records it.
type Lab struct {
	e       *Engine
	w       LabWorkload
	streams []labStream // by request ID, which counts up from 0
	run     LabRun
	steps   int // about how many steps the run takes
	// The analysis's counts, taken as the arrivals come (see count).
	counts    LabCounts
	windowEnd float64 // the during window's end, once the first long's first token came
	known     bool    // windowEnd is known
	provMax   float64 // the latest arrival counted in the window before its end was known
}

// labStream is one stream's (or long prompt's) state.
type labStream struct {
	last  float64 // previous token time
	first bool    // next token is the request's first
	long  bool
}

// NewLab starts the lab's closed loop on a new engine with cfg. The run's
// token arrivals go into arrivals' memory when it is big enough (a caller
// running one lab after another reuses it; nil allocates).
func NewLab(cfg Config, w LabWorkload, arrivals []Arrival) (*Lab, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	e, err := NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	l := &Lab{e: e, w: w, run: LabRun{ShortConcurrency: w.ShortConcurrency, LongInputLen: w.LongInputLen, Inject: w.InjectAfter}}
	for range w.ShortConcurrency {
		l.submit(0, false)
	}
	for range w.LongCount {
		l.submit(w.InjectAfter, true)
	}
	// Size the arrivals for the steps the run will about take (a decode
	// step of every stream lasts at least this long), so they are not
	// copied as they grow.
	l.steps = min(int(w.Duration/e.cfg.Step.Decode(w.ShortConcurrency, w.ShortConcurrency*w.ShortInputLen).Seconds)+64, e.cfg.Limits.MaxIterations)
	// The counts take about a value per step (a step's streams share a
	// gap), most before the injection or after the window (sized up to a
	// page's run; a longer one grows them).
	quiet := int(float64(l.steps)*w.InjectAfter/w.Duration) + 16
	l.counts.Quiet = make([]GapCount, 0, min(quiet, 1<<15))
	l.counts.After = make([]GapCount, 0, min(max(16, l.steps-quiet), 1<<15))
	if n := l.steps * w.ShortConcurrency; cap(arrivals) >= n {
		l.run.Arrivals = arrivals[:0]
	} else {
		l.run.Arrivals = make([]Arrival, 0, n)
	}
	return l, nil
}

// Engine is the engine the lab drives (its results, clock and gap counts).
func (l *Lab) Engine() *Engine { return l.e }

// submit sends one stream's next request at time at.
func (l *Lab) submit(at float64, long bool) {
	w := l.w
	r := Request{ID: len(l.streams), Arrival: at, Prompt: w.ShortInputLen, Output: w.ShortOutputLen}
	if long {
		r.Prompt, r.Output = w.LongInputLen, w.LongOutputLen
	}
	l.streams = append(l.streams, labStream{first: true, long: long})
	_ = l.e.Submit(r) // a rejection shows up in the results
}

// Step runs one iteration of the loop: false when the run is over.
func (l *Lab) Step() (*Iteration, bool) {
	it, ok := l.e.Step()
	if !ok {
		return nil, false
	}
	end := it.End()
	// Locals only in the loop (every item of every step passes here): the
	// browser's wasm keeps them in registers rather than going through l.
	arr, streams, sc, stop := l.run.Arrivals, l.streams, l.w.ShortConcurrency, l.w.Duration
	from, next := len(arr), 0
	for _, item := range it.Items {
		if !item.Emit {
			continue
		}
		s := &streams[item.ID]
		switch {
		case s.long:
			if s.first && item.ID == sc {
				// The first long request's first token ends the window (as
				// lab.Summarise computes it from the TTFT; Finish checks).
				l.windowEnd, l.known = l.w.InjectAfter+(end-l.w.InjectAfter), true
			}
		case !s.first:
			arr = append(arr, Arrival{T: end, Gap: end - s.last})
		}
		s.first, s.last = false, end
		// The script's worker loops while now < stop_at: a stream whose
		// request ends before the deadline sends the next one at once
		// (below, in the items' order: the IDs are as if sent here).
		if item.Done && !s.long && end < stop {
			next++
		}
	}
	for range next {
		l.submit(end, false)
	}
	l.run.Arrivals = arr
	// In (time, gap) order, as the analysis sorts them: one step's
	// arrivals share the time and mostly the gap, so this is a check.
	sortGaps(arr[from:])
	l.count(arr[from:], end)
	return it, true
}

// count adds one step's arrivals (at time t, sorted by gap) to the
// analysis's counts, a run of equal gaps at once, so Finish needs no pass
// over every token. Before the window's end is known an arrival after the
// injection is in it (the end comes later).
func (l *Lab) count(arr []Arrival, t float64) {
	if len(arr) == 0 {
		return
	}
	end := math.Inf(1)
	if l.known {
		end = l.windowEnd
	} else if t >= l.w.InjectAfter {
		l.provMax = t
	}
	c := &l.counts
	win := c.Window(t, l.w.InjectAfter, end) // one step's arrivals share its time: one window
	for i := 0; i < len(arr); {
		j := i + 1
		for j < len(arr) && arr[j].Gap == arr[i].Gap {
			j++
		}
		c.Add(arr[i], j-i, win)
		i = j
	}
}

// Finish is the lab's outcome once Step has returned false: out is the
// engine's (with its results). Its counts are the ones taken as the run
// went when the window they assumed is the one the results give (not when
// a long request failed, or a TTFT rounds otherwise): then only the whole
// analysis of the arrivals is right, and Counts is nil.
func (l *Lab) Finish(out *Outcome) *LabOutcome {
	run := l.run
	wallEnd := 0.0
	for i := range out.Results {
		r := &out.Results[i]
		sr := StreamResult{OK: r.Completed(), Chunks: r.Generated, Tokens: r.Generated, Error: r.Rejected}
		if r.Generated > 0 {
			sr.TTFT = r.FirstToken - r.Arrival
		}
		if r.Completed() || r.Rejected != "" {
			sr.Latency = r.Finish - r.Arrival
		}
		if !sr.OK && sr.Error == "" {
			sr.Error = "unfinished when the simulation was cut short"
		}
		if l.streams[r.ID].long {
			run.Long = append(run.Long, sr)
		} else {
			run.Short = append(run.Short, sr)
		}
		wallEnd = max(wallEnd, r.Finish)
	}
	run.Wall = wallEnd
	o := &LabOutcome{Run: run, Outcome: out}
	if l.counted(run) {
		o.Counts = &l.counts
	}
	return o
}

// counted reports whether the counts taken as the run went are the whole
// analysis's: false when the window they assumed is not the one the
// results give (a long request that failed, a TTFT that rounds otherwise).
func (l *Lab) counted(run LabRun) bool {
	_, _, windowEnd := run.Window()
	same := l.known && l.windowEnd == windowEnd && l.provMax <= windowEnd ||
		!l.known && math.IsInf(windowEnd, 1) // no long request's first token came: the window runs to the end
	return same && len(run.Arrivals) != 0 && l.counts.N == len(run.Arrivals)
}

// sortGaps orders one step's arrivals (all at one time) by gap: insertion
// sort, as they come nearly in order.
func sortGaps(a []Arrival) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].Gap < a[j-1].Gap; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
