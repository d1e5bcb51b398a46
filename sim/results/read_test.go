package results

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"servelab/sim"
)

// readFixture reads a fixture written by testdata/bench/make_fixtures.py and
// merges the companion file the tool writes beside it, as the CLI does.
func readFixture(t *testing.T, name string) []*Run {
	t.Helper()
	path := filepath.Join("..", "testdata", "bench", name)
	runs := readAlone(t, name)
	for _, r := range runs {
		if c := r.Companion(path); c != "" {
			cd, err := os.ReadFile(c)
			if err != nil {
				t.Fatalf("%s: companion %s: %v", name, c, err)
			}
			cs, err := Read(c, cd)
			if err != nil {
				t.Fatalf("companion %s: %v", c, err)
			}
			r.Merge(cs[0])
		}
	}
	return runs
}

// The figures computed from each file's requests match the file's own
// summary within 1% — every figure the file states, and at least the
// medians each tool is known by.
func TestBenchFiguresMatchTheFilesOwnSummary(t *testing.T) {
	for _, c := range []struct {
		file, tool string
		runs       int
		must       []string
	}{
		{"vllm.json", "vllm", 1, []string{"ttft_p50", "tpot_p50", "itl_p50", "e2e_p50"}},
		{"sglang.jsonl", "sglang", 2, []string{"ttft_p50", "tpot_p50", "itl_p50", "e2e_p50"}},
		{"guidellm.json", "guidellm", 2, []string{"ttft_p50", "itl_token_p50", "e2e_p50"}},
		{"guidellm_v02.json", "guidellm", 1, []string{"ttft_p50", "itl_token_p50", "e2e_p50"}},
		{"aiperf/profile_export.jsonl", "aiperf", 1, []string{"ttft_p50", "tpot_p50", "e2e_p50"}},
		{"aiperf/profile_export_raw.jsonl", "aiperf", 1, []string{"ttft_p50", "tpot_p50", "e2e_p50"}},
		{"genai-perf/profile_export.json", "genai-perf", 1, []string{"ttft_p50", "tpot_p50", "e2e_p50"}},
		{"llmperf/m_550_150_individual_responses.json", "llmperf", 1, []string{"ttft_p50", "e2e_p50"}},
	} {
		runs := readFixture(t, c.file)
		if len(runs) != c.runs {
			t.Errorf("%s: %d runs, want %d", c.file, len(runs), c.runs)
		}
		for _, r := range runs {
			if r.Tool != c.tool || len(r.Requests) < 10 {
				t.Errorf("%s: tool %q, %d requests", c.file, r.Tool, len(r.Requests))
			}
			figs, _ := r.Figures(nil)
			for _, k := range c.must {
				if _, ok := r.Summary[k]; !ok {
					t.Errorf("%s %s: the file's summary lacks %s (has %v)", c.file, r.Label, k, keysOf(r.Summary))
				}
			}
			checked := 0
			for k, want := range r.Summary {
				got, ok := figs[k]
				if !ok {
					continue // a count such as prompt_tokens_mean
				}
				checked++
				if math.Abs(got-want) > 0.01*math.Abs(want) {
					t.Errorf("%s %s: %s computed %.6g s, the file says %.6g s (%.2f%% off)", c.file, r.Label, k, got, want, 100*(got-want)/want)
				}
			}
			if checked < len(c.must) {
				t.Errorf("%s: only %d figures checked", c.file, checked)
			}
		}
	}
}

func keysOf(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// A chunk of several tokens is not one inter-token gap: the per-token figure
// spreads it, and the run says so.
func TestChunkGapsAreNormalisedToTokens(t *testing.T) {
	b := readFixture(t, "vllm.json")[0]
	k := b.ChunkTokens()
	if !(k > 1.2) {
		t.Fatalf("fixture chunks carry %.2f tokens; the test needs several", k)
	}
	f, _ := b.Figures(nil)
	if !(f["itl_token_p50"] < f["itl_p50"]/1.1) {
		t.Errorf("per-token median %g not below the per-chunk median %g", f["itl_token_p50"], f["itl_p50"])
	}
	if !strings.Contains(strings.Join(b.Notes, "\n"), "tokens on average") {
		t.Errorf("notes do not say chunks were normalised: %q", b.Notes)
	}
	// The token-weighted mean of per-token gaps times the tokens is the decode time.
	var decode, tokens float64
	for _, r := range b.Requests {
		if r.Error == "" && r.Output > 1 {
			decode += r.Latency - r.TTFT
			tokens += float64(r.Output - 1)
		}
	}
	if got := f["itl_token_mean"]; math.Abs(got-decode/tokens) > 1e-9 {
		t.Errorf("itl_token_mean %g, decode time per token %g", got, decode/tokens)
	}
	// One gap per one-token chunk stays as it is.
	r := Request{Output: 3, Gaps: []float64{0.01, 0.02}}
	if g := r.appendTokenGaps(nil); g[0].v != 0.01 || g[0].w != 1 {
		t.Errorf("one-token chunks changed: %+v", g)
	}
}

// Where a file keeps start times and chunk gaps they go on the timeline;
// GuideLLM and llmperf keep none, and say so.
func TestTimelineAndWhatAFormatCannotGive(t *testing.T) {
	for _, c := range []struct {
		file     string
		timeline bool
		cannot   string
	}{
		{"vllm.json", true, ""},
		{"aiperf/profile_export.jsonl", true, ""},
		{"aiperf/profile_export_raw.jsonl", true, ""},
		{"genai-perf/profile_export.json", true, "prompt tokens"},
		{"sglang.jsonl", false, "start times"},
		{"guidellm.json", false, "per-token times"},
		{"llmperf/m_550_150_individual_responses.json", false, "per-token times"},
	} {
		b := readFixture(t, c.file)[0]
		tl, _ := b.Timeline(nil)
		if (len(tl) > 0) != c.timeline {
			t.Errorf("%s: %d timeline gaps, want some: %v", c.file, len(tl), c.timeline)
		}
		for i := 1; i < len(tl); i++ {
			if tl[i].TRelInject < tl[i-1].TRelInject || tl[i].Gap < 0 {
				t.Fatalf("%s: timeline out of order at %d", c.file, i)
			}
		}
		if len(tl) > 0 && (tl[0].TRelInject <= 0 || tl[len(tl)-1].TRelInject > 60) {
			t.Errorf("%s: timeline from %g to %g s, want within the run", c.file, tl[0].TRelInject, tl[len(tl)-1].TRelInject)
		}
		if c.cannot != "" && !strings.Contains(strings.Join(b.Cannot, "\n"), c.cannot) {
			t.Errorf("%s: cannot-give list %q lacks %q", c.file, b.Cannot, c.cannot)
		}
	}
}

// The load each file states reaches the run: rate, concurrency, lengths.
func TestBenchLoad(t *testing.T) {
	sg := readFixture(t, "sglang.jsonl")
	if sg[0].Rate != 4 || !math.IsInf(sg[1].Rate, 1) {
		t.Errorf("SGLang rates %g, %g; want 4 and +Inf (Python's Infinity)", sg[0].Rate, sg[1].Rate)
	}
	gl := readFixture(t, "guidellm.json")
	if gl[0].Concurrency != 8 || gl[1].Rate != 3 || gl[0].Label != "guidellm#1" {
		t.Errorf("GuideLLM: concurrency %d, rate %g, label %q", gl[0].Concurrency, gl[1].Rate, gl[0].Label)
	}
	if ai := readFixture(t, "aiperf/profile_export.jsonl")[0]; ai.Concurrency != 8 {
		t.Errorf("AIPerf concurrency %d from profile_export_aiperf.json, want 8", ai.Concurrency)
	}
	if gp := readFixture(t, "genai-perf/profile_export.json")[0]; gp.Concurrency != 4 {
		t.Errorf("GenAI-Perf concurrency %d, want 4", gp.Concurrency)
	}
	nested, err := Read("profile_export_genai_perf.json", []byte(`{"time_to_first_token": {"unit": "ms", "avg": 5, "p50": 4},
	  "request_throughput": {"unit": "requests/sec", "avg": 2.5},
	  "input_config": {"perf_analyzer": {"stimulus": {"concurrency": 32}}}}`))
	if err != nil || nested[0].Concurrency != 32 || nested[0].Summary["ttft_p50"] != 0.004 || nested[0].AchievedRate() != 2.5 {
		t.Errorf("newer GenAI-Perf summary: %+v, %v", nested, err)
	}
	// llmperf writes some aggregates as strings ("131"); a summary alone gives a workload of its size.
	ls, err := Read("x_summary.json", []byte(`{"results_ttft_s_quantiles_p50": 0.24, "results_number_input_tokens_min": "131",
	  "results_number_input_tokens_mean": 259.78, "results_number_output_tokens_mean": 99.44, "num_concurrent_requests": 5,
	  "results_num_completed_requests": 50, "results_num_completed_requests_per_min": 202.37}`))
	if err != nil || ls[0].Concurrency != 5 || ls[0].Summary["ttft_p50"] != 0.24 {
		t.Fatalf("llmperf summary: %v %+v", err, ls)
	}
	if w, err := ls[0].Workload(512, 64, 1); err != nil || w.Kind != "closed" || len(w.Requests) != 50 || w.Requests[0].Prompt != 260 {
		t.Errorf("llmperf summary workload: %v, %s, %d requests, %+v", err, w.Kind, len(w.Requests), w.Requests[0])
	}
	lp := readFixture(t, "llmperf/m_550_150_individual_responses.json")[0]
	if lp.Concurrency != 4 || lp.Duration <= 0 {
		t.Errorf("llmperf concurrency %d, duration %g from its summary", lp.Concurrency, lp.Duration)
	}
	v := readFixture(t, "vllm.json")[0]
	p, o := v.MeanLengths()
	if v.Rate != 6 || !v.HasStarts() || p < 100 || o < 6 || v.Requests[0].Start != 0 {
		t.Errorf("vLLM: rate %g, starts %v, lengths %g/%g, first start %g", v.Rate, v.HasStarts(), p, o, v.Requests[0].Start)
	}
	if r := v.AchievedRate(); !(r > 3 && r < 12) {
		t.Errorf("vLLM achieved rate %g for a 6 req/s run", r)
	}
}

// Bad input gets an error naming what is wrong.
func TestBenchErrorsSayWhy(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"benchmarks": []}`, "benchmarks: empty"},
		{`{"itls": [[0.1]], "ttfts": [0.1, 0.2]}`, "ttfts: 2 entries"},
		{`{"itls": [[0.1, -1]], "ttfts": [0.1]}`, "gap 1"},
		{`{"summary": {}, "gaps": []}`, "lab measured-JSON"},
		{`{"median_ttft_ms": 0, "completed": 0, "failed": 3}`, "every request failed (0 completed, 3 failed)"},
		{`{"hello": 1}`, "keys: hello"},
		{`[{"x": 1}]`, "ttft_s"},
		{`{"metadata": {}, "metrics": {"time_to_first_token": {"value": "x", "unit": "ms"}}}`, "time_to_first_token"},
		{`{"metadata": {}, "responses": []}`, "start_perf_ns"},
		{`{"experiments": [{"requests": [{"response_timestamps": [1]}]}]}`, "timestamp: missing"},
		{`{"benchmarks": [{"requests": {"successful": [{"time_to_first_token_ms": -5}]}}]}`, "ttft"},
		{"not json", "not JSON"},
	} {
		_, err := Read("x.json", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.doc, err, c.want)
		}
	}
}

// Some SGLang versions nest the per-request arrays under "details".
func TestSGLangNestedDetails(t *testing.T) {
	runs, err := Read("s.jsonl", []byte(`{"median_ttft_ms": 100, "request_rate": Infinity, "details": {"input_lens": [10, 20], "output_lens": [3, 2], "ttfts": [0.1, 0.1], "itls": [[0.01, 0.02], [0.03]], "errors": ["", ""]}}`+"\n"))
	if err != nil || len(runs) != 1 || runs[0].Tool != "sglang" || len(runs[0].Requests) != 2 || runs[0].Summary["ttft_p50"] != 0.1 {
		t.Fatalf("%v %+v", err, runs)
	}
}

func TestPythonLiterals(t *testing.T) {
	out, _, _ := pyJSON([]byte(`{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN and Infinity"}`), nil)
	got := string(out)
	if got != `{"a": null, "b": ["Infinity", "-Infinity"], "c": "NaN and Infinity"}` {
		t.Errorf("got %s", got)
	}
	if !IsBench([]byte("\xef\xbb\xbf" + `{"itls": [[0.1]], "request_rate": Infinity}`)) {
		t.Error("a vLLM file with a BOM and Infinity is not recognised")
	}
}

func TestQuantileMethods(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	if q := linearQuantile(xs, 50); q != 2.5 {
		t.Errorf("linear median %g, numpy gives 2.5", q)
	}
	if q := cdfQuantile(xs, nil, 50); q != 2 {
		t.Errorf("cdf median %g, GuideLLM gives 2", q)
	}
	if q := cdfQuantile([]float64{1, 2}, []float64{1, 3}, 50); q != 2 {
		t.Errorf("weighted cdf median %g, want 2", q)
	}
}

// FuzzReadBench: no input panics, and an accepted file's figures are finite.
func FuzzReadBench(f *testing.F) {
	for _, name := range []string{"vllm.json", "guidellm_v02.json", "llmperf/m_550_150_summary.json"} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "bench", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"metadata": {"request_start_ns": 1}, "metrics": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, err := Read("f.json", data)
		if err != nil {
			return
		}
		for _, r := range runs {
			figs, _ := r.Figures(nil)
			for k, v := range figs {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s = %g", k, v)
				}
			}
			_, _ = r.Timeline(nil)
		}
	})
}

// A run repeats in the simulator with the file's lengths and load: the
// closed loop never has more in flight than the file's concurrency, a replay
// keeps the file's arrivals.
func TestBenchWorkloadSimulates(t *testing.T) {
	step, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Step: step, Policy: mustPolicy(t, "chunked", 2048)}
	ai := readFixture(t, "aiperf/profile_export.jsonl")[0]
	w, err := ai.Workload(512, 64, 1)
	if err != nil || w.Kind != "closed" || w.Concurrency != 8 || len(w.Requests) != len(ai.Requests)-1 {
		t.Fatalf("AIPerf workload %s/%d, %d requests, %v", w.Kind, w.Concurrency, len(w.Requests), err)
	}
	out, err := Simulate(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if c := sim.Count(out.Results); c.Completed != len(w.Requests) {
		t.Errorf("closed loop completed %s", c)
	}
	for _, it := range out.Iterations {
		if n := len(it.Items); n > 8 {
			t.Fatalf("iteration %d carried %d requests, more than the concurrency 8", it.Index, n)
		}
	}
	for i, r := range out.Results {
		if r.Prompt != w.Requests[i].Prompt {
			t.Fatalf("request %d: prompt %d, file says %d", i, r.Prompt, w.Requests[i].Prompt)
		}
	}
	v := readFixture(t, "vllm.json")[0]
	v.Concurrency = 0
	w, err = v.Workload(512, 64, 1)
	if err != nil || w.Kind != "replay" || w.Requests[0].Arrival != 0 || w.Requests[3].Arrival <= 0 {
		t.Fatalf("vLLM workload %s, %v", w.Kind, err)
	}
	sg := readFixture(t, "sglang.jsonl")
	if w, _ := sg[0].Workload(512, 64, 1); w.Kind != "poisson" {
		t.Errorf("SGLang at 4 req/s: %s", w.Kind)
	}
	if w, _ := sg[1].Workload(512, 64, 1); w.Kind != "burst" || w.Requests[5].Arrival != 0 {
		t.Errorf("SGLang at Infinity: %s", w.Kind)
	}
	gp := readFixture(t, "genai-perf/profile_export.json")[0]
	if w, _ := gp.Workload(300, 64, 1); w.Requests[0].Prompt != 300 || !strings.Contains(strings.Join(w.Notes, " "), "no prompt length") {
		t.Errorf("GenAI-Perf's unknown prompt lengths: %+v %q", w.Requests[0], w.Notes)
	}
}

func mustPolicy(t *testing.T, name string, budget int) sim.Policy {
	t.Helper()
	p, err := sim.NewPolicy(name, budget)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stepModel is the lecture's step model, the simulator's default.
func stepModel(t testing.TB) sim.StepModel {
	t.Helper()
	s, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
