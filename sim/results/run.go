package results

// The one type every tool's file is read into (Run) and the figures
// computed from it.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servelab/sim"
	"servelab/sim/internal/floats"
)

// Request is one request of a benchmark run as the tool recorded it.
// Times are seconds; a zero Prompt, Output or Latency means the file does not
// say.
type Request struct {
	Start   float64   // when it was sent, seconds after the run's first request; NaN when the file keeps no start times
	Prompt  int       // prompt tokens
	Output  int       // output tokens
	TTFT    float64   // seconds from sending to the first content chunk
	Latency float64   // seconds from sending to the last content chunk
	Gaps    []float64 // seconds between successive content chunks (one per chunk after the first), when the file keeps them
	MeanITL float64   // the tool's own per-request mean gap between tokens, when the file keeps only that
	Error   string    // why it failed; "" when it succeeded
	// Blocks are the request's prompt as prefix-cache blocks, where the
	// file gives them (a Mooncake trace's hash_ids); nil otherwise.
	Blocks BlockHashes
}

// Run is one run of a benchmark tool: its requests, the load it offered
// and the figures the file itself states.
type Run struct {
	Tool        string  // "vllm", "guidellm", "aiperf", "genai-perf", "sglang", "llmperf", "inference-perf" or "mooncake" (a trace)
	Format      string  // which of the tool's files it came from, in words
	Label       string  // a name for tables
	Model       string  // model benchmarked, when the file says
	Rate        float64 // requests/s the tool was asked to send; +Inf: all at once; 0: unknown
	Concurrency int     // most requests the tool kept in flight; 0: unbounded or unknown
	Duration    float64 // seconds the run took, when known
	Throughput  float64 // completed requests per second as the file states it (summary-only files), else 0
	Requests    []Request
	// Probe is what the run's probe requests measured, kept apart from
	// Requests (nil: the file has none).
	Probe *Probe
	// Speculation is what speculative decoding achieved over the run, as
	// the file states it (nil: it states nothing).
	Speculation *Speculation
	// Trace says the file is a request trace (Mooncake's): it records
	// arrivals and lengths, no latencies, so Figures gives none.
	Trace bool
	// BlockTokens is the tokens of one of the requests' Blocks (0: the
	// file gives no blocks).
	BlockTokens int
	// Summary is the file's own figures in seconds, keyed as Figures keys
	// them, holding only the keys whose definition matches ours.
	Summary map[string]float64
	// Method is how the tool takes percentiles: "linear" (numpy's default,
	// interpolating) or "cdf" (GuideLLM: the first value whose cumulative
	// weight reaches p). Figures uses it so they can be checked against Summary.
	Method string
	Cannot []string // figures this format cannot give, and why
	Notes  []string // what was normalised or assumed while reading
	// CannotNotes and NoteNotes are Cannot and Notes with their keys and
	// arguments, one for each line and in the same order, for a page that
	// shows them in its own language.
	CannotNotes, NoteNotes []sim.Note
}

// Probe is the outcome of a benchmark's probe requests: light requests
// sent at a low rate beside the load to time what one more request meets
// (vLLM's --probe-request-rate). Times are seconds.
type Probe struct {
	Completed, Failed int
	E2EP50, E2EP99    float64 // the probes' end-to-end latency percentiles
	E2EMax            float64
}

// Speculation is a run's speculative decoding as the server's counters
// give it over the run.
type Speculation struct {
	AcceptRate   float64 // share of drafted tokens accepted, 0..1
	AcceptLength float64 // tokens emitted per target-model pass (1 + accepted per draft)
	Drafts       int     // draft passes
	DraftTokens  int     // tokens drafted
	Accepted     int     // drafted tokens accepted
}

// note adds to Notes what was normalised or assumed (key: see Note).
func (b *Run) note(key, format string, args ...any) {
	n := sim.Say(key, format, args...)
	b.Notes, b.NoteNotes = append(b.Notes, n.Text), append(b.NoteNotes, n)
}

// cannot adds to Cannot a figure the file cannot give (key: see Note).
func (b *Run) cannot(key, format string, args ...any) {
	n := sim.Say(key, format, args...)
	b.Cannot, b.CannotNotes = append(b.Cannot, n.Text), append(b.CannotNotes, n)
}

// FigureNames are the figures Figures and Summary key: each name with _p50,
// _p90, _p99 or _mean. itl is the gap between content chunks as the file records
// it; itl_token is that gap spread over the tokens the chunk carried (a chunk
// of k tokens counts as k gaps of gap/k), or a request's mean gap counted
// once per token where the file keeps only that; tpot is (e2e − ttft) /
// (output − 1) per request.
var FigureNames = []string{"ttft", "tpot", "itl", "itl_token", "e2e"}

// Figures computes the run's figures from its successful requests, taking
// percentiles as the tool does (Method); a figure the file cannot give is
// absent, and a request trace (Trace) gives none. tick, when not nil, is called (with the fraction done) every few
// hundred thousand values sorted, and an error from it stops the work and
// is returned; with a nil tick Figures never fails. The figures do not
// depend on tick.
func (b *Run) Figures(tick Tick) (map[string]float64, error) {
	if b.Trace {
		return map[string]float64{}, nil // a trace measured nothing
	}
	var ttft, tpot, itl, e2e []float64
	var tok []weighted
	nGaps := 0
	for i := range b.Requests {
		nGaps += len(b.Requests[i].Gaps)
	}
	itl = make([]float64, 0, nGaps)
	tok = make([]weighted, 0, nGaps)
	tk := &ticker{f: tick}
	for i := range b.Requests {
		r := &b.Requests[i]
		if err := tk.add(1+len(r.Gaps), 0); err != nil {
			return nil, err
		}
		if r.Error != "" {
			continue
		}
		ttft = append(ttft, r.TTFT)
		itl = append(itl, r.Gaps...)
		if r.Latency > 0 {
			e2e = append(e2e, r.Latency)
			if r.Output > 1 {
				tpot = append(tpot, (r.Latency-r.TTFT)/float64(r.Output-1))
			}
		}
		tok = r.appendTokenGaps(tok)
	}
	total := float64(len(ttft) + len(tpot) + len(itl) + len(e2e) + len(tok) + 1)
	done := 0.0
	out := map[string]float64{}
	// The lists are this function's own: each is sorted in place, its mean
	// taken first (in the requests' order, as Figures always summed it).
	put := func(name string, xs []float64) error {
		if len(xs) == 0 {
			return nil
		}
		out[name+"_mean"] = weightedMean(xs, nil)
		if b.Method == "cdf" {
			pts := make([]weighted, len(xs))
			for i, x := range xs {
				pts[i] = weighted{x, 1}
			}
			if err := cdfFigures(name, pts, out, tk, done/total); err != nil {
				return err
			}
		} else {
			if err := sortTick(xs, floats.Compare, tk, done/total); err != nil {
				return err
			}
			for _, p := range []float64{50, 90, 99} {
				out[fmt.Sprintf("%s_p%g", name, p)] = sortedLinear(xs, p)
			}
		}
		done += float64(len(xs))
		return nil
	}
	for _, f := range []struct {
		name string
		xs   []float64
	}{{"ttft", ttft}, {"tpot", tpot}, {"itl", itl}, {"e2e", e2e}} {
		if err := put(f.name, f.xs); err != nil {
			return nil, err
		}
	}
	itl = nil
	if len(tok) > 0 {
		sw, st := 0.0, 0.0
		for _, t := range tok {
			sw += t.v * t.w
			st += t.w
		}
		if err := cdfFigures("itl_token", tok, out, tk, done/total); err != nil {
			return nil, err
		}
		out["itl_token_mean"] = 0
		if st != 0 {
			out["itl_token_mean"] = sw / st
		}
	}
	return out, nil
}

// cdfFigures puts the P50, P90 and P99 of the weighted values pts (sorted
// in place) as cdfQuantile takes them, sorting once.
func cdfFigures(name string, pts []weighted, out map[string]float64, tk *ticker, at float64) error {
	vals, ws, err := cdfPoints(pts, tk, at)
	if err != nil {
		return err
	}
	for _, p := range []float64{50, 90, 99} {
		out[fmt.Sprintf("%s_p%g", name, p)] = cdfPick(vals, ws, p)
	}
	return nil
}

type weighted struct{ v, w float64 }

// tokenGaps normalises a request's gaps to tokens: with n chunk gaps and
// Output−1 tokens after the first, each gap stands for k = (Output−1)/n
// tokens, each gap/k apart. Without gaps, the tool's mean gap (or, failing
// that, (e2e − ttft)/(output − 1)) counts once per token after the first.
func (r *Request) appendTokenGaps(out []weighted) []weighted {
	if n := len(r.Gaps); n > 0 {
		k := 1.0
		if r.Output-1 > n {
			k = float64(r.Output-1) / float64(n)
		}
		for _, g := range r.Gaps {
			out = append(out, weighted{g / k, k})
		}
		return out
	}
	if r.Output < 2 {
		return out
	}
	m := r.MeanITL
	if m == 0 && r.Latency > 0 {
		m = (r.Latency - r.TTFT) / float64(r.Output-1)
	}
	if m <= 0 {
		return out
	}
	return append(out, weighted{m, float64(r.Output - 1)})
}

// ChunkTokens is the mean number of output tokens a content chunk carried
// (1 when each chunk was one token), over requests with both counts; 0 when
// the file cannot tell.
func (b *Run) ChunkTokens() float64 {
	tokens, chunks := 0, 0
	for _, r := range b.Requests {
		if r.Error == "" && len(r.Gaps) > 0 && r.Output > 1 {
			tokens += r.Output - 1
			chunks += len(r.Gaps)
		}
	}
	if chunks == 0 {
		return 0
	}
	return float64(tokens) / float64(chunks)
}

// Timeline returns every content chunk after a request's first as a gap on
// the run's clock (seconds after its first request was sent), normalised to
// tokens as in Figures' itl_token, sorted by time; nil when the file keeps
// no start times or no chunk gaps. tick, when not nil, is called (with the
// fraction sorted) every few hundred thousand gaps, and an error from it
// stops the work and is returned; with a nil tick Timeline never fails.
func (b *Run) Timeline(tick Tick) ([]sim.Gap, error) {
	tk := &ticker{f: tick}
	n := 0
	for _, r := range b.Requests {
		n += len(r.Gaps)
	}
	var out []sim.Gap
	if n > 0 {
		out = make([]sim.Gap, 0, n)
	}
	for _, r := range b.Requests {
		if err := tk.add(1+len(r.Gaps), 0); err != nil {
			return nil, err
		}
		if r.Error != "" || math.IsNaN(r.Start) || len(r.Gaps) == 0 {
			continue
		}
		k := 1.0
		if r.Output-1 > len(r.Gaps) {
			k = float64(r.Output-1) / float64(len(r.Gaps))
		}
		t := r.Start + r.TTFT
		for _, g := range r.Gaps {
			t += g
			out = append(out, sim.Gap{TRelInject: t, Gap: g / k})
		}
	}
	// A stable sort: chunks of two requests at one time keep the file's order, whichever sort runs.
	if err := sortTick(out, func(a, b sim.Gap) int { return floats.Compare(a.TRelInject, b.TRelInject) }, tk, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// chunkNote notes that chunks carried several tokens and how the figures
// treat them; itl names the file's chunk gaps.
func (b *Run) chunkNote(k float64, itl sim.Note) {
	b.note("bench.chunks", "chunks carried %.2f tokens on average, so a chunk gap is not one inter-token gap: itl is per chunk (%s); "+
		"itl_token spreads each gap over the tokens after the first, shared evenly among the request's chunks (the file keeps each request's total, not each chunk's count)", k, itl)
}

// Failed is how many of the run's requests failed (errored, cancelled or
// incomplete): Figures leaves them out.
func (b *Run) Failed() int {
	n := 0
	for _, r := range b.Requests {
		if r.Error != "" {
			n++
		}
	}
	return n
}

// HasStarts reports whether every request's start time is known.
func (b *Run) HasStarts() bool {
	for _, r := range b.Requests {
		if math.IsNaN(r.Start) {
			return false
		}
	}
	return len(b.Requests) > 0
}

// MeanLengths returns the mean prompt and output tokens over the requests
// that state them (0 when none does).
func (b *Run) MeanLengths() (prompt, output float64) {
	var ps, os, pn, on int
	for _, r := range b.Requests {
		if r.Prompt > 0 {
			ps += r.Prompt
			pn++
		}
		if r.Output > 0 {
			os += r.Output
			on++
		}
	}
	if pn > 0 {
		prompt = float64(ps) / float64(pn)
	} else {
		prompt = b.Summary["prompt_tokens_mean"]
	}
	if on > 0 {
		output = float64(os) / float64(on)
	} else {
		output = b.Summary["output_tokens_mean"]
	}
	return prompt, output
}

// Companion names the file the tool writes beside a per-request file with
// its own figures — AIPerf's profile_export_aiperf.json, GenAI-Perf's
// profile_export_genai_perf.json, llmperf's *_summary.json,
// inference-perf's summary_lifecycle_metrics.json — given the
// per-request file's path; "" when the tool writes none. (Reading it is the
// caller's: sim does no I/O.)
func (b *Run) Companion(path string) string {
	dir, base := "", path
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	switch b.Tool {
	case "llmperf":
		if p, ok := strings.CutSuffix(base, "_individual_responses.json"); ok {
			return dir + p + "_summary.json"
		}
	case "aiperf":
		if base == "profile_export.jsonl" || base == "profile_export_raw.jsonl" {
			return dir + "profile_export_aiperf.json"
		}
		p := strings.TrimSuffix(strings.TrimSuffix(base, ".jsonl"), "_raw")
		if p != base {
			return dir + p + ".json"
		}
	case "genai-perf":
		if p, ok := strings.CutSuffix(base, ".json"); ok && !strings.HasSuffix(p, "_genai_perf") {
			return dir + p + "_genai_perf.json"
		}
	case "inference-perf":
		if base == "per_request_lifecycle_metrics.json" {
			return dir + "summary_lifecycle_metrics.json"
		}
	}
	return ""
}

// AchievedRate is requests sent per second over the run: from the start
// times when known, else completed requests over Duration; 0 when neither.
func (b *Run) AchievedRate() float64 {
	n := len(b.Requests)
	if b.HasStarts() && n > 1 {
		last := 0.0
		for _, r := range b.Requests {
			last = math.Max(last, r.Start)
		}
		if last > 0 {
			return float64(n-1) / last
		}
	}
	if b.Duration > 0 && n > 0 {
		return float64(n) / b.Duration
	}
	return b.Throughput
}

// Merge takes a summary-only run of the same tool (a *_summary.json or
// profile_export_*.json beside the per-request file) into b: its figures,
// and the load it states where b does not know it.
func (b *Run) Merge(s *Run) {
	if b.Summary == nil {
		b.Summary = map[string]float64{}
	}
	for k, v := range s.Summary {
		if _, ok := b.Summary[k]; !ok {
			b.Summary[k] = v
		}
	}
	if b.Rate == 0 {
		b.Rate = s.Rate
	}
	if b.Concurrency == 0 {
		b.Concurrency = s.Concurrency
	}
	if b.Duration == 0 {
		b.Duration = s.Duration
	}
	if b.Throughput == 0 {
		b.Throughput = s.Throughput
	}
	kept, keptNotes := b.Cannot[:0], b.CannotNotes[:0]
	for i, c := range b.Cannot {
		if !strings.Contains(c, "beside this file") { // what the companion gave is no longer missing
			kept = append(kept, c)
			if i < len(b.CannotNotes) {
				keptNotes = append(keptNotes, b.CannotNotes[i])
			}
		}
	}
	b.Cannot, b.CannotNotes = kept, keptNotes
	b.note("bench.merged", "figures stated by %s", s.Format)
}

// linearQuantile is numpy's default percentile (and pandas' quantile):
// linear interpolation between the closest ranks.
func linearQuantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sortTick(s, floats.Compare, &ticker{}, 0)
	return sortedLinear(s, p)
}

// sortedLinear is linearQuantile of s, sorted.
func sortedLinear(s []float64, p float64) float64 {
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	t := pos - float64(lo)
	return s[lo] + (s[lo+1]-s[lo])*t
}

// cdfQuantile is GuideLLM's percentile: values sorted with their weights
// (nil: equal), the first value whose cumulative probability reaches p/100.
func cdfQuantile(xs, w []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pts := make([]weighted, len(xs))
	for i, x := range xs {
		pts[i] = weighted{x, 1}
		if w != nil {
			pts[i].w = w[i]
		}
	}
	vals, ws, _ := cdfPoints(pts, &ticker{}, 0)
	return cdfPick(vals, ws, p)
}

// cdfPoints sorts pts by value (stably, in place) and merges equal values
// into one point, as GuideLLM's np.unique does; the weights are turned
// into each point's share of the total.
func cdfPoints(pts []weighted, tk *ticker, at float64) (vals, shares []float64, err error) {
	if err := sortTick(pts, func(a, b weighted) int { return floats.Compare(a.v, b.v) }, tk, at); err != nil {
		return nil, nil, err
	}
	total := 0.0
	for i, p := range pts {
		if i&1023 == 0 {
			if err := tk.add(1024, at); err != nil {
				return nil, nil, err
			}
		}
		total += p.w
		if n := len(vals); n > 0 && vals[n-1] == p.v {
			shares[n-1] += p.w
			continue
		}
		vals, shares = append(vals, p.v), append(shares, p.w)
	}
	for i := range shares {
		shares[i] /= total
	}
	return vals, shares, nil
}

// cdfPick is the first point whose cumulative share reaches p/100.
func cdfPick(vals, shares []float64, p float64) float64 {
	cum := 0.0
	for i, v := range vals {
		cum += shares[i]
		if cum >= p/100 {
			return v
		}
	}
	return vals[len(vals)-1]
}

func weightedMean(xs, w []float64) float64 {
	s, t := 0.0, 0.0
	for i, x := range xs {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		s += x * wi
		t += wi
	}
	if t == 0 {
		return 0
	}
	return s / t
}
