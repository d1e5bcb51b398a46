package sim

import "fmt"

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
func DefaultLab() LabWorkload { return DefaultLabConfig().LabWorkload }

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
// simulated token arrivals, its summary (the script's keys), and the engine's outcome.
type LabOutcome struct {
	Run     LabRun
	Summary LabSummary
	Outcome *Outcome
}

// RunLab drives the engine with the lab's closed loop, recording every token
// arrival of every stream, and summarises it exactly as run.py summarises a
// measured run.
func RunLab(cfg Config, w LabWorkload) (*LabOutcome, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	e, err := NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	type stream struct {
		last  float64 // previous token time
		first bool    // next token is the request's first
		long  bool
		sent  float64
	}
	var streams []stream // by request ID, which counts up from 0
	nextID := 0
	submit := func(at float64, long bool) {
		r := Request{ID: nextID, Arrival: at, Prompt: w.ShortInputLen, Output: w.ShortOutputLen}
		if long {
			r.Prompt, r.Output = w.LongInputLen, w.LongOutputLen
		}
		nextID++
		streams = append(streams, stream{first: true, long: long, sent: at})
		_ = e.Submit(r) // a rejection shows up in the results
	}
	for range w.ShortConcurrency {
		submit(0, false)
	}
	for range w.LongCount {
		submit(w.InjectAfter, true)
	}
	run := LabRun{ShortConcurrency: w.ShortConcurrency, LongInputLen: w.LongInputLen, Inject: w.InjectAfter}
	out := &Outcome{}
	// Size the trace and the arrivals for the steps the run will about take
	// (a decode step of every stream lasts at least this long), so they are
	// not copied as they grow.
	steps := min(int(w.Duration/e.cfg.Step.Decode(w.ShortConcurrency, w.ShortConcurrency*w.ShortInputLen).Seconds)+64, e.cfg.Limits.MaxIterations)
	run.Arrivals = make([]Arrival, 0, steps*w.ShortConcurrency)
	if cfg.Trace {
		out.Iterations = make([]Iteration, 0, steps)
		out.items = make([]Item, 0, steps*(w.ShortConcurrency+1))
		out.counts = make([]int, 0, steps)
	}
	for {
		it, ok := e.Step()
		if !ok {
			break
		}
		out.record(it, cfg.Trace)
		end := it.End()
		from := len(run.Arrivals)
		for _, item := range it.Items {
			if !item.Emit {
				continue
			}
			s := &streams[item.ID]
			if !s.first && !s.long {
				run.Arrivals = append(run.Arrivals, Arrival{T: end, Gap: end - s.last})
			}
			s.first, s.last = false, end
			// The script's worker loops while now < stop_at: a stream whose
			// request ends before the deadline sends the next one at once.
			if item.Done && !s.long && end < w.Duration {
				submit(end, false)
			}
		}
		// In (time, gap) order, as the analysis sorts them: one step's
		// arrivals share the time and mostly the gap, so this is a check.
		sortGaps(run.Arrivals[from:])
	}
	out.finish(e)
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
		if streams[r.ID].long {
			run.Long = append(run.Long, sr)
		} else {
			run.Short = append(run.Short, sr)
		}
		wallEnd = max(wallEnd, r.Finish)
	}
	run.Wall = wallEnd
	return &LabOutcome{Run: run, Summary: SummariseLab(run), Outcome: out}, nil
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
