package results

// vLLM's `vllm bench serve --save-result --save-detailed` (and the older
// benchmarks/benchmark_serving.py): one JSON object, summary keys beside
// per-request arrays. The arrays are SGLang bench_serving's too
// (sglang.go reads them with perRequestArrays).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

func readVLLMRun(name string, data []byte) ([]*Run, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, sim.Refuse("vllm.err.notresult", "not a vLLM bench result: %v", err)
	}
	r, err := vllmRun(obj, nil)
	if err != nil {
		return nil, err
	}
	return []*Run{r}, nil
}

// vllmRun is the run of a vLLM file's object (pre: the arrays read already).
func vllmRun(obj map[string]json.RawMessage, pre *preRead) (*Run, error) {
	b := &Run{Tool: "vllm", Format: "vllm bench serve --save-detailed", Method: "linear", Summary: map[string]float64{}}
	if err := perRequestArrays(obj, pre, b); err != nil {
		return nil, err
	}
	for theirs, ours := range map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e"} {
		msKeys(obj, theirs, ours, b.Summary)
	}
	vllmProbe(obj, b)
	vllmSpeculation(obj, b)
	return b, nil
}

// readVLLMSummary reads a vLLM summary (`vllm bench serve --save-result`
// without --save-detailed): the figures it states, the rate, concurrency
// and duration, the mean lengths, and no requests. A run whose every
// request failed is refused with its counts: its 0.0 figures measured
// nothing.
func readVLLMSummary(_ string, data []byte) ([]*Run, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, sim.Refuse("vllm.err.notresult", "not a vLLM bench result: %v", err)
	}
	done, okDone := vllmNum(obj, "completed")
	failed, _ := vllmNum(obj, "failed")
	if okDone && done == 0 {
		return nil, sim.Refuse("bench.err.allfailed", "a benchmark summary without per-request arrays (itls) whose every request failed (0 completed, %d failed): there is nothing measured to compare", int(failed))
	}
	b := &Run{Tool: "vllm", Format: "vllm bench serve --save-result (summary)", Method: "linear", Summary: map[string]float64{}}
	for theirs, ours := range map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e"} {
		msKeys(obj, theirs, ours, b.Summary)
	}
	var rate flexNum
	if v, ok := obj["request_rate"]; ok && json.Unmarshal(v, &rate) == nil && rate.OK && rate.V > 0 {
		b.Rate = rate.V // +Inf: every request at once
	}
	if c, ok := vllmNum(obj, "max_concurrency"); ok && c > 0 {
		b.Concurrency = int(c)
	}
	if d, ok := vllmNum(obj, "duration"); ok && d > 0 {
		b.Duration = d
	}
	if t, ok := vllmNum(obj, "request_throughput"); ok && t > 0 {
		b.Throughput = t
	}
	if okDone && done > 0 {
		for theirs, ours := range map[string]string{"total_input_tokens": "prompt_tokens_mean", "total_output_tokens": "output_tokens_mean"} {
			if n, ok := vllmNum(obj, theirs); ok && n > 0 {
				b.Summary[ours] = n / done
			}
		}
	}
	_ = json.Unmarshal(obj["model_id"], &b.Model)
	b.cannot("bench.vllm.summary", "per-request data: a summary keeps none (%d completed, %d failed); write it with --save-detailed for the requests", int(done), int(failed))
	vllmProbe(obj, b)
	vllmSpeculation(obj, b)
	return []*Run{b}, nil
}

// vllmNum is the finite number obj holds at key (false: absent, null or not one).
func vllmNum(obj map[string]json.RawMessage, key string) (float64, bool) {
	var f flexNum
	v, ok := obj[key]
	if !ok || json.Unmarshal(v, &f) != nil || !f.OK || !finite(f.V) {
		return 0, false
	}
	return f.V, true
}

// vllmProbe reads the probe requests' keys (--probe-request-rate):
// probe_completed, probe_failed, probe_{median,p99,max}_e2el_ms.
func vllmProbe(obj map[string]json.RawMessage, b *Run) {
	done, ok := vllmNum(obj, "probe_completed")
	if !ok {
		return
	}
	p := &Probe{Completed: int(done)}
	if v, ok := vllmNum(obj, "probe_failed"); ok {
		p.Failed = int(v)
	}
	p.E2EP50, _ = vllmNum(obj, "probe_median_e2el_ms")
	p.E2EP99, _ = vllmNum(obj, "probe_p99_e2el_ms")
	p.E2EMax, _ = vllmNum(obj, "probe_max_e2el_ms")
	p.E2EP50, p.E2EP99, p.E2EMax = p.E2EP50/1000, p.E2EP99/1000, p.E2EMax/1000
	b.Probe = p
	b.note("bench.vllm.probe", "probe requests (apart from the %d requests): %d completed, %d failed, e2e median %.2f ms, p99 %.2f ms",
		len(b.Requests), p.Completed, p.Failed, p.E2EP50*1000, p.E2EP99*1000)
}

// vllmSpeculation reads spec_decode_acceptance_rate (a percentage),
// _acceptance_length, _num_drafts, _draft_tokens and _accepted_tokens.
func vllmSpeculation(obj map[string]json.RawMessage, b *Run) {
	rate, ok := vllmNum(obj, "spec_decode_acceptance_rate")
	if !ok {
		return
	}
	s := &Speculation{AcceptRate: rate / 100}
	s.AcceptLength, _ = vllmNum(obj, "spec_decode_acceptance_length")
	for _, f := range []struct {
		key string
		dst *int
	}{{"spec_decode_num_drafts", &s.Drafts}, {"spec_decode_draft_tokens", &s.DraftTokens}, {"spec_decode_accepted_tokens", &s.Accepted}} {
		if v, ok := vllmNum(obj, f.key); ok {
			*f.dst = int(v)
		}
	}
	b.Speculation = s
	b.note("bench.vllm.spec", "speculative decoding: %.1f%% of drafted tokens accepted, %.2f tokens a target-model pass", rate, s.AcceptLength)
}

// perRequestArrays reads the keys vLLM and SGLang share: model_id, duration,
// request_rate, max_concurrency and the per-request input_lens, output_lens,
// ttfts, itls (one gap per chunk), errors, and, where the version writes
// them, latencies (or e2els) and start_times.
func perRequestArrays(obj map[string]json.RawMessage, pre *preRead, b *Run) error {
	var (
		inputs, outputs       []int
		ttfts, e2els, lats    []float64
		starts                []float64
		itls                  [][]float64
		errs                  []string
		rate, conc, dur       flexNum
		model, backend, label string
	)
	if err := decodeKeys(obj, pre, "", map[string]any{
		"input_lens": &inputs, "output_lens": &outputs, "ttfts": &ttfts, "itls": &itls, "errors": &errs,
		"e2els": &e2els, "latencies": &lats, "start_times": &starts, "request_rate": &rate, "max_concurrency": &conc,
		"duration": &dur, "model_id": &model, "backend": &backend, "label": &label,
	}); err != nil {
		return err
	}
	if _, ok := obj["itls"]; !ok {
		return sim.Refuse("bench.err.noitls", "itls: missing; per-request arrays are written with vLLM's --save-detailed or SGLang's --output-details")
	}
	if len(e2els) == 0 {
		e2els = lats // vLLM names them latencies; some forks e2els
	}
	n := len(itls)
	if len(errs) != 0 && len(errs) != n && len(ttfts) == n {
		// Some versions keep the arrays for successful requests only and list the failures' errors apart.
		b.note("bench.vllm.errors", "errors lists %d failures apart from the %d requests kept", len(errs), n)
		errs = nil
	}
	for _, f := range []struct {
		key string
		n   int
	}{{"ttfts", len(ttfts)}, {"input_lens", len(inputs)}, {"output_lens", len(outputs)}, {"errors", len(errs)},
		{"e2els", len(e2els)}, {"start_times", len(starts)}} {
		if f.n != 0 && f.n != n {
			return sim.Refuse("bench.err.count", "%s: %d entries but itls has %d", f.key, f.n, n)
		}
	}
	b.Model, b.Label = model, label
	if rate.OK && rate.V > 0 {
		b.Rate = rate.V
	}
	if conc.OK && conc.V > 0 {
		b.Concurrency = int(conc.V)
	}
	if dur.OK && dur.V > 0 && !math.IsInf(dur.V, 0) {
		b.Duration = dur.V
	}
	b.Requests = make([]Request, n)
	noToken := 0
	for i := range b.Requests {
		r := &b.Requests[i]
		if err := pre.ticker().add(1+len(itls[i]), 1); err != nil {
			return err
		}
		r.Start, r.Gaps = math.NaN(), itls[i]
		if i < len(ttfts) {
			r.TTFT = ttfts[i]
		}
		if i < len(inputs) {
			r.Prompt = inputs[i]
		}
		if i < len(outputs) {
			r.Output = outputs[i]
		}
		if i < len(errs) {
			r.Error = errs[i]
		}
		if r.Error == "" && i < len(ttfts) && r.TTFT == 0 && len(r.Gaps) == 0 && r.Output == 0 {
			// vLLM writes a failed request as ttft 0 and no output; its error may be empty.
			r.Error, noToken = "no token arrived (ttft 0, no output)", noToken+1
		}
		if i < len(starts) {
			r.Start = starts[i]
		}
		if i < len(e2els) {
			r.Latency = e2els[i]
		} else if r.TTFT > 0 {
			// The tools' latency is the last chunk's arrival: TTFT plus every gap.
			r.Latency = r.TTFT
			for _, g := range r.Gaps {
				r.Latency += g
			}
		}
	}
	if err := checkRequests(b.Requests, pre.ticker()); err != nil {
		return err
	}
	rebase(b.Requests)
	if noToken > 0 {
		b.note("bench.vllm.notoken", "%d requests with an empty error, ttft 0 and no output are counted as failed", noToken)
	}
	if len(e2els) == 0 {
		b.note("bench.vllm.e2e", "e2e latency taken as TTFT plus the chunk gaps (the file keeps no latencies)")
	}
	if len(starts) == 0 {
		b.cannot("bench.vllm.starts", "start times: this version writes none, so chunk gaps cannot go on the timeline")
	}
	if k := b.ChunkTokens(); k > 1.05 {
		b.chunkNote(k, sim.Say("bench.vllm.chunks", "the tool's itls"))
	}
	return nil
}

// VLLM is the per-request part of a `vllm bench serve --save-result`
// file (vLLM writes the arrays only with --save-detailed in newer releases).
// Times are in seconds, as vLLM stores them.
type VLLM struct {
	Backend    string      `json:"backend"`
	ModelID    string      `json:"model_id"`
	Duration   float64     `json:"duration"`
	Completed  int         `json:"completed"`
	InputLens  []int       `json:"input_lens"`
	OutputLens []int       `json:"output_lens"`
	TTFTs      []float64   `json:"ttfts"`
	ITLs       [][]float64 `json:"itls"` // per request, every gap between its tokens
	Errors     []string    `json:"errors"`
}

// ReadVLLM reads a vLLM benchmark result and checks that its per-request
// arrays are present and agree in length, naming the bad field.
func ReadVLLM(r io.Reader) (*VLLM, error) {
	data, err := io.ReadAll(io.LimitReader(r, jsonread.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > jsonread.MaxBytes {
		return nil, sim.Refuse("vllm.err.size", "vLLM result larger than %d bytes", jsonread.MaxBytes)
	}
	data = bytes.TrimPrefix(data, jsonread.BOM)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		if err == nil {
			err = sim.Refuse("value.object", "want a JSON object")
		}
		return nil, sim.Refuse("vllm.err.notresult", "not a vLLM bench result: %v", err)
	}
	return vllmBench(raw, nil)
}

// vllmBench is ReadVLLM of the file's object (pre: the arrays read
// already, in slices).
func vllmBench(raw map[string]json.RawMessage, pre *preRead) (*VLLM, error) {
	if _, ok := raw["itls"]; !ok {
		return nil, sim.Refuse("vllm.err.noitls", "itls: missing; vLLM writes per-request arrays with `vllm bench serve --save-result --save-detailed`")
	}
	b := &VLLM{}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"backend", &b.Backend}, {"model_id", &b.ModelID}, {"duration", &b.Duration},
		{"completed", &b.Completed}, {"input_lens", &b.InputLens}, {"output_lens", &b.OutputLens},
		{"ttfts", &b.TTFTs}, {"itls", &b.ITLs}, {"errors", &b.Errors},
	} {
		if err := decodeKeys(raw, pre, "", map[string]any{f.key: f.dst}); err != nil {
			return nil, err
		}
	}
	n := len(b.ITLs)
	for _, f := range []struct {
		key string
		n   int
	}{{"ttfts", len(b.TTFTs)}, {"input_lens", len(b.InputLens)}, {"output_lens", len(b.OutputLens)}, {"errors", len(b.Errors)}} {
		if f.n != 0 && f.n != n {
			return nil, sim.Refuse("bench.err.count", "%s: %d entries but itls has %d", f.key, f.n, n)
		}
	}
	for i, xs := range b.ITLs {
		if err := pre.ticker().add(1+len(xs), 1); err != nil {
			return nil, err
		}
		for j, x := range xs {
			if !(x >= 0 && x <= jsonread.MaxSeconds) {
				return nil, sim.Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", fmt.Sprintf("itls[%d][%d]", i, j), jsonread.MaxSeconds, x)
			}
		}
	}
	for i, x := range b.TTFTs {
		if !(x >= 0 && x <= jsonread.MaxSeconds) {
			return nil, sim.Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", fmt.Sprintf("ttfts[%d]", i), jsonread.MaxSeconds, x)
		}
	}
	if !(b.Duration >= 0 && b.Duration <= jsonread.MaxSeconds) {
		return nil, sim.Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", "duration", jsonread.MaxSeconds, b.Duration)
	}
	return b, nil
}

// AllITLs returns every inter-token gap of the successful requests.
func (b *VLLM) AllITLs() []float64 {
	var out []float64
	for i, xs := range b.ITLs {
		if i < len(b.Errors) && b.Errors[i] != "" {
			continue
		}
		out = append(out, xs...)
	}
	return out
}
