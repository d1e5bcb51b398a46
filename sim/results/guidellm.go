package results

// GuideLLM's benchmarks.json: benchmarks[], each with metrics (status
// distributions: successful.{mean, median, percentiles.p50...}) and requests
// {successful, incomplete, errored}. Two generations of per-request stats:
// v0.4 on keeps Unix-second timings under info.timings (request_start,
// first_token_iteration, last_token_iteration, request_end); v0.2–v0.3 keep
// start_time, first_token_time, last_token_time, end_time at the top. Both
// write the computed time_to_first_token_ms, inter_token_latency_ms (a
// per-request mean) and request_latency, and no time per token.

import (
	"encoding/json"
	"fmt"
	"math"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

type guideReq struct {
	PromptTokens  *int     `json:"prompt_tokens"`
	OutputTokens  *int     `json:"output_tokens"`
	TTFTms        *float64 `json:"time_to_first_token_ms"`
	ITLms         *float64 `json:"inter_token_latency_ms"`
	Latency       *float64 `json:"request_latency"`
	StartTime     *float64 `json:"start_time"`       // v0.2–v0.3
	EndTime       *float64 `json:"end_time"`         // v0.2–v0.3
	FirstToken    *float64 `json:"first_token_time"` // v0.2–v0.3
	LastToken     *float64 `json:"last_token_time"`  // v0.2–v0.3
	SchedulerInfo *struct {
		RequestStart *float64 `json:"request_start"`
	} `json:"scheduler_info"`
	Info *struct {
		Error   *string `json:"error"`
		Timings *struct {
			RequestStart *float64 `json:"request_start"`
			FirstToken   *float64 `json:"first_token_iteration"`
			LastToken    *float64 `json:"last_token_iteration"`
			RequestEnd   *float64 `json:"request_end"`
		} `json:"timings"`
	} `json:"info"`
}

type guideDist struct {
	Successful *struct {
		Mean        *float64           `json:"mean"`
		Median      *float64           `json:"median"`
		Percentiles map[string]float64 `json:"percentiles"`
	} `json:"successful"`
}

type guideStrategy struct {
	Type    string  `json:"type_"`
	Rate    flexNum `json:"rate"`
	Streams flexNum `json:"streams"`
}

type guideBench struct {
	Config *struct {
		Strategy *guideStrategy `json:"strategy"`
	} `json:"config"`
	Args *struct {
		Strategy *guideStrategy `json:"strategy"`
	} `json:"args"`
	// GuideLLM 0.5 keeps the requests of its warm-up and cool-down in the
	// file but leaves them out of its metrics: those that do not overlap
	// the measured window [measure_start_time, measure_end_time].
	SchedulerMetrics *struct {
		MeasureStart flexNum `json:"measure_start_time"`
		MeasureEnd   flexNum `json:"measure_end_time"`
	} `json:"scheduler_metrics"`
	StartTime flexNum `json:"start_time"`
	EndTime   flexNum `json:"end_time"`
	Duration  flexNum `json:"duration"`
	Metrics   struct {
		PromptTokens  guideDist `json:"prompt_token_count"`
		OutputTokens  guideDist `json:"output_token_count"`
		RPS           guideDist `json:"requests_per_second"`
		TTFT          guideDist `json:"time_to_first_token_ms"`
		ITL           guideDist `json:"inter_token_latency_ms"`
		Latency       guideDist `json:"request_latency"`
		RequestTotals *struct {
			Successful int `json:"successful"`
		} `json:"request_totals"`
	} `json:"metrics"`
	RequestTotals *struct {
		Successful int `json:"successful"`
	} `json:"request_totals"`
	Requests struct {
		Successful []guideReq `json:"successful"`
		Incomplete []guideReq `json:"incomplete"`
		Errored    []guideReq `json:"errored"`
	} `json:"requests"`
}

func readGuideLLM(name string, data []byte) ([]*Run, error) {
	var doc struct {
		Benchmarks []json.RawMessage `json:"benchmarks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonread.FieldError(err, "benchmarks")
	}
	if len(doc.Benchmarks) == 0 {
		return nil, sim.Refuse("bench.err.nobenchmark", "benchmarks: empty; GuideLLM wrote no benchmark")
	}
	benches := make([]guideBench, len(doc.Benchmarks))
	errs := make([]error, len(doc.Benchmarks))
	for i, raw := range doc.Benchmarks {
		errs[i] = json.Unmarshal(raw, &benches[i])
	}
	return guideRuns(benches, errs)
}

// guideRuns are the runs of the benchmarks decoded (errs: each one's decoding error).
func guideRuns(benches []guideBench, errs []error) ([]*Run, error) {
	if len(benches) == 0 {
		return nil, sim.Refuse("bench.err.nobenchmark", "benchmarks: empty; GuideLLM wrote no benchmark")
	}
	var runs []*Run
	for i := range benches {
		if errs[i] != nil {
			return nil, jsonread.FieldError(errs[i], fmt.Sprintf("benchmarks[%d]", i))
		}
		b, err := benches[i].run()
		if err != nil {
			return nil, fmt.Errorf("benchmarks[%d]: %w", i, err)
		}
		runs = append(runs, b)
	}
	return runs, nil
}

func (g *guideBench) run() (*Run, error) {
	b := &Run{Tool: "guidellm", Format: "GuideLLM benchmarks.json", Method: "cdf", Summary: map[string]float64{}}
	var s *guideStrategy // v0.4 on: config.strategy; before: args.strategy
	if g.Config != nil {
		s = g.Config.Strategy
	}
	if s == nil && g.Args != nil {
		s = g.Args.Strategy
	}
	if s != nil {
		switch s.Type {
		case "synchronous":
			b.Concurrency = 1
		case "concurrent":
			b.Concurrency = int(s.Streams.V)
		case "throughput":
			b.Rate = math.Inf(1)
		case "constant", "poisson":
			b.Rate = s.Rate.V
		}
		b.Format += " (" + s.Type + ")"
	}
	switch {
	case g.Duration.OK && g.Duration.V > 0:
		b.Duration = g.Duration.V
	case g.StartTime.OK && g.EndTime.OK && g.EndTime.V > g.StartTime.V:
		b.Duration = g.EndTime.V - g.StartTime.V
	}
	outside := 0
	add := func(rs []guideReq, status string) {
		for _, q := range rs {
			r := q.request()
			if !g.measured(r) {
				outside++
				continue
			}
			if status != "" {
				r.Error = status
				if q.Info != nil && q.Info.Error != nil && *q.Info.Error != "" {
					r.Error = *q.Info.Error
				}
			}
			b.Requests = append(b.Requests, r)
		}
	}
	add(g.Requests.Successful, "")
	add(g.Requests.Incomplete, "incomplete")
	add(g.Requests.Errored, "errored")
	if outside > 0 {
		b.note("bench.guidellm.window", "%d requests of the warm-up or cool-down left out, as GuideLLM's own metrics leave them out (they do not overlap the measured window)", outside)
	}
	if err := checkRequests(b.Requests, nil); err != nil {
		return nil, err
	}
	rebase(b.Requests)
	for _, m := range []struct {
		d     guideDist
		name  string
		scale float64
	}{{g.Metrics.TTFT, "ttft", 1e-3}, {g.Metrics.ITL, "itl_token", 1e-3}, {g.Metrics.Latency, "e2e", 1}} {
		s := m.d.Successful
		if s == nil {
			continue
		}
		if s.Median != nil {
			b.Summary[m.name+"_p50"] = *s.Median * m.scale
		}
		if s.Mean != nil {
			b.Summary[m.name+"_mean"] = *s.Mean * m.scale
		}
		for _, p := range []string{"p90", "p99"} {
			if v, ok := s.Percentiles[p]; ok {
				b.Summary[m.name+"_"+p] = v * m.scale
			}
		}
	}
	// Counts for a file that keeps no requests (GuideLLM's output sampling off).
	for _, m := range []struct {
		d    guideDist
		name string
	}{{g.Metrics.PromptTokens, "prompt_tokens_mean"}, {g.Metrics.OutputTokens, "output_tokens_mean"}} {
		if m.d.Successful != nil && m.d.Successful.Mean != nil {
			b.Summary[m.name] = *m.d.Successful.Mean
		}
	}
	if s := g.Metrics.RPS.Successful; s != nil && s.Mean != nil {
		b.Throughput = *s.Mean
	}
	total := g.RequestTotals
	if g.Metrics.RequestTotals != nil {
		total = g.Metrics.RequestTotals
	}
	if total != nil && total.Successful > len(g.Requests.Successful) {
		b.note("bench.guidellm.sample", "the file keeps a sample of %d of %d successful requests; figures from the sample can differ from the file's own", len(g.Requests.Successful), total.Successful)
	}
	b.note("bench.guidellm.itl", "itl_token is GuideLLM's per-request mean gap counted once per token after the first, as its own inter_token_latency_ms distribution counts it")
	b.cannot("bench.guidellm.times", "itl (per chunk) and per-token times: GuideLLM keeps only each request's first and last token times, so nothing goes on the timeline")
	return b, nil
}

// measured reports whether request r (its start still on the Unix clock)
// counts in GuideLLM's metrics: it overlaps the measured window the file
// states, or the file states none. A request with no end (cancelled) ends
// never.
func (g *guideBench) measured(r Request) bool {
	m := g.SchedulerMetrics
	if m == nil || !m.MeasureStart.OK || !m.MeasureEnd.OK || math.IsNaN(r.Start) {
		return true
	}
	end := math.Inf(1)
	if r.Latency > 0 {
		end = r.Start + r.Latency
	}
	return end > m.MeasureStart.V && r.Start < m.MeasureEnd.V
}

// request reads either generation's fields; the computed ones the tool
// wrote win, so figures agree with its summary.
func (q *guideReq) request() Request {
	r := Request{Start: math.NaN()}
	var start, first, last, end *float64
	if q.Info != nil && q.Info.Timings != nil {
		t := q.Info.Timings
		start, first, last, end = t.RequestStart, t.FirstToken, t.LastToken, t.RequestEnd
	} else {
		start, first, last, end = q.StartTime, q.FirstToken, q.LastToken, q.EndTime
		if start == nil && q.SchedulerInfo != nil {
			start = q.SchedulerInfo.RequestStart
		}
	}
	if start != nil {
		r.Start = *start
	}
	if q.PromptTokens != nil {
		r.Prompt = *q.PromptTokens
	}
	if q.OutputTokens != nil {
		r.Output = *q.OutputTokens
	}
	switch {
	case q.TTFTms != nil:
		r.TTFT = *q.TTFTms / 1000
	case start != nil && first != nil:
		r.TTFT = *first - *start
	}
	switch {
	case q.Latency != nil:
		r.Latency = *q.Latency
	case start != nil && end != nil:
		r.Latency = *end - *start
	}
	switch {
	case q.ITLms != nil:
		r.MeanITL = *q.ITLms / 1000
	case first != nil && last != nil && r.Output > 1:
		r.MeanITL = (*last - *first) / float64(r.Output-1)
	}
	return r
}
