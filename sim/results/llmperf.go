package results

// llmperf (Ray's token_benchmark_ray.py --results-dir): a JSON list
// *_individual_responses.json, per request ttft_s, end_to_end_latency_s,
// inter_token_latency_s, number_input_tokens, number_output_tokens,
// error_code, error_msg; and *_summary.json, the flattened aggregates
// results_<metric>_quantiles_p50 (pandas' linear quantiles), _mean, with
// num_concurrent_requests. No timestamps and no per-token times.

import (
	"encoding/json"
	"fmt"
	"math"

	"servelab/sim/internal/jsonread"
	"sort"
	"strings"
)

type llmperfRow struct {
	TTFT    *float64 `json:"ttft_s"`
	E2E     *float64 `json:"end_to_end_latency_s"`
	Input   *float64 `json:"number_input_tokens"`
	Output  *float64 `json:"number_output_tokens"`
	ErrCode any      `json:"error_code"`
	ErrMsg  string   `json:"error_msg"`
}

// llmperfList reads *_individual_responses.json an entry at a time,
// keeping the first entry's decoding error for the end (as json.Unmarshal
// of the whole list would report it).
type llmperfList struct {
	rows []llmperfRow
	err  error
}

func newLLMPerfList() lineReader { return &llmperfList{} }

func (l *llmperfList) line(raw []byte) error {
	var row llmperfRow
	if err := json.Unmarshal(raw, &row); err != nil && l.err == nil {
		l.err = err
	}
	l.rows = append(l.rows, row)
	return nil
}

func (l *llmperfList) finish() ([]*Run, error) {
	if l.err != nil {
		return nil, jsonread.FieldError(l.err, "individual responses")
	}
	return llmperfRuns(l.rows)
}

// llmperfRuns is the run of the decoded rows.
func llmperfRuns(rows []llmperfRow) ([]*Run, error) {
	b := &Run{Tool: "llmperf", Format: "llmperf *_individual_responses.json", Method: "linear", Summary: map[string]float64{}}
	for _, q := range rows {
		r := Request{Start: math.NaN()}
		if q.ErrCode != nil {
			r.Error = fmt.Sprintf("error %v", q.ErrCode)
			if q.ErrMsg != "" {
				r.Error = q.ErrMsg
			}
		}
		if q.TTFT != nil {
			r.TTFT = *q.TTFT
		}
		if q.E2E != nil {
			r.Latency = *q.E2E
		}
		if q.Input != nil {
			r.Prompt = int(*q.Input)
		}
		if q.Output != nil {
			r.Output = int(*q.Output)
		}
		b.Requests = append(b.Requests, r)
	}
	if err := checkRequests(b.Requests, nil); err != nil {
		return nil, err
	}
	b.cannot("bench.llmperf.times", "itl (per chunk), per-token times and start times: llmperf keeps none, so nothing goes on the timeline")
	b.cannot("bench.llmperf.itl", "llmperf's inter_token_latency_s: it is (TTFT + every gap) / output tokens, the TTFT included, so it is not compared; tpot and itl_token come from e2e − TTFT")
	b.cannot("bench.llmperf.load", "the load asked for and the tool's own percentiles: they are in *_summary.json beside this file")
	b.note("bench.llmperf.tokens", "output tokens are llmperf's re-tokenized count of the text (a Llama tokenizer), not the server's")
	return []*Run{b}, nil
}

func readLLMPerfSummary(name string, data []byte) ([]*Run, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	// llmperf writes a figure it could not compute as NaN (the literal,
	// read as null, or the string): not available, and said so below.
	var nan []string
	num := func(k string) (float64, bool) {
		var f flexNum
		v, ok := obj[k]
		if ok && json.Unmarshal(v, &f) == nil && f.OK && !math.IsInf(f.V, 0) && !math.IsNaN(f.V) {
			return f.V, true
		}
		if ok && (string(v) == "null" || f.OK && math.IsNaN(f.V)) {
			nan = append(nan, k)
		}
		return 0, false
	}
	b := &Run{Tool: "llmperf", Format: "llmperf *_summary.json", Method: "linear", Summary: map[string]float64{}}
	for theirs, ours := range map[string]string{"ttft_s": "ttft", "end_to_end_latency_s": "e2e"} {
		for _, p := range []string{"p50", "p90", "p99"} {
			if v, ok := num("results_" + theirs + "_quantiles_" + p); ok {
				b.Summary[ours+"_"+p] = v
			}
		}
		if v, ok := num("results_" + theirs + "_mean"); ok {
			b.Summary[ours+"_mean"] = v
		}
	}
	for theirs, ours := range map[string]string{"results_number_input_tokens_mean": "prompt_tokens_mean", "results_number_output_tokens_mean": "output_tokens_mean"} {
		if v, ok := num(theirs); ok {
			b.Summary[ours] = v
		}
	}
	if v, ok := num("num_concurrent_requests"); ok && v > 0 {
		b.Concurrency = int(v)
	}
	if pm, ok := num("results_num_completed_requests_per_min"); ok && pm > 0 {
		b.Throughput = pm / 60
		if n, ok := num("results_num_completed_requests"); ok {
			b.Duration = n * 60 / pm
		}
	}
	var model string
	if v, ok := obj["model"]; ok {
		_ = json.Unmarshal(v, &model)
	}
	b.Model = model
	b.cannot("bench.llmperf.aggregate", "per-request data: this is the aggregate; the requests are in *_individual_responses.json beside it")
	if len(nan) > 0 {
		sort.Strings(nan)
		b.cannot("bench.llmperf.nan", "%s: the file gives NaN (not available)", strings.Join(nan, ", "))
	}
	b.cannot("bench.llmperf.itlsummary", "llmperf's inter_token_latency_s includes the TTFT and is not compared")
	return []*Run{b}, nil
}
