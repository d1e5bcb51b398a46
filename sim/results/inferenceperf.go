package results

// inference-perf (kubernetes-sigs/inference-perf): with
// report.request_lifecycle.per_request it writes
// per_request_lifecycle_metrics.json, a JSON list, per request
// {start_time, end_time (a monotonic clock, seconds), request, response,
// info, error}; info holds response_metrics{output_tokens, chunk_times,
// output_token_times} and request_metrics.text.input_tokens (0.5), or
// input_tokens, output_tokens and output_token_times directly (earlier
// versions). Its summaries, stage_N_lifecycle_metrics.json and
// summary_lifecycle_metrics.json, hold successes.latency.<metric>{mean,
// median, p90, p99, ...} in seconds (numpy's linear percentiles) and
// load_summary{requested_rate, achieved_rate, send_duration}.

import (
	"encoding/json"
	"fmt"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

type ipTimes struct {
	OutputTokens *float64  `json:"output_tokens"`
	ChunkTimes   []float64 `json:"chunk_times"`
	TokenTimes   []float64 `json:"output_token_times"`
}

type ipRecord struct {
	Start *float64 `json:"start_time"`
	End   *float64 `json:"end_time"`
	Info  *struct {
		ipTimes
		InputTokens    *float64 `json:"input_tokens"`
		RequestMetrics *struct {
			Text *struct {
				InputTokens *float64 `json:"input_tokens"`
			} `json:"text"`
		} `json:"request_metrics"`
		ResponseMetrics *ipTimes `json:"response_metrics"`
	} `json:"info"`
	Error *struct {
		Type string `json:"error_type"`
		Msg  string `json:"error_msg"`
	} `json:"error"`
}

// ipList reads per_request_lifecycle_metrics.json an entry at a time.
type ipList struct {
	recs []ipRecord
	err  error
}

func newInferencePerfList() lineReader { return &ipList{} }

func (l *ipList) line(raw []byte) error {
	var rec ipRecord
	if err := json.Unmarshal(raw, &rec); err != nil && l.err == nil {
		l.err = jsonread.FieldError(err, fmt.Sprintf("[%d]", len(l.recs)))
	}
	l.recs = append(l.recs, rec)
	return nil
}

func (l *ipList) finish() ([]*Run, error) {
	if l.err != nil {
		return nil, l.err
	}
	b := &Run{Tool: "inference-perf", Format: "inference-perf per_request_lifecycle_metrics.json", Method: "linear", Summary: map[string]float64{}}
	noTimes := 0
	for i, rec := range l.recs {
		if rec.Start == nil || rec.End == nil || rec.Info == nil {
			return nil, sim.Refuse("bench.err.ipfields", "request %d: start_time, end_time and info are each required", i)
		}
		r := Request{Start: *rec.Start}
		info := rec.Info
		times := info.ipTimes
		if info.ResponseMetrics != nil {
			times = *info.ResponseMetrics
		}
		switch {
		case info.InputTokens != nil:
			r.Prompt = int(*info.InputTokens)
		case info.RequestMetrics != nil && info.RequestMetrics.Text != nil && info.RequestMetrics.Text.InputTokens != nil:
			r.Prompt = int(*info.RequestMetrics.Text.InputTokens)
		}
		if times.OutputTokens != nil {
			r.Output = int(*times.OutputTokens)
		}
		// inference-perf times the first and last token from
		// output_token_times (chunk_times where it keeps only those), which
		// give every token of a chunk the chunk's arrival: the chunks are
		// the distinct times, and their gaps the nonzero differences.
		tt := times.TokenTimes
		if len(tt) == 0 {
			tt = times.ChunkTimes
		}
		switch {
		case rec.Error != nil:
			r.Error = rec.Error.Type
			if rec.Error.Msg != "" {
				r.Error += ": " + rec.Error.Msg
			}
		case len(tt) == 0:
			r.Error, noTimes = "no token arrived", noTimes+1
		default:
			r.TTFT = tt[0] - *rec.Start
			r.Latency = tt[len(tt)-1] - *rec.Start
			for j := 1; j < len(tt); j++ {
				if g := tt[j] - tt[j-1]; g != 0 {
					r.Gaps = append(r.Gaps, g)
				}
			}
		}
		b.Requests = append(b.Requests, r)
	}
	if len(b.Requests) == 0 {
		return nil, sim.Refuse("bench.err.emptylist", "an empty JSON list: no requests")
	}
	if err := checkRequests(b.Requests, nil); err != nil {
		return nil, err
	}
	b.Duration = runSpan(b.Requests)
	rebase(b.Requests)
	if noTimes > 0 {
		b.note("bench.ip.notimes", "%d requests without an error and without a token time are counted as failed", noTimes)
	}
	b.note("bench.ip.e2e", "e2e is the last token's arrival; inference-perf's request_latency runs to the end of the response and is not compared")
	b.cannot("bench.ip.load", "the load asked for and the tool's own percentiles: they are in summary_lifecycle_metrics.json beside this file")
	return []*Run{b}, nil
}

// readInferencePerfSummary reads a stage_N_ or summary_lifecycle_metrics.json.
func readInferencePerfSummary(name string, data []byte) ([]*Run, error) {
	type dist map[string]flexNum
	var doc struct {
		Time *flexNum `json:"benchmark_time_seconds"`
		Load struct {
			Requested flexNum `json:"requested_rate"`
			Send      flexNum `json:"send_duration"`
		} `json:"load_summary"`
		Successes struct {
			Count   flexNum          `json:"count"`
			Latency map[string]*dist `json:"latency"`
			Prompt  *dist            `json:"prompt_len"`
			Output  *dist            `json:"output_len"`
		} `json:"successes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonread.FieldError(err, "lifecycle metrics")
	}
	b := &Run{Tool: "inference-perf", Format: "inference-perf lifecycle metrics (summary)", Method: "linear", Summary: map[string]float64{}}
	for theirs, ours := range map[string]string{"time_to_first_token": "ttft", "time_per_output_token": "tpot"} {
		d := doc.Successes.Latency[theirs]
		if d == nil {
			continue
		}
		for k, suf := range map[string]string{"mean": "mean", "median": "p50", "p90": "p90", "p99": "p99"} {
			if v, ok := (*d)[k]; ok && v.OK && finite(v.V) {
				b.Summary[ours+"_"+suf] = v.V
			}
		}
	}
	for _, m := range []struct {
		d   *dist
		key string
	}{{doc.Successes.Prompt, "prompt_tokens_mean"}, {doc.Successes.Output, "output_tokens_mean"}} {
		if m.d != nil {
			if v, ok := (*m.d)["mean"]; ok && v.OK && finite(v.V) {
				b.Summary[m.key] = v.V
			}
		}
	}
	if r := doc.Load.Requested; r.OK && r.V > 0 && finite(r.V) {
		b.Rate = r.V
	}
	switch {
	case doc.Time != nil && doc.Time.OK && doc.Time.V > 0 && doc.Time.V <= MaxSeconds:
		b.Duration = doc.Time.V
	case doc.Load.Send.OK && doc.Load.Send.V > 0 && doc.Load.Send.V <= MaxSeconds:
		b.Duration = doc.Load.Send.V
	}
	if n := doc.Successes.Count; n.OK && n.V > 0 && b.Duration > 0 {
		b.Throughput = n.V / b.Duration
	}
	b.note("bench.ip.tpot", "inference-perf's time_per_output_token is (last token − first token) / (output − 1): servelab's tpot")
	b.cannot("bench.ip.itl", "inference-perf's inter_token_latency: it gives every token of a chunk the chunk's arrival (gaps of 0 inside a chunk), neither servelab's itl per chunk nor its itl_token, so it is not compared")
	b.cannot("bench.ip.aggregate", "per-request data: this is the aggregate; the requests are in per_request_lifecycle_metrics.json (report.request_lifecycle.per_request)")
	return []*Run{b}, nil
}
