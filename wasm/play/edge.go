package play

// The lab's closed loop run by the page itself, for the edge proxy (the
// Cloudflare Worker), which cannot run a measurement server-side. This file
// is the part without the DOM: the scheduler, with lab.StreamReader (the
// reader servelab measure uses) reading each stream. wasm/edge.go sends the
// requests with the browser's fetch and feeds every chunk here with the
// time it was read.

import (
	"encoding/json"
	"fmt"
	"slices"

	"servelab/sim"
	"servelab/sim/lab"
)

// TokenFrame is one frame that carried output, as the live view shows it:
// the stream reader's frame, with T in seconds since the load started.
type TokenFrame struct {
	Stream int
	Long   bool
	lab.TokenFrame
}

// Launch is a request the loop wants sent: POST Body to the completions
// route, and report its chunks and end under ID.
type Launch struct {
	ID   int
	Long bool
	Body []byte
}

// Loop is run.py's closed loop, driven by events: Warmup requests one after
// another, then ShortConcurrency short streams each re-submitted as soon as
// it ends until Duration, and LongCount long prompts at InjectAfter. Times
// are seconds on any one clock (the page uses performance.now()/1000).
type Loop struct {
	Cfg      lab.Config
	shortP   []string
	longP    string
	t0       float64 // load start; 0 until warmup is over
	loading  bool
	warmLeft int
	inject   float64
	injected bool
	stopped  string // why the loop was stopped early
	deadline float64
	next     int
	inFlight map[int]*loopReq
	failRun  int // consecutive failed short requests

	arrivals []lab.Arrival
	frames   []lab.Frame
	reqs     []loopReq
	long     []lab.StreamResult
	short    []lab.StreamResult
	end      float64
}

type loopReq struct {
	id     int
	warmup bool
	long   bool
	max    int
	timing lab.StreamReader
	res    lab.StreamResult
}

// Interrupted is the error text of a request the caller aborted after Stop.
const Interrupted = "interrupted"

// maxFailRun short failures in a row stop the loop: a server that answers
// every request with an error would otherwise be hammered.
const maxFailRun = 5

// NewLoop checks the workload and makes the prompts.
func NewLoop(cfg lab.Config) (*Loop, error) {
	w := cfg.LabWorkload
	switch {
	case w.ShortConcurrency < 1 || w.ShortInputLen < 1 || w.ShortOutputLen < 1 || w.LongInputLen < 1 || w.LongOutputLen < 1 || w.LongCount < 0 || cfg.Warmup < 0:
		return nil, fmt.Errorf("the workload needs at least one stream and positive lengths, got %+v", w)
	case !(w.Duration > 0) || !(w.InjectAfter >= 0) || w.InjectAfter >= w.Duration:
		return nil, fmt.Errorf("want 0 <= inject-after < duration, got %g and %g", w.InjectAfter, w.Duration)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("no model: the lab server's /v1/models named none")
	}
	l := &Loop{Cfg: cfg, warmLeft: cfg.Warmup, inFlight: map[int]*loopReq{}}
	l.shortP, l.longP = lab.LabPrompts(cfg.Seed, w.ShortInputLen, w.LongInputLen)
	return l, nil
}

func (l *Loop) body(prompt string, maxTokens int) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": l.Cfg.Model, "prompt": prompt, "max_tokens": maxTokens, "temperature": 0.0,
		"stream": true, "ignore_eos": l.Cfg.IgnoreEOS,
		// vLLM and SGLang then put the cumulative completion_tokens on every chunk.
		"stream_options": map[string]bool{"include_usage": true, "continuous_usage_stats": true},
	})
	return b
}

func (l *Loop) launch(now float64, warmup, long bool) Launch {
	r := &loopReq{id: l.next, warmup: warmup, long: long, max: l.Cfg.ShortOutputLen}
	prompt := l.shortP[0]
	switch {
	case long:
		prompt, r.max = l.longP, l.Cfg.LongOutputLen
	case !warmup:
		prompt = l.shortP[l.next%len(l.shortP)]
	}
	r.timing.Start, r.timing.MaxTokens = now, r.max
	l.next++
	l.inFlight[r.id] = r
	return Launch{ID: r.id, Long: long, Body: l.body(prompt, r.max)}
}

// Start begins the run at time now: the first warmup request, or the load.
func (l *Loop) Start(now float64) []Launch {
	l.deadline = now + l.Cfg.Duration + 300 // the proxy's own limit is 5 minutes a stream
	if l.warmLeft > 0 {
		l.warmLeft--
		return []Launch{l.launch(now, true, false)}
	}
	return l.startLoad(now)
}

func (l *Loop) startLoad(now float64) []Launch {
	l.loading, l.t0 = true, now
	l.deadline = now + l.Cfg.Duration + 300
	out := make([]Launch, 0, l.Cfg.ShortConcurrency)
	for i := 0; i < l.Cfg.ShortConcurrency; i++ {
		out = append(out, l.launch(now, false, false))
	}
	return out
}

// Loading reports whether the timed load has started, and its start time.
func (l *Loop) Loading() (bool, float64) { return l.loading, l.t0 }

// Inject is when the long prompts were sent (seconds since the load
// started) and whether they were.
func (l *Loop) Inject() (float64, bool) { return l.inject, l.injected }

// Stopped says why the loop was stopped early ("" when it was not).
func (l *Loop) Stopped() string { return l.stopped }

// Tick sends the long prompts when their time has come and gives up on a
// run past its deadline. Call it often (every frame).
func (l *Loop) Tick(now float64) []Launch {
	if l.stopped == "" && l.deadline > 0 && now > l.deadline {
		l.Stop(fmt.Sprintf("the run went %.0f s past its duration", now-l.t0-l.Cfg.Duration))
	}
	if !l.loading || l.injected || l.stopped != "" || now < l.t0+l.Cfg.InjectAfter {
		return nil
	}
	l.injected, l.inject = true, now-l.t0
	var out []Launch
	for i := 0; i < l.Cfg.LongCount; i++ {
		out = append(out, l.launch(now, false, true))
	}
	return out
}

// Chunk files one chunk of request id's body, read at time now, and returns
// the token frames it completed (times since the load started).
func (l *Loop) Chunk(id int, chunk []byte, now float64) []TokenFrame {
	r := l.inFlight[id]
	if r == nil {
		return nil
	}
	return l.file(r, r.timing.Feed(chunk, now))
}

// file records request r's token frames from the stream reader and returns
// them for the view (none for a warmup request).
func (l *Loop) file(r *loopReq, fs []lab.TokenFrame) []TokenFrame {
	if r.warmup {
		return nil
	}
	out := make([]TokenFrame, 0, len(fs))
	for _, lf := range fs {
		f := TokenFrame{Stream: r.id, Long: r.long, TokenFrame: lf}
		f.T -= l.t0
		if !f.First && !r.long {
			l.arrivals = append(l.arrivals, lab.Arrival{T: f.T, Gap: f.Gap})
		}
		l.frames = append(l.frames, lab.Frame{Stream: r.id, Long: r.long, TRelInject: f.T, Gap: f.Gap, Tokens: f.Tokens})
		out = append(out, f)
	}
	return out
}

// End reports that request id finished at time now: its body ended
// (status 200, errText "") or it failed (an HTTP status other than 200, a
// network error, or it was aborted). It returns the requests to send next:
// the same short stream again while the duration lasts.
func (l *Loop) End(id int, now float64, status int, errText string) ([]TokenFrame, []Launch) {
	r := l.inFlight[id]
	if r == nil {
		return nil, nil
	}
	delete(l.inFlight, id)
	var fs []TokenFrame
	if errText == "" && status == 200 {
		fs = l.file(r, r.timing.End(now))
	}
	t := &r.timing
	res := lab.StreamResult{TTFT: t.TTFT, Latency: now - t.Start, Chunks: t.Chunks, Tokens: t.OutputTokens()}
	switch {
	case errText != "":
		res.Error = errText
	case status != 200:
		res.Error = fmt.Sprintf("HTTP %d", status)
	case t.Err != "":
		res.Error = t.Err
	case t.Chunks == 0:
		res.Error = "no content chunks: check that the server streams"
	default:
		res.OK = true
	}
	r.res = res
	if r.warmup {
		if !res.OK && l.stopped == "" {
			l.Stop("the warmup request failed: " + res.Error)
		}
		if l.stopped != "" {
			return fs, nil
		}
		if l.warmLeft > 0 {
			l.warmLeft--
			return fs, []Launch{l.launch(now, true, false)}
		}
		return fs, l.startLoad(now)
	}
	if l.stopped != "" && errText == Interrupted {
		return fs, nil // aborted by Stop: neither ok nor failed, as the native client counts it
	}
	l.reqs = append(l.reqs, *r)
	if r.long {
		l.long = append(l.long, res)
	} else {
		l.short = append(l.short, res)
		if res.OK {
			l.failRun = 0
		} else if l.failRun++; l.failRun >= maxFailRun && l.stopped == "" {
			l.Stop(fmt.Sprintf("%d requests in a row failed, the last with: %s", l.failRun, res.Error))
		}
	}
	l.end = now
	if !r.long && l.stopped == "" && now-l.t0 < l.Cfg.Duration {
		return fs, []Launch{l.launch(now, false, false)}
	}
	return fs, nil
}

// Stop ends the run early: nothing new is sent; the caller aborts the
// requests in flight (InFlight) and reports their End.
func (l *Loop) Stop(why string) {
	if l.stopped == "" {
		l.stopped = why
	}
}

// InFlight lists the requests not yet ended.
func (l *Loop) InFlight() []int {
	ids := make([]int, 0, len(l.inFlight))
	for id := range l.inFlight {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Done reports whether the run is over: nothing in flight and nothing more
// to send.
func (l *Loop) Done() bool {
	return len(l.inFlight) == 0 && (l.stopped != "" || (l.loading && l.injected))
}

// Frames is the number of token frames of the timed run so far.
func (l *Loop) Frames() int { return len(l.frames) }

// Result is the run as a lab JSON: run.py's config, summary (lab.Summarise,
// the script's own analysis) and gaps, with servelab's frames, requests and
// warnings.
func (l *Loop) Result() *lab.Measured {
	inject := l.inject
	if !l.injected {
		inject = l.end - l.t0
	}
	wall := l.end - l.t0
	run := lab.Run{Label: l.Cfg.Label, BaseURL: l.Cfg.BaseURL, ShortConcurrency: l.Cfg.ShortConcurrency,
		LongInputLen: l.Cfg.LongInputLen, Inject: inject, Arrivals: l.arrivals, Long: l.long, Short: l.short, Wall: wall}
	m := &lab.Measured{Config: l.Cfg, Summary: lab.Summarise(run), Gaps: lab.GapsFrom(l.arrivals, inject)}
	x := &lab.Extra{Interrupted: l.stopped != ""}
	reqs := slices.Clone(l.reqs)
	slices.SortFunc(reqs, func(a, b loopReq) int { return a.id - b.id })
	fewer, okN, bundled, noUsage, malformed, badUsage := 0, 0, 0, 0, 0, 0
	example := ""
	for _, r := range reqs {
		x.Requests = append(x.Requests, r.res)
		malformed += r.timing.Malformed
		if r.timing.BadUsage {
			badUsage++
		}
		if !r.res.OK {
			continue
		}
		okN++
		if r.res.Tokens < r.max {
			if fewer++; example == "" {
				example = fmt.Sprintf("%d of %d", r.res.Tokens, r.max)
			}
		}
		if r.timing.Bundled {
			bundled++
		}
		if !r.timing.Usage {
			noUsage++
		}
	}
	if l.stopped != "" {
		x.Warnings = append(x.Warnings, fmt.Sprintf("the run stopped early (%s) at t+%.1fs: the summary covers only what was measured", l.stopped, wall))
		if !l.injected {
			x.Warnings = append(x.Warnings, "the long prompt was never injected: every gap counts as quiet")
		}
	}
	if fewer > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d of %d responses produced fewer tokens than max_tokens (e.g. %s): the server may not honour ignore_eos, so the load was lighter than asked", fewer, okN, example))
	}
	if bundled > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d responses had frames carrying several tokens: the gaps are per frame, not per token", bundled))
	}
	if okN > 0 && noUsage == okN {
		x.Warnings = append(x.Warnings, "the server sent no usage in its chunks: tokens per frame are assumed to be 1")
	}
	if badUsage > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d responses reported more completion_tokens than max_tokens allows: their usage was ignored and each frame counted as one token", badUsage))
	}
	if malformed > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d data lines were not JSON and were skipped", malformed))
	}
	frames := slices.Clone(l.frames)
	slices.SortStableFunc(frames, func(a, b lab.Frame) int {
		if a.TRelInject != b.TRelInject {
			if a.TRelInject < b.TRelInject {
				return -1
			}
			return 1
		}
		return a.Stream - b.Stream
	})
	for i := range frames {
		frames[i].TRelInject -= inject
	}
	x.Frames = frames
	m.Extra = x
	return m
}

// EdgeLimits is what the proxy's GET /api/info says of its limits.
type EdgeLimits struct {
	Proxy        string  `json:"proxy"`
	MaxBodyBytes int64   `json:"max_body_bytes"`
	MaxTokens    int     `json:"max_tokens"`
	RatePerMin   float64 `json:"rate_limit_per_minute"`
	RateBurst    float64 `json:"rate_limit_burst"`
}

// EdgeWorkload fits the lab knobs of s to the proxy's limits: output lengths
// within max_tokens and the long prompt within the body limit (6 bytes a
// word plus the request's other fields). maxConns bounds the streams in
// flight (a browser opens at most 6 HTTP/1.1 connections to one host; 0:
// no bound). The notes say what was changed.
func EdgeWorkload(s State, lim EdgeLimits, maxConns int) (sim.LabWorkload, []string) {
	w := s.Lab
	var notes []string
	if lim.MaxTokens > 0 {
		if w.ShortOutputLen > lim.MaxTokens {
			notes = append(notes, fmt.Sprintf("output length %d → %d (the proxy's max_tokens)", w.ShortOutputLen, lim.MaxTokens))
			w.ShortOutputLen = lim.MaxTokens
		}
		if w.LongOutputLen > lim.MaxTokens {
			notes = append(notes, fmt.Sprintf("long output %d → %d (the proxy's max_tokens)", w.LongOutputLen, lim.MaxTokens))
			w.LongOutputLen = lim.MaxTokens
		}
	}
	if lim.MaxBodyBytes > 0 {
		words := int((lim.MaxBodyBytes - 512) / 6)
		if words < 1 {
			words = 1
		}
		if w.LongInputLen > words {
			notes = append(notes, fmt.Sprintf("long prompt %d → %d tokens (the proxy's %d-byte body limit)", w.LongInputLen, words, lim.MaxBodyBytes))
			w.LongInputLen = words
		}
		if w.ShortInputLen > words {
			notes = append(notes, fmt.Sprintf("prompt length %d → %d tokens (the proxy's body limit)", w.ShortInputLen, words))
			w.ShortInputLen = words
		}
	}
	if maxConns > 0 && w.ShortConcurrency+w.LongCount > maxConns {
		n := max(1, maxConns-w.LongCount)
		notes = append(notes, fmt.Sprintf("short streams %d → %d (a browser holds at most %d connections to one HTTP/1.1 host)", w.ShortConcurrency, n, maxConns))
		w.ShortConcurrency = n
	}
	return w, notes
}

// EdgeDefaults is the lab workload a measurement through the edge proxy
// starts from: small enough for the proxy's default limits (a burst of 20
// and 60 a minute per client). At 5-20 ms a token, 4 streams of 512 tokens
// for 10 s are 8-16 requests, plus the warmup, the model list and the long
// prompt, which fits a 64 KiB body.
var EdgeDefaults = sim.LabWorkload{ShortConcurrency: 4, ShortInputLen: 128, ShortOutputLen: 512,
	LongInputLen: 8000, LongOutputLen: 16, LongCount: 1, Duration: 10, InjectAfter: 4}

// ApplyEdgeDefaults sets s's lab workload to EdgeDefaults field by field
// where it still holds the lab script's default and chosen (by the
// field's URL key) says the link or the student did not set it: a choice
// that happens to be the lab's default (say 256 output tokens) is kept.
func ApplyEdgeDefaults(s *State, chosen func(key string) bool) {
	d, e, w := sim.DefaultLab(), EdgeDefaults, &s.Lab
	for _, f := range []struct {
		key             string
		have, def, edge *int
	}{{"streams", &w.ShortConcurrency, &d.ShortConcurrency, &e.ShortConcurrency},
		{"sin", &w.ShortInputLen, &d.ShortInputLen, &e.ShortInputLen}, {"sout", &w.ShortOutputLen, &d.ShortOutputLen, &e.ShortOutputLen},
		{"long", &w.LongInputLen, &d.LongInputLen, &e.LongInputLen}, {"longout", &w.LongOutputLen, &d.LongOutputLen, &e.LongOutputLen}} {
		if *f.have == *f.def && !chosen(f.key) {
			*f.have = *f.edge
		}
	}
	if w.Duration == d.Duration && !chosen("duration") {
		w.Duration = e.Duration
	}
	if w.InjectAfter == d.InjectAfter && !chosen("inject") {
		w.InjectAfter = e.InjectAfter
	}
}
