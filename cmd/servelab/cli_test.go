package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/lecture"
	"servelab/sim/scenario"
)

// cli runs servelab in-process and returns its exit code and outputs.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestStepJSONMatchesDesign(t *testing.T) {
	code, out, errs := cli(t, "step", "--batch", "32", "--context", "700", "--prefill", "512", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if s := got["seconds"].(float64); math.Abs(s-14.90e-3) > 0.02*14.90e-3 || got["bound"] != "compute" || got["flops"].(float64) <= 0 || got["bytes"].(float64) <= 0 {
		t.Fatalf("step: %v", got)
	}
}

func TestSimJSONKeys(t *testing.T) {
	code, out, errs := cli(t, "sim", "--policy", "chunked", "--budget", "512", "--rate", "20", "--requests", "300", "--prompt", "512", "--output", "64", "--seed", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	json.Unmarshal([]byte(out), &got)
	for _, k := range []string{"ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p90", "tpot_p99", "e2e_p90", "completed", "throughput_tok_s"} {
		v, ok := got[k].(float64)
		if !ok || v <= 0 {
			t.Errorf("%s = %v", k, got[k])
		}
	}
	if got["completed"].(float64) != 300 {
		t.Errorf("completed %v of 300", got["completed"])
	}
}

func TestGoodputJSON(t *testing.T) {
	code, out, errs := cli(t, "goodput", "--policy", "prefill-first", "--requests", "400", "--ttft-slo", "0.1", "--tpot-slo", "0.015", "--attainment", "0.9", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct{ Rate float64 }
	json.Unmarshal([]byte(out), &got)
	if got.Rate < 5 || got.Rate > 100 {
		t.Fatalf("goodput %v req/s", got.Rate)
	}
}

func TestLabSimJSONHasTheScriptsKeys(t *testing.T) {
	dir := t.TempDir()
	save := filepath.Join(dir, "sim.json")
	code, out, errs := cli(t, "sim", "--workload", "lab", "--short-concurrency", "16", "--short-input-len", "128", "--short-output-len", "256",
		"--long-input-len", "32000", "--long-count", "1", "--duration", "30", "--inject-after", "10", "--policy", "prefill-first", "--save", save, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	json.Unmarshal([]byte(out), &got)
	for _, k := range []string{"label", "base_url", "short_concurrency", "long_input_len", "tokens_observed", "itl_p50", "itl_p90", "itl_p99", "itl_max",
		"itl_quiet_p50", "itl_quiet_p99", "itl_during_p50", "itl_during_p99", "itl_during_max", "itl_after_p99", "worst_gap", "worst_gap_offset",
		"spike_ratio", "long_ttft", "long_failed", "long_error", "short_completed", "short_failed", "wall", "output_tok_s"} {
		if _, ok := got[k]; !ok {
			t.Errorf("missing key %s", k)
		}
	}
	if got["worst_gap"].(float64) < 1 {
		t.Errorf("prefill-first worst gap %v s: the 32k prefill should stall over a second", got["worst_gap"])
	}
	// The saved file configures the same experiment again.
	code, out2, errs := cli(t, "sim", "--like", save, "--policy", "prefill-first", "--json")
	if code != 0 {
		t.Fatalf("--like: exit %d: %s", code, errs)
	}
	var again map[string]any
	json.Unmarshal([]byte(out2), &again)
	if again["worst_gap"] != got["worst_gap"] || again["tokens_observed"] != got["tokens_observed"] {
		t.Errorf("--like did not repeat the run: %v vs %v", again["worst_gap"], got["worst_gap"])
	}
	f, _ := os.Open(save)
	defer f.Close()
	if _, err := lab.Read(f); err != nil {
		t.Errorf("saved file does not read back: %v", err)
	}
}

func TestBadInputGivesClearErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--model", "gpt-9"}, "Llama-3.1-8B"},
		{[]string{"step", "--gpu", "TPU"}, "H100-SXM"},
		{[]string{"sim", "--rate", "NaN"}, "rate"},
		{[]string{"sim", "--rate", "-3"}, "rate"},
		{[]string{"sim", "--requests", "0"}, "requests"},
		{[]string{"sim", "--eff-compute", "0"}, "--eff-compute"},
		{[]string{"sim", "--eff-mem", "NaN"}, "--eff-mem"},
		{[]string{"sim", "--policy", "magic"}, "chunked"},
		{[]string{"sim", "--model", "Llama-3.1-70B"}, "--tp"},
		{[]string{"sim", "--on-full", "explode"}, "preempt"},
		{[]string{"step", "--batch", "-1"}, "--batch"},
		{[]string{"goodput", "--ttft-slo", "-1"}, "slo"},
		{[]string{"sim", "--workload", "lab", "--inject-after", "100", "--duration", "60"}, "inject-after"},
		{[]string{"sim", "--like", "/nonexistent.json"}, "--like"},
		{[]string{"sim", "--prompt-dist", "uniform:9"}, "--prompt-dist"},
		// In-range looking, nonsense in effect: refused, naming the flag (not taken as the default, nor run to 0.00 ms or 1e298 s).
		{[]string{"sim", "--rate", "1e-14"}, "--rate 1e-14"},
		{[]string{"goodput", "--policy", "disaggregated", "--link-gbs", "1e-300"}, "--link-gbs"},
		{[]string{"sim", "--policy", "disaggregated", "--link-gbs", "1e-300"}, "--link-gbs"},
		{[]string{"sim", "--gpu-memory-utilization", "0"}, "--gpu-memory-utilization"},
		{[]string{"sim", "--block-size", "0"}, "--block-size"},
		{[]string{"sim", "--policy", "chunked", "--budget", "0"}, "--budget"},
		{[]string{"step", "--model", "Llama-3.1-70B"}, "try --tp 4"},
		{[]string{"demo", "nothing"}, "interference"},
		{[]string{"nosuchcommand"}, "unknown command"},
	}
	for _, c := range cases {
		code, _, errs := cli(t, c.args...)
		if code == 0 || !strings.Contains(strings.ToLower(errs), strings.ToLower(c.want)) {
			t.Errorf("%v: exit %d, stderr %q; want non-zero and mention of %q", c.args, code, errs, c.want)
		}
	}
}

func TestAbsurdValuesEndQuickly(t *testing.T) {
	// Rate 1e9 is refused; a 1e8-token prompt is refused; huge but legal values give a bounded run.
	if code, _, errs := cli(t, "sim", "--rate", "1e9"); code == 0 || !strings.Contains(errs, "rate") {
		t.Errorf("rate 1e9: %d %s", code, errs)
	}
	if code, _, errs := cli(t, "sim", "--prompt", "100000000"); code == 0 || !strings.Contains(errs, "prompt") {
		t.Errorf("prompt 1e8: %d %s", code, errs)
	}
	code, out, errs := cli(t, "sim", "--rate", "1e7", "--requests", "2000", "--prompt", "200000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"rejected": 2000`) || !strings.Contains(out, "max context") {
		t.Errorf("want every over-long request rejected with a reason: %s", out)
	}
}

// The reproductions of unbounded memory (7 GB in 40 s, 11.5 GB in
// 20 s): refused before they start, naming what to lower.
func TestRunsOverTheMemoryBudgetAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--workload", "lab", "--ideal", "--short-concurrency", "4096", "--short-output-len", "1", "--short-input-len", "1", "--duration", "3600", "--inject-after", "1"}, "lower --duration or --short-concurrency"},
		{[]string{"sim", "--requests", "1000000", "--rate", "1e7", "--output", "130000", "--prompt", "16", "--max-seqs", "1000000"}, "--requests 1000000 x --output 130000"},
		{[]string{"goodput", "--requests", "1000000", "--output", "130000"}, "--requests 1000000 x --output 130000"},
		{[]string{"sim", "--policy", "disaggregated", "--requests", "1000000", "--output", "130000"}, "GB a run may use"},
	} {
		code, _, errs := cli(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a refusal mentioning %q", c.args, code, errs, c.want)
		}
	}
	// Through --like, the file's config is what to lower.
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	cfg := lab.DefaultConfig()
	cfg.ShortConcurrency, cfg.ShortInputLen, cfg.ShortOutputLen, cfg.Duration, cfg.InjectAfter = 4096, 1, 1, 3600, 1
	var buf bytes.Buffer
	if err := lab.Write(&buf, &lab.Measured{Config: cfg, Summary: lab.Summary{Label: "x", Error: "none"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, "sim", "--like", big, "--ideal"); code == 0 || !strings.Contains(errs, "config.duration or config.short_concurrency in "+big) {
		t.Errorf("--like a 4096-stream hour: exit %d, stderr %q", code, errs)
	}
	// calibrate holds a measured file's config to the same budget (the
	// issue's 21 KB file: 1024 streams x 100,000 tokens x 3600 s was an OOM).
	huge := filepath.Join(dir, "huge.json")
	cfg = lab.DefaultConfig()
	cfg.ShortConcurrency, cfg.ShortOutputLen, cfg.Duration = 1024, 100000, 3600
	m := &lab.Measured{Config: cfg, Summary: lab.Summary{Label: "huge", ShortConcurrency: 1024, ITLQuietP50: 0.01, WorstGap: 0.5, LongTTFT: 0.4}}
	for i := range 200 {
		m.Gaps = append(m.Gaps, lab.Gap{TRelInject: -2 + float64(i)/100, Gap: 0.01})
	}
	buf.Reset()
	if err := lab.Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(huge, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"calibrate", huge}, {"sim", "--like", huge}} {
		if code, _, errs := cli(t, args...); code == 0 || !strings.Contains(errs, "GB a run may use: lower config.duration or config.short_concurrency in "+huge) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

func TestEverySubcommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		name := c.name
		args := []string{name, "--help"}
		if name == "demo" {
			args = []string{"demo", "interference", "--help"}
		}
		code, _, errs := cli(t, args...)
		if code != 0 || !strings.Contains(errs, "Usage: servelab "+name) {
			t.Errorf("%s --help: exit %d, %q", name, code, errs)
		}
	}
}

func TestDemoInterferenceJSON(t *testing.T) {
	code, out, errs := cli(t, "demo", "interference", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got lecture.Interference
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Demo1) != 4 || len(got.Demo2) != 7 || len(got.Demo4) != 5 || got.Demo3.Best.PerGPU <= got.Demo3.Colocated {
		t.Fatalf("demo: %+v", got)
	}
	_, text, _ := cli(t, "demo", "interference")
	for _, s := range []string{"Demo 1", "Demo 2", "Demo 3", "Demo 4", "Observations", "7.23x"} {
		if !strings.Contains(text, s) {
			t.Errorf("demo text lacks %q", s)
		}
	}
}

// BenchmarkDemoInterference is the whole `servelab demo interference`: all four demos, goodput searches included.
func BenchmarkDemoInterference(b *testing.B) {
	x := scenario.Default()
	step, _, err := x.StepModel()
	if err != nil {
		b.Fatal(err)
	}
	lec := lecture.Lecture{Step: step, N: 1500, Prompt: 512, Output: 64}
	tuneGC() // as main does
	for b.Loop() {
		if _, err := computeInterference(lec, lecture.Defaults(sim.SLO{TTFT: 0.1, TPOT: 0.015})); err != nil {
			b.Fatal(err)
		}
	}
}

func TestTraceReplay(t *testing.T) {
	code, out, errs := cli(t, "sim", "--trace", "../../sim/testdata/traces/lab_burst.csv", "--policy", "chunked", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got simFigures
	json.Unmarshal([]byte(out), &got)
	if got.Submitted == 0 || got.Completed+got.Rejected != got.Submitted {
		t.Fatalf("trace replay: %+v", got)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("arrival,prompt,output\n0.1,100,10\n0.2,abc,5\n"), 0o644)
	if code, _, errs := cli(t, "sim", "--trace", bad); code == 0 || !strings.Contains(errs, "line 3") {
		t.Errorf("bad trace: exit %d, %q", code, errs)
	}
	// --trace-unit: the same file read as milliseconds spans a thousandth of the time.
	ms := filepath.Join(t.TempDir(), "ms.csv")
	os.WriteFile(ms, []byte("timestamp,prompt,output\n0,100,4\n2000,100,4\n"), 0o644)
	span := func(args ...string) float64 {
		code, out, errs := cli(t, append([]string{"sim", "--trace", ms, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var f simFigures
		json.Unmarshal([]byte(out), &f)
		return f.SimSeconds
	}
	if s, m := span(), span("--trace-unit", "ms"); s < 2000 || m > 2.1 || m < 2 {
		t.Errorf("simulated %g s by default and %g s with --trace-unit ms; want over 2000 and about 2", s, m)
	}
	if code, _, errs := cli(t, "sim", "--trace", ms, "--trace-unit", "minutes"); code == 0 || !strings.Contains(errs, "s, ms or us") {
		t.Errorf("bad unit: exit %d, %q", code, errs)
	}
}

func TestDisaggregatedSim(t *testing.T) {
	code, out, errs := cli(t, "sim", "--policy", "disaggregated", "--prefill-gpus", "2", "--decode-gpus", "1", "--rate", "60", "--requests", "300", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got simFigures
	json.Unmarshal([]byte(out), &got)
	if got.Completed != 300 || !strings.HasPrefix(got.Policy, "disaggregated 2P+1D") || got.TPOTP90 <= 0 {
		t.Fatalf("disaggregated sim: %+v", got)
	}
	if code, _, errs := cli(t, "sim", "--policy", "disaggregated", "--workload", "lab"); code == 0 || !strings.Contains(errs, "one engine") {
		t.Errorf("lab on a cluster: exit %d, %q", code, errs)
	}
}

func TestDisaggregatedGoodput(t *testing.T) {
	code, out, errs := cli(t, "goodput", "--policy", "disaggregated", "--prefill-gpus", "2", "--decode-gpus", "1", "--requests", "300", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		RatePerGPU float64 `json:"rate_per_gpu"`
	}
	json.Unmarshal([]byte(out), &got)
	if got.RatePerGPU <= 0 {
		t.Fatalf("disaggregated goodput: %s", out)
	}
	// A split the workload cannot load (1500 requests over 193 instances): the search ceiling is no goodput, and the text says so as --json does.
	code, out, errs = cli(t, "goodput", "--policy", "disaggregated", "--search-gpus", "300")
	if code != 0 || !strings.Contains(out, "saturated") || !strings.Contains(out, "raise --requests") || strings.Contains(out, "simulated 19101") {
		t.Errorf("--search-gpus 300: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := cli(t, "goodput", "--policy", "disaggregated", "--prefill-gpus", "0"); code == 0 || errs == "" {
		t.Error("zero prefill instances accepted")
	}
}

// TestMooncakeTraceFeedsThePrefixCache: a Mooncake trace's hash_ids are
// the replayed requests' prefix blocks, so with prefix caching the shared
// conversation prefixes are found in the cache (the file repeats about 6%
// of its blocks); without caching nothing is.
func TestMooncakeTraceFeedsThePrefixCache(t *testing.T) {
	trace := filepath.Join("..", "..", "sim", "results", "testdata", "real", "mooncake", "conversation_trace.jsonl")
	hit := func(args ...string) float64 {
		t.Helper()
		code, out, errOut := cli(t, append([]string{"sim", "--trace", trace, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("sim %v: exit %d: %s", args, code, errOut)
		}
		var f struct {
			Prefix *struct {
				HitRatio float64 `json:"hit_ratio"`
			} `json:"prefix_cache"`
		}
		if err := json.Unmarshal([]byte(out), &f); err != nil {
			t.Fatal(err)
		}
		if f.Prefix == nil {
			return 0
		}
		return f.Prefix.HitRatio
	}
	if h := hit("--prefix-caching"); !(h > 0.03 && h < 0.2) {
		t.Errorf("hit ratio %.3f with caching; want the trace's shared prefixes found (a few percent)", h)
	}
	if h := hit(); h != 0 {
		t.Errorf("hit ratio %.3f without caching", h)
	}
}
