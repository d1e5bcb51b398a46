package results

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Mooncake trace is read as a trace: arrivals (milliseconds) and lengths,
// no latencies, and each request's hash_ids kept as its prefix blocks,
// index for index through sim --like's workload; ReadTraceBlocks (the
// --trace reader) gives the same requests and blocks.
func TestMooncakeTraceKeepsItsBlocks(t *testing.T) {
	path := filepath.Join("testdata", "real", "mooncake", "conversation_trace.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Read(path, data)
	if err != nil {
		t.Fatal(err)
	}
	b := runs[0]
	if !b.Trace || b.BlockTokens != MooncakeBlockTokens || len(b.Requests) != 200 {
		t.Fatalf("trace %v, block tokens %d, %d requests", b.Trace, b.BlockTokens, len(b.Requests))
	}
	// The file's last line is at 72000 ms.
	if math.Abs(b.Duration-72) > 1e-9 {
		t.Errorf("span %g s, the file's last timestamp is 72000 ms", b.Duration)
	}
	for i, r := range b.Requests {
		if want := (r.Prompt + MooncakeBlockTokens - 1) / MooncakeBlockTokens; len(r.Blocks) != want {
			t.Fatalf("request %d: %d tokens in %d blocks, want %d of 512", i, r.Prompt, len(r.Blocks), want)
		}
	}
	// Every conversation starts with block 0 (a shared system prompt), so
	// an unbounded prefix cache hits at least one block a request after the first.
	if share := b.BlockShare(); share < 199.0/float64(totalBlocks(b)) || share >= 1 {
		t.Errorf("block share %g", share)
	}
	w, err := b.Workload(512, 128, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.Kind != "replay" || len(w.Blocks) != len(w.Requests) {
		t.Fatalf("workload %s with %d block lists for %d requests", w.Kind, len(w.Blocks), len(w.Requests))
	}
	reqs, blocks, err := ReadTraceBlocks(path, data, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		if reqs[i].Arrival != w.Requests[i].Arrival || reqs[i].Prompt != w.Requests[i].Prompt || !slices.Equal(blocks[i], w.Blocks[i]) {
			t.Fatalf("request %d: --trace reads %+v %v, --like %+v %v", i, reqs[i], blocks[i], w.Requests[i], w.Blocks[i])
		}
	}
	figs, _ := b.Figures(nil)
	if len(figs) != 0 {
		t.Errorf("a trace gave figures %v", figs)
	}
}

func totalBlocks(b *Run) int {
	n := 0
	for _, r := range b.Requests {
		n += len(r.Blocks)
	}
	return n
}

// Hash ids follow their requests when ReadTrace sorts by arrival, and a
// record without them has none.
func TestTraceBlocksFollowTheSort(t *testing.T) {
	data := `{"timestamp": 2000, "input_length": 600, "output_length": 3, "hash_ids": [7, 8]}
{"timestamp": 1000, "input_length": 100, "output_length": 2}
{"timestamp": 1000, "input_length": 512, "output_length": 2, "hash_ids": [7]}
`
	reqs, blocks, err := ReadTraceBlocks("t.jsonl", []byte(data), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []BlockHashes{nil, {7}, {7, 8}}
	for i := range want {
		if !slices.Equal(blocks[i], want[i]) {
			t.Fatalf("blocks %v, want %v (requests %+v)", blocks, want, reqs)
		}
	}
	if reqs[0].Prompt != 100 || reqs[2].Arrival != 2 {
		t.Errorf("requests %+v", reqs)
	}
	for _, bad := range []string{`[1, "x"]`, `[-3]`, `"abc"`} {
		_, _, err := ReadTraceBlocks("t.jsonl", []byte(`{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": `+bad+"}\n"), 0, nil)
		if err == nil || !strings.Contains(err.Error(), "hash_ids") {
			t.Errorf("hash_ids %s: error %v", bad, err)
		}
	}
}

// vLLM's 2026 result (`vllm bench serve --save-detailed` with
// --probe-request-rate on a speculative-decoding server), in the layout
// vLLM's serve.py writes: start_times per request, probe_* and
// spec_decode_* keys. A failed request whose error is empty is failed, not
// a 0 ms TTFT.
func TestVLLM2026Fields(t *testing.T) {
	data := `{"date": "20260301-120000", "backend": "openai", "model_id": "m", "request_rate": 4.0, "max_concurrency": null,
"duration": 3.0, "completed": 2, "failed": 1, "input_lens": [100, 120, 90], "output_lens": [4, 0, 3],
"ttfts": [0.05, 0.0, 0.07], "itls": [[0.02, 0.02, 0.03], [], [0.02, 0.04]], "start_times": [1000.5, 1000.75, 1001.25],
"generated_texts": ["a", "", "b"], "errors": ["", "", ""],
"probe_completed": 5, "probe_failed": 1, "probe_median_e2el_ms": 40.5, "probe_p99_e2el_ms": 80.0, "probe_max_e2el_ms": 81.0,
"spec_decode_acceptance_rate": 62.5, "spec_decode_acceptance_length": 2.25, "spec_decode_num_drafts": 40,
"spec_decode_draft_tokens": 80, "spec_decode_accepted_tokens": 50, "spec_decode_per_position_acceptance_rates": [0.8, 0.45],
"median_ttft_ms": 60.0, "mean_ttft_ms": 60.0}`
	runs, err := Read("vllm-2026.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	b := runs[0]
	if b.Failed() != 1 || b.Requests[1].Error == "" {
		t.Errorf("%d failed (request 1: %q), want the empty-error ttft-0 request failed", b.Failed(), b.Requests[1].Error)
	}
	if !b.HasStarts() || b.Requests[2].Start != 0.75 {
		t.Errorf("starts %v", []float64{b.Requests[0].Start, b.Requests[1].Start, b.Requests[2].Start})
	}
	figs, _ := b.Figures(nil)
	if math.Abs(figs["ttft_p50"]-b.Summary["ttft_p50"]) > 1e-12 {
		t.Errorf("TTFT p50 %g, the file states %g", figs["ttft_p50"], b.Summary["ttft_p50"])
	}
	p := b.Probe
	if p == nil || p.Completed != 5 || p.Failed != 1 || p.E2EP50 != 0.0405 || p.E2EP99 != 0.08 || p.E2EMax != 0.081 {
		t.Errorf("probe %+v", p)
	}
	s := b.Speculation
	if s == nil || s.AcceptRate != 0.625 || s.AcceptLength != 2.25 || s.Drafts != 40 || s.DraftTokens != 80 || s.Accepted != 50 {
		t.Errorf("speculation %+v", s)
	}
	w, err := b.Workload(512, 128, 1)
	if err != nil || w.Kind != "replay" || len(w.Requests) != 2 || w.Requests[1].Arrival != 0.75 {
		t.Errorf("workload %+v, %v", w, err)
	}
}

// inference-perf records without times are refused or failed, never read as 0 ms.
func TestInferencePerfRecords(t *testing.T) {
	data := `[{"start_time": 5.0, "end_time": 6.0, "info": {"input_tokens": 10, "output_tokens": 3, "output_token_times": [5.2, 5.3, 5.5]}, "error": null},
{"start_time": 5.5, "end_time": 5.6, "info": {"input_tokens": 10, "response_metrics": null}, "error": null},
{"start_time": 6.0, "end_time": 6.1, "info": {"input_tokens": 10}, "error": {"error_type": "timeout", "error_msg": ""}}]`
	runs, err := Read("per_request_lifecycle_metrics.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	b := runs[0]
	if b.Failed() != 2 || b.Requests[2].Error != "timeout" {
		t.Errorf("%d failed, request 2 %q", b.Failed(), b.Requests[2].Error)
	}
	r := b.Requests[0]
	if math.Abs(r.TTFT-0.2) > 1e-12 || math.Abs(r.Latency-0.5) > 1e-12 || len(r.Gaps) != 2 || r.Prompt != 10 || r.Output != 3 {
		t.Errorf("request 0: %+v", r)
	}
	if _, err := Read("x.json", []byte(`[{"start_time": 1, "end_time": 2, "info": null}]`)); err == nil || !strings.Contains(err.Error(), "required") {
		t.Errorf("a record without info: %v", err)
	}
}

// A file no row places names every format tried, the new ones among them.
func TestUnplaceableNamesTheNewFormats(t *testing.T) {
	for _, data := range []string{`{"a": 1}` + "\n" + `{"a": 2}`, `[{"b": 1}]`, `{"c": 1}`, "x,y\n1,2\n"} {
		_, err := Read("f", []byte(data))
		if err == nil {
			t.Fatalf("%q read", data)
		}
		for _, name := range []string{"mooncake", "inference-perf", "vllm", "guidellm"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("%q: %v does not name %s", data, err, name)
			}
		}
	}
}
