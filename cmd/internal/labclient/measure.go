// Package labclient is `servelab measure`: a faithful port of the lab
// script run.py (N short streams in a closed loop, a long prompt injected
// part-way, every token frame timestamped) that measures more precisely and
// more carefully than the script, and its text report.
//
// Precision: each line is timestamped with the arrival of the read that
// completed it, before any JSON decoding: on Linux the kernel's receive
// timestamp (SO_TIMESTAMPNS), so the client's own scheduling delays drop
// out, elsewhere the monotonic clock when the read returns. A line may be
// up to 1 MiB; the transport ignores proxies from the environment, never
// compresses, keeps an idle connection per stream and opens them all before
// the clock starts. Care: tokens per frame come from the server's usage when
// it sends it (frames and tokens are kept apart), role-only and usage-only
// chunks are not tokens, a mid-stream error frame fails its request, short
// responses are reported, and a dead server or Ctrl-C ends the run with what
// was measured so far.
package labclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"servelab/sim/lab"
)

// Options are a measurement's settings: the script's flags, then servelab's.
type Options struct {
	lab.Config                  // run.py's flags, with BaseURL resolved and Model discovered
	APIKey        string        // sent as "Authorization: Bearer" when set; never written to the JSON
	StreamUsage   bool          // ask for stream_options usage (tokens per frame)
	RawFrames     bool          // keep every frame in the JSON under "servelab"
	Log           io.Writer     // the script's own lines ("[warmup] ...", "[load] ..."); nil: none
	Progress      io.Writer     // a progress line about once a second; nil: none
	ProgressCR    bool          // redraw the progress line in place (a terminal)
	Observer      func(Event)   // live events; called from many goroutines, must be quick and safe
	Client        *http.Client  // nil: a transport tuned for timing (see NewClient)
	ProgressEvery time.Duration // 0: one second
}

// Event is one thing the live page may want to draw. Times are seconds since
// the start of the timed load (t0).
type Event struct {
	Type   string  `json:"type"` // "phase", "token", "request", "progress"
	T      float64 `json:"t"`
	Stream int     `json:"stream,omitempty"` // request index, in sending order
	Long   bool    `json:"long,omitempty"`
	Gap    float64 `json:"gap,omitempty"`    // token: seconds since the stream's previous frame (0 on its first)
	Tokens int     `json:"tokens,omitempty"` // token: tokens in the frame
	Phase  string  `json:"phase,omitempty"`  // phase: "warmup", "load", "inject", "done"
	OK     bool    `json:"ok,omitempty"`     // request: it succeeded
	Error  string  `json:"error,omitempty"`  // request: why it failed
	// progress
	Frames int     `json:"frames,omitempty"`
	Done   int     `json:"done,omitempty"`
	Failed int     `json:"failed,omitempty"`
	Worst  float64 `json:"worst,omitempty"`
}

// Result is a finished (or cut-short) measurement.
type Result struct {
	Measured    *lab.Measured
	Run         lab.Run
	Interrupted bool  // stopped early; the summary covers what was measured
	Stop        error // why it stopped early (nil: ran to the end)
}

// AllFailed reports whether the run made requests and none of them
// succeeded, with an example error: such a run measured nothing.
func (r *Result) AllFailed() (bool, string) {
	n, example := 0, ""
	for _, rs := range [][]lab.StreamResult{r.Run.Short, r.Run.Long} {
		for _, s := range rs {
			if s.OK {
				return false, ""
			}
			n++
			if example == "" {
				example = s.Error
			}
		}
	}
	return n > 0, example
}

// ErrServerGone reports a lab server that stopped answering mid-run.
var ErrServerGone = errors.New("the lab server stopped answering")

// ErrRedirect reports a lab server that answered with a redirect. It is
// never followed: only the configured server is measured, and its API key
// goes nowhere else.
var ErrRedirect = errors.New("the lab server answered with a redirect, which servelab never follows")

// isRedirect reports whether status is a redirect (3xx) that a client could follow.
func isRedirect(status int) bool {
	return status >= 300 && status < 400 && status != http.StatusNotModified
}

// redirectError is ErrRedirect with the status and where resp points to.
func redirectError(resp *http.Response) error {
	to := clipText(resp.Header.Get("Location"), 200)
	if to == "" {
		to = "(no Location)"
	}
	return fmt.Errorf("%w: HTTP %d from %s to %s; point servelab at the server's own address", ErrRedirect, resp.StatusCode, resp.Request.URL.Redacted(), to)
}

// clipText returns s cut to n bytes and made valid UTF-8.
func clipText(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// noRedirects returns a copy of c that follows no redirect: the redirect
// itself comes back as the response.
func noRedirects(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

// NewClient is an HTTP client for timing streams: no proxy from the
// environment, no compression, HTTP/1.1 with an idle connection kept per
// stream, Nagle off (Go's default for TCP), and no redirect followed. With kernelTime (Linux) its
// connections carry the kernel's receive timestamps, so a frame's time is
// when it reached the machine, not when this process got round to reading it.
func NewClient(conns int, kernelTime bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if kernelTime {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return withKernelTimestamps(c), nil
		}
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           dial,
		DisableCompression:    true,
		MaxIdleConns:          conns + 16,
		MaxIdleConnsPerHost:   conns + 16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // a long prefill may take minutes before the headers
		ForceAttemptHTTP2:     false,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
	return noRedirects(&http.Client{Transport: t})
}

// Validate checks the flags as the script does, and a little more.
func (o *Options) Validate() error {
	c := &o.Config
	if c.API != "completions" && c.API != "chat" {
		return fmt.Errorf("--api must be completions or chat, got %q", c.API)
	}
	ints := []struct {
		name   string
		v, min int
	}{{"--short-concurrency", c.ShortConcurrency, 1}, {"--short-input-len", c.ShortInputLen, 1},
		{"--short-output-len", c.ShortOutputLen, 1}, {"--long-input-len", c.LongInputLen, 1},
		{"--long-output-len", c.LongOutputLen, 1}, {"--long-count", c.LongCount, 0}, {"--warmup", c.Warmup, 0}}
	for _, f := range ints {
		if f.v < f.min || f.v > lab.MaxTokens {
			return fmt.Errorf("%s must be in %d..%d, got %d", f.name, f.min, lab.MaxTokens, f.v)
		}
	}
	if c.ShortConcurrency > 100_000 || c.LongCount > 10_000 {
		return fmt.Errorf("--short-concurrency (max 100000) or --long-count (max 10000) too large")
	}
	if !(c.Duration > 0) || c.Duration > 7*24*3600 || !(c.InjectAfter >= 0) {
		return fmt.Errorf("--duration must be in (0, 1 week] and --inject-after >= 0, got %g and %g", c.Duration, c.InjectAfter)
	}
	if c.InjectAfter >= c.Duration {
		return fmt.Errorf("--inject-after must be less than --duration, or nothing is injected; got %g and %g s (run.py's defaults are 20 and 60: a short run names both, e.g. --duration 8 --inject-after 3)", c.InjectAfter, c.Duration)
	}
	if !(c.Timeout > 0) || c.Timeout > 1e6 {
		return fmt.Errorf("--timeout must be in (0, 1e6] seconds, got %g", c.Timeout)
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return fmt.Errorf("--base-url must start with http:// or https://, got %q", c.BaseURL)
	}
	return nil
}

// DiscoverModel returns the first model id the server lists, as the script does.
func DiscoverModel(ctx context.Context, client *http.Client, baseURL, apiKey string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/models", nil)
	if err != nil {
		return "", err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := noRedirects(client).Do(req)
	if err != nil {
		return "", fmt.Errorf("could not read %s/v1/models (%s). Is the server up? Otherwise pass --model explicitly", baseURL, errorText(err))
	}
	defer resp.Body.Close()
	if isRedirect(resp.StatusCode) {
		return "", redirectError(resp)
	}
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s/v1/models answered HTTP %d; pass --model explicitly", baseURL, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil || len(m.Data) == 0 || m.Data[0].ID == "" {
		return "", fmt.Errorf("%s/v1/models lists no model; pass --model explicitly", baseURL)
	}
	return m.Data[0].ID, nil
}

// measurement is one run in progress.
type measurement struct {
	opts    Options
	client  *http.Client
	t0      time.Time
	stop    context.CancelCauseFunc
	stopped atomic.Bool

	mu       sync.Mutex
	arrivals []lab.Arrival // T: seconds since t0
	frames   []frameRec
	requests []reqRec
	long     []lab.StreamResult
	short    []lab.StreamResult
	failRun  int // consecutive short failures

	nframes atomic.Int64
	ndone   atomic.Int64
	nfailed atomic.Int64
	worstNs atomic.Int64
	nextIdx atomic.Int64

	tap func(b []byte, t float64, err error) // nil, or called with every read of a stream body and its time as fed (tests)
}

type frameRec struct {
	stream  int
	long    bool
	t, gap  float64
	tokens  int
	serverT float64
}

type reqRec struct {
	idx  int
	long bool
	max  int
	r    reply
}

func (m *measurement) stopping() bool { return m.stopped.Load() }

func (m *measurement) emit(e Event) {
	if m.opts.Observer != nil {
		m.opts.Observer(e)
	}
}

func (m *measurement) since(t time.Time) float64 { return t.Sub(m.t0).Seconds() }

// one runs a timed request and files its frames and result.
func (m *measurement) one(ctx context.Context, prompt string, maxTokens int, long bool) reply {
	idx := int(m.nextIdx.Add(1) - 1)
	var arr []lab.Arrival
	var frames []frameRec
	r := m.streamOne(ctx, prompt, maxTokens, func(now time.Time, gap time.Duration, tokens int, first bool, serverT float64) {
		t, g := m.since(now), gap.Seconds()
		if !first && !long {
			arr = append(arr, lab.Arrival{T: t, Gap: g})
			if ns := gap.Nanoseconds(); ns > m.worstNs.Load() {
				m.worstNs.Store(ns) // racy max is fine for a progress line
			}
		}
		if m.opts.RawFrames {
			frames = append(frames, frameRec{stream: idx, long: long, t: t, gap: g, tokens: tokens, serverT: serverT})
		}
		m.nframes.Add(1)
		m.emit(Event{Type: "token", T: t, Stream: idx, Long: long, Gap: g, Tokens: tokens})
	})
	if r.ok {
		m.ndone.Add(1)
	} else if !r.cancelled {
		m.nfailed.Add(1)
	}
	m.emit(Event{Type: "request", T: m.since(time.Now()), Stream: idx, Long: long, OK: r.ok, Error: r.err})
	m.mu.Lock()
	m.arrivals = append(m.arrivals, arr...)
	m.frames = append(m.frames, frames...)
	m.requests = append(m.requests, reqRec{idx: idx, long: long, max: maxTokens, r: r})
	res := lab.StreamResult{OK: r.ok, TTFT: r.ttft.Seconds(), Latency: r.latency.Seconds(), Chunks: r.chunks, Tokens: r.tokens, Error: r.err}
	if !r.cancelled { // requests we cut short ourselves are neither ok nor failed
		if long {
			m.long = append(m.long, res)
		} else {
			m.short = append(m.short, res)
		}
	}
	m.mu.Unlock()
	return r
}

// Measure runs the lab workload: warmup, ShortConcurrency short streams in a
// closed loop for Duration, LongCount long prompts at InjectAfter. When ctx
// ends or the server dies it stops early and returns what was measured
// (Result.Interrupted, Result.Stop).
func Measure(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = time.Second
	}
	m := &measurement{opts: o, client: o.Client}
	defer context.AfterFunc(ctx, func() { m.stopped.Store(true) })()
	if m.client == nil {
		m.client = NewClient(o.ShortConcurrency+o.LongCount, true)
	} else {
		m.client = noRedirects(m.client) // whoever made it: a redirect is never followed
	}
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format, a...)
		}
	}
	if o.Model == "" {
		model, err := DiscoverModel(ctx, m.client, o.BaseURL, o.APIKey)
		if err != nil {
			return nil, err
		}
		m.opts.Model = model
	}
	shortPrompts, longPrompt := lab.LabPrompts(o.Seed, o.ShortInputLen, o.LongInputLen)

	logf("[warmup] %d request(s) ...\n", o.Warmup)
	m.emit(Event{Type: "phase", Phase: "warmup"})
	for i := 0; i < o.Warmup; i++ {
		r := m.streamOne(ctx, shortPrompts[0], o.ShortOutputLen, func(time.Time, time.Duration, int, bool, float64) {})
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted during warmup")
		}
		if r.connErr {
			return nil, fmt.Errorf("%w during warmup: %s", ErrServerGone, r.err)
		}
		if r.redirect != nil {
			return nil, fmt.Errorf("during warmup: %w", r.redirect)
		}
	}
	m.openConns(ctx, o.ShortConcurrency+o.LongCount)

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	m.stop = stop
	m.t0 = time.Now()
	stopAt := m.t0.Add(seconds(o.Duration))
	injectAt := m.t0.Add(seconds(o.InjectAfter))
	logf("[load] %d short streams for %.0fs; injecting %d x %d-token prompt(s) at t+%.0fs\n",
		o.ShortConcurrency, o.Duration, o.LongCount, o.LongInputLen, o.InjectAfter)
	m.emit(Event{Type: "phase", Phase: "load"})

	var wg sync.WaitGroup
	var idx atomic.Int64
	for i := 0; i < o.ShortConcurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stopAt) && runCtx.Err() == nil {
				i := idx.Add(1) - 1
				r := m.one(runCtx, shortPrompts[int(i)%len(shortPrompts)], o.ShortOutputLen, false)
				m.watch(runCtx, r)
			}
		}()
	}
	progressDone := make(chan struct{})
	go m.progress(runCtx, progressDone)

	var inject float64 // when the long prompt went (or the run stopped before it)
	injected := false
	select {
	case <-time.After(time.Until(injectAt)):
		inject = m.since(time.Now())
		injected = true
		m.emit(Event{Type: "phase", Phase: "inject", T: inject})
		for i := 0; i < o.LongCount; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.one(runCtx, longPrompt, o.LongOutputLen, true)
			}()
		}
	case <-runCtx.Done():
		inject = m.since(time.Now())
	}
	wg.Wait()
	wall := m.since(time.Now())
	stop(nil)
	<-progressDone
	m.emit(Event{Type: "phase", Phase: "done", T: wall})

	res := &Result{}
	if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) || ctx.Err() != nil {
		res.Interrupted = true
		res.Stop = context.Cause(runCtx)
		if ctx.Err() != nil {
			res.Stop = errors.New("interrupted")
		}
	}
	res.Run, res.Measured = m.assemble(inject, wall, injected, res)
	return res, nil
}

// openConns opens n connections before the clock starts, so no timed
// request pays for a TCP handshake.
func (m *measurement) openConns(ctx context.Context, n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.opts.BaseURL+"/v1/models", nil)
			if err != nil {
				return
			}
			if m.opts.APIKey != "" {
				req.Header.Set("Authorization", "Bearer "+m.opts.APIKey)
			}
			if resp, err := m.client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

// watch stops the run when the server has gone (a connection error and the
// server no longer lists its models) or every short request keeps failing.
func (m *measurement) watch(ctx context.Context, r reply) {
	if r.cancelled || ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	if r.ok {
		m.failRun = 0
	} else {
		m.failRun++
	}
	fails := m.failRun
	m.mu.Unlock()
	if r.redirect != nil {
		m.halt(r.redirect)
		return
	}
	if r.connErr {
		if _, err := DiscoverModel(ctx, m.client, m.opts.BaseURL, m.opts.APIKey); err != nil && ctx.Err() == nil {
			m.halt(fmt.Errorf("%w (%s)", ErrServerGone, r.err))
			return
		}
	}
	if fails >= 8*m.opts.ShortConcurrency+8 {
		m.halt(fmt.Errorf("every short request is failing (%d in a row), last: %s", fails, r.err))
	}
}

func (m *measurement) halt(err error) {
	if m.stopped.CompareAndSwap(false, true) {
		m.stop(err)
	}
}

// progress writes a status line every ProgressEvery until ctx ends.
func (m *measurement) progress(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(m.opts.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if m.opts.Progress != nil && m.opts.ProgressCR {
				fmt.Fprint(m.opts.Progress, "\r\033[K")
			}
			return
		case now := <-tick.C:
			t := m.since(now)
			e := Event{Type: "progress", T: t, Frames: int(m.nframes.Load()), Done: int(m.ndone.Load()),
				Failed: int(m.nfailed.Load()), Worst: float64(m.worstNs.Load()) / 1e9}
			m.emit(e)
			if m.opts.Progress == nil {
				continue
			}
			line := fmt.Sprintf("[t+%5.1fs/%gs] %d frames (%.0f/s), %d requests ok, %d failed, worst gap %.1f ms",
				t, m.opts.Duration, e.Frames, float64(e.Frames)/max(t, 1e-9), e.Done, e.Failed, e.Worst*1e3)
			if m.opts.ProgressCR {
				fmt.Fprintf(m.opts.Progress, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(m.opts.Progress, line)
			}
		}
	}
}

// SameReadWarning is the warning for sameRead of gaps inter-token gaps
// being exactly 0, or "" when too few are to matter (under 1%). Frames that
// one read returned share that read's time (the kernel's receive time of the
// batch, or the moment the read returned): under CPU load the client falls
// behind, frames pile up in the socket and their own gaps are lost, showing
// as 0 ms gaps and, before them, one long one.
func SameReadWarning(sameRead, gaps int) string {
	if sameRead == 0 || sameRead*100 < gaps {
		return ""
	}
	return fmt.Sprintf("%d of %d inter-token gaps (%.0f%%) were 0 ms: those frames were read together and share one timestamp, "+
		"so their real gaps are lost and ITL percentiles, the worst gap and the spike ratio are not trustworthy. "+
		"The client machine was probably too busy: measure again on a quieter machine or with fewer --short-concurrency streams",
		sameRead, gaps, 100*float64(sameRead)/float64(gaps))
}

// assemble builds the analysis input and the measured JSON from what was recorded.
func (m *measurement) assemble(inject, wall float64, injected bool, res *Result) (lab.Run, *lab.Measured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.opts
	run := lab.Run{Label: o.Label, BaseURL: o.BaseURL, ShortConcurrency: o.ShortConcurrency,
		LongInputLen: o.LongInputLen, Inject: inject, Arrivals: m.arrivals, Long: m.long, Short: m.short, Wall: wall}
	cfg := o.Config
	meas := &lab.Measured{Config: cfg, Summary: lab.Summarise(run), Gaps: lab.GapsFrom(m.arrivals, inject)}
	x := &lab.Extra{Interrupted: res.Interrupted}
	slices.SortFunc(m.requests, func(a, b reqRec) int { return a.idx - b.idx })
	short, shortReq, bundled, noUsage, malformed, badUsage, gaps, sameRead := 0, 0, 0, 0, 0, 0, 0, 0
	var example string
	for _, q := range m.requests {
		r := q.r
		x.Requests = append(x.Requests, lab.StreamResult{OK: r.ok, TTFT: r.ttft.Seconds(), Latency: r.latency.Seconds(),
			Chunks: r.chunks, Tokens: r.tokens, Error: r.err})
		if r.ok {
			shortReq++
			if r.tokens < q.max {
				short++
				if example == "" {
					example = fmt.Sprintf("%d of %d", r.tokens, q.max)
				}
			}
			if r.bundled {
				bundled++
			}
			if !r.usage {
				noUsage++
			}
		}
		malformed += r.malformed
		gaps += r.gaps
		sameRead += r.sameRead
		if r.badUsage {
			badUsage++
		}
	}
	if res.Interrupted {
		why := "interrupted"
		if res.Stop != nil {
			why = res.Stop.Error()
		}
		x.Warnings = append(x.Warnings, fmt.Sprintf("the run stopped early (%s) at t+%.1fs: the summary covers only what was measured", why, wall))
		if !injected {
			x.Warnings = append(x.Warnings, "the long prompt was never injected: every gap counts as quiet")
		}
	}
	if short > 0 {
		hint := "the server may not honour ignore_eos (Ollama and TGI's HTTP API do not)"
		if !o.IgnoreEOS {
			hint = "--no-ignore-eos lets responses stop early"
		}
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d of %d responses produced fewer tokens than max_tokens (e.g. %s): %s, so the load was lighter than asked",
			short, shortReq, example, hint))
	}
	if bundled > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d responses had frames carrying several tokens (--stream-interval, speculative decoding or parsers): the gaps are per frame, not per token", bundled))
	}
	if o.StreamUsage && noUsage > 0 && noUsage == shortReq {
		x.Warnings = append(x.Warnings, "the server sent no usage in its chunks: tokens per frame are assumed to be 1")
	}
	if badUsage > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d responses reported more completion_tokens than max_tokens allows: their usage was ignored and each frame counted as one token", badUsage))
	}
	if w := SameReadWarning(sameRead, gaps); w != "" {
		x.Warnings = append(x.Warnings, w)
	}
	if malformed > 0 {
		x.Warnings = append(x.Warnings, fmt.Sprintf("%d data lines were not JSON and were skipped", malformed))
	}
	if o.RawFrames {
		slices.SortFunc(m.frames, func(a, b frameRec) int {
			if a.t != b.t {
				if a.t < b.t {
					return -1
				}
				return 1
			}
			return a.stream - b.stream
		})
		x.Frames = make([]lab.Frame, len(m.frames))
		for i, f := range m.frames {
			x.Frames[i] = lab.Frame{Stream: f.stream, Long: f.long, TRelInject: f.t - inject, Gap: f.gap, Tokens: f.tokens, ServerT: f.serverT}
		}
	}
	meas.Extra = x
	return run, meas
}
