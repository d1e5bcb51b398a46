package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateCorpus = flag.Bool("update", false, "rewrite testdata/corpus/*.golden from today's outputs")

// corpusCase is one servelab invocation whose outputs are pinned. In args and
// files, {tmp} stands for a folder shared by the whole corpus (cases run in
// order, so a later case may read what an earlier one wrote there); files
// names files written there whose contents join the golden output (see
// fileText).
type corpusCase struct {
	name  string
	args  []string
	files []string
}

// Paths are relative to this package's folder, where go test runs.
const (
	benchDir  = "../../sim/testdata/bench/"
	traceDir  = "../../sim/testdata/traces/"
	hfConfigs = "../../modelspecs/testdata/"
)

// The lab presets' workload (wasm/play/state.go: streams 16, prompt 128,
// output 256, long 32000, longout 16, inject 20, duration 60).
var labPreset = []string{"--workload", "lab", "--short-concurrency", "16", "--short-input-len", "128", "--short-output-len", "256",
	"--long-input-len", "32000", "--long-output-len", "16", "--inject-after", "20", "--duration", "60"}

func cat(parts ...[]string) []string { return slices.Concat(parts...) }

func args(s ...string) []string { return s }

var corpus = []corpusCase{
	// step: one iteration priced.
	{"step-default", args("step"), nil},
	{"step-default-json", args("step", "--json"), nil},
	{"step-prefill512-json", args("step", "--batch", "32", "--context", "700", "--prefill", "512", "--json"), nil},
	{"step-vllm-profile-prefill1024", args("step", "--profile", "vllm", "--batch", "64", "--context", "2000", "--prefill", "1024"), nil},
	{"step-vllm-profile-json", args("step", "--profile", "vllm", "--batch", "16", "--context", "4000", "--json"), nil},
	{"step-llama70b-tp4-prefill2048-json", args("step", "--model", "Llama-3.1-70B", "--tp", "4", "--prefill", "2048", "--json"), nil},
	{"step-llama70b-tp2-h200", args("step", "--model", "Llama-3.1-70B", "--tp", "2", "--gpu", "H200"), nil},
	{"step-mixtral-tp2-vllm-json", args("step", "--model", "Mixtral-8x7B", "--tp", "2", "--profile", "vllm", "--batch", "8", "--json"), nil},
	{"step-qwen7b-a100-typed-constants", args("step", "--model", "Qwen2.5-7B", "--gpu", "A100-80GB", "--eff-compute", "0.5", "--eff-mem", "0.7", "--overhead", "0.002", "--dtype-bytes", "1"), nil},
	{"step-model-config-llama31-8b", args("step", "--model-config", hfConfigs+"llama31_8b.json"), nil},
	{"step-model-config-mixtral-json", args("step", "--model-config", hfConfigs+"mixtral.json", "--tp", "2", "--json"), nil},
	// The FP8 checkpoint of issue 27: the CLI prices 1 byte per weight.
	{"step-model-config-fp8-json", args("step", "--model-config", "testdata/corpus-inputs/llama31_8b_fp8.json", "--batch", "32", "--context", "700", "--json"), nil},
	{"step-model-config-fp8-vllm", args("step", "--model-config", "testdata/corpus-inputs/llama31_8b_fp8.json", "--profile", "vllm", "--prefill", "512"), nil},

	// sim, Poisson arrivals: every policy.
	{"sim-default", args("sim"), nil},
	{"sim-default-json", args("sim", "--json"), nil},
	{"sim-prefill-first-rate30-seed3-json", args("sim", "--policy", "prefill-first", "--rate", "30", "--seed", "3", "--json"), nil},
	{"sim-prefill-first-budget4096", args("sim", "--policy", "prefill-first", "--budget", "4096", "--prompt", "2048", "--rate", "8", "--requests", "500"), nil},
	{"sim-chunked-budget512-json", args("sim", "--policy", "chunked", "--budget", "512", "--rate", "20", "--requests", "800", "--json"), nil},
	{"sim-chunked-default-budget", args("sim", "--policy", "chunked", "--rate", "25", "--requests", "800"), nil},
	{"sim-chunked-budget512-excludes-decodes", args("sim", "--policy", "chunked", "--budget", "512", "--budget-excludes-decodes", "--rate", "20", "--requests", "800"), nil},
	{"sim-prefill-only-json", args("sim", "--policy", "prefill-only", "--rate", "20", "--requests", "800", "--json"), nil},
	{"sim-decode-only-json", args("sim", "--policy", "decode-only", "--rate", "100", "--requests", "800", "--json"), nil},
	{"sim-disaggregated-2p1d", args("sim", "--policy", "disaggregated", "--rate", "30", "--requests", "800"), nil},
	{"sim-disaggregated-3p2d-round-robin-link50-json", args("sim", "--policy", "disaggregated", "--prefill-gpus", "3", "--decode-gpus", "2", "--router", "round-robin", "--link-gbs", "50", "--rate", "60", "--requests", "800", "--json"), nil},

	// sim: workloads.
	{"sim-uniform-lengths-json", args("sim", "--prompt-dist", "uniform:128,2048", "--output-dist", "uniform:16,256", "--rate", "8", "--requests", "600", "--seed", "7", "--json"), nil},
	{"sim-lognormal-lengths-chunked", args("sim", "--policy", "chunked", "--prompt-dist", "lognormal:6.5,1,32,8192", "--output-dist", "lognormal:4,0.8,1,1024", "--rate", "6", "--requests", "600", "--seed", "11"), nil},
	{"sim-trace-lab-burst-chunked-json", args("sim", "--trace", traceDir+"lab_burst.csv", "--policy", "chunked", "--json"), nil},
	{"sim-trace-lab-burst-prefill-first", args("sim", "--trace", traceDir+"lab_burst.csv"), nil},
	{"sim-trace-mooncake-json", args("sim", "--trace", traceDir+"mooncake.jsonl", "--json"), nil},
	{"sim-trace-azure-disaggregated", args("sim", "--trace", traceDir+"azure_style.csv", "--policy", "disaggregated"), nil},
	{"sim-trace-mixed-order-unit-ms", args("sim", "--trace", traceDir+"mixed_order.jsonl", "--trace-unit", "ms"), nil},

	// sim: profiles, models, tensor parallelism.
	{"sim-vllm-profile-rate20-json", args("sim", "--profile", "vllm", "--rate", "20", "--requests", "800", "--json"), nil},
	{"sim-lecture-profile-h200", args("sim", "--profile", "lecture", "--gpu", "H200", "--rate", "30", "--requests", "800"), nil},
	{"sim-llama70b-tp4-json", args("sim", "--model", "Llama-3.1-70B", "--tp", "4", "--rate", "5", "--requests", "500", "--json"), nil},
	{"sim-llama70b-tp2-h200-vllm-chunked", args("sim", "--model", "Llama-3.1-70B", "--tp", "2", "--gpu", "H200", "--profile", "vllm", "--policy", "chunked", "--rate", "4", "--requests", "400"), nil},
	{"sim-mixtral-tp2-json", args("sim", "--model", "Mixtral-8x7B", "--tp", "2", "--rate", "10", "--requests", "500", "--json"), nil},
	{"sim-model-config-fp8-json", args("sim", "--model-config", "testdata/corpus-inputs/llama31_8b_fp8.json", "--rate", "20", "--requests", "800", "--json"), nil},

	// sim: engine limits.
	{"sim-ideal-rate40-json", args("sim", "--ideal", "--rate", "40", "--requests", "800", "--json"), nil},
	{"sim-max-seqs8-json", args("sim", "--max-seqs", "8", "--rate", "30", "--requests", "600", "--json"), nil},
	{"sim-kv-tight-preempt-json", args("sim", "--gpu-memory-utilization", "0.3", "--prompt", "4096", "--output", "512", "--rate", "3", "--requests", "300", "--json"), nil},
	{"sim-kv-tight-on-full-wait-json", args("sim", "--gpu-memory-utilization", "0.3", "--prompt", "4096", "--output", "512", "--rate", "3", "--requests", "300", "--on-full", "wait", "--json"), nil},
	{"sim-kv-tight-preempt", args("sim", "--gpu-memory-utilization", "0.3", "--prompt", "4096", "--output", "512", "--rate", "3", "--requests", "300"), nil},
	{"sim-block-size32-utilization0.5", args("sim", "--block-size", "32", "--gpu-memory-utilization", "0.5", "--rate", "30", "--requests", "600"), nil},
	{"sim-llama70b-tp2-long-prompts-rejected", args("sim", "--model", "Llama-3.1-70B", "--tp", "2", "--gpu-memory-utilization", "0.95", "--prompt-dist", "uniform:1000,60000", "--output", "16", "--rate", "1", "--requests", "40"), nil},

	// sim, the lab's closed loop; a saved run feeds compare, --like and calibrate.
	{"sim-lab-default", args("sim", "--workload", "lab"), nil},
	{"sim-lab-chunked-budget1024-json", args("sim", "--workload", "lab", "--policy", "chunked", "--budget", "1024", "--json"), nil},
	{"sim-lab-short-save", args("sim", "--workload", "lab", "--short-concurrency", "8", "--long-input-len", "16000", "--duration", "20", "--inject-after", "8", "--label", "saved", "--save", "{tmp}/lab.json"), []string{"{tmp}/lab.json"}},
	{"sim-like-saved-lab-chunked", args("sim", "--like", "{tmp}/lab.json", "--policy", "chunked"), nil},
	{"sim-like-saved-lab-vllm-json", args("sim", "--like", "{tmp}/lab.json", "--profile", "vllm", "--json"), nil},

	// sim --like a benchmark tool's file.
	{"sim-like-vllm-bench", args("sim", "--like", benchDir+"vllm.json"), nil},
	{"sim-like-guidellm-run2-chunked", args("sim", "--like", benchDir+"guidellm.json#2", "--policy", "chunked"), nil},
	{"sim-like-sglang-run1-json", args("sim", "--like", benchDir+"sglang.jsonl#1", "--json"), nil},
	{"sim-like-genai-perf-prompt300-json", args("sim", "--like", benchDir+"genai-perf/profile_export.json", "--prompt", "300", "--json"), nil},

	// goodput.
	{"goodput-default", args("goodput"), nil},
	{"goodput-prefill-first-400-json", args("goodput", "--policy", "prefill-first", "--requests", "400", "--ttft-slo", "0.1", "--tpot-slo", "0.015", "--attainment", "0.9", "--json"), nil},
	{"goodput-chunked-budget512", args("goodput", "--policy", "chunked", "--budget", "512", "--requests", "600"), nil},
	{"goodput-decode-only-tpot-only-json", args("goodput", "--policy", "decode-only", "--ttft-slo", "0", "--requests", "600", "--json"), nil},
	{"goodput-disaggregated-2p1d-json", args("goodput", "--policy", "disaggregated", "--requests", "600", "--json"), nil},
	{"goodput-disaggregated-search-gpus4", args("goodput", "--policy", "disaggregated", "--search-gpus", "4", "--requests", "500"), nil},
	{"goodput-disaggregated-search-gpus6-round-robin-json", args("goodput", "--policy", "disaggregated", "--search-gpus", "6", "--router", "round-robin", "--requests", "500", "--json"), nil},

	// The page's presets (wasm/play/state.go Presets) as CLI flags: the
	// page's engine is ideal and its seed 1 unless a link says otherwise.
	{"preset-demo1-json", args("sim", "--policy", "chunked", "--budget", "8192", "--prompt", "2048", "--output", "64", "--rate", "4", "--requests", "300", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-demo2-json", args("sim", "--policy", "prefill-first", "--prompt", "512", "--output", "64", "--rate", "20", "--requests", "1500", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-demo3-json", args("sim", "--policy", "prefill-first", "--prompt", "512", "--output", "64", "--rate", "10", "--requests", "1500", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-demo3-goodput-json", args("goodput", "--policy", "prefill-first", "--prompt", "512", "--output", "64", "--requests", "1500", "--ttft-slo", "0.1", "--tpot-slo", "0.015", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-demo4-json", args("sim", "--policy", "chunked", "--budget", "512", "--budget-excludes-decodes", "--prompt", "512", "--output", "64", "--rate", "40", "--requests", "1500", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-lab-unchunked-json", cat(args("sim"), labPreset, args("--policy", "prefill-first", "--seed", "1", "--ideal", "--json")), nil},
	{"preset-lab-chunked-json", cat(args("sim"), labPreset, args("--policy", "chunked", "--budget", "2048", "--seed", "1", "--ideal", "--json")), nil},
	{"preset-lab-unchunked-save", cat(args("sim"), labPreset, args("--policy", "prefill-first", "--seed", "1", "--ideal", "--save", "{tmp}/unchunked.json")), nil},
	{"preset-lab-chunked-save", cat(args("sim"), labPreset, args("--policy", "chunked", "--budget", "2048", "--seed", "1", "--ideal", "--save", "{tmp}/chunked.json")), nil},
	{"preset-distserve-colocated-json", args("sim", "--policy", "prefill-first", "--prompt", "512", "--output", "64", "--rate", "10", "--requests", "1500", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-distserve-2p1d-json", args("sim", "--policy", "disaggregated", "--prefill-gpus", "2", "--decode-gpus", "1", "--prompt", "512", "--output", "64", "--rate", "30", "--requests", "1500", "--seed", "1", "--ideal", "--json"), nil},
	{"preset-distserve-2p1d-goodput-json", args("goodput", "--policy", "disaggregated", "--prefill-gpus", "2", "--decode-gpus", "1", "--prompt", "512", "--output", "64", "--requests", "1500", "--ttft-slo", "0.1", "--tpot-slo", "0.015", "--seed", "1", "--ideal", "--json"), nil},

	// demo interference, models.
	{"demo-interference", args("demo", "interference"), nil},
	{"demo-interference-json", args("demo", "interference", "--json"), nil},
	{"demo-interference-vllm-seed2-requests600", args("demo", "interference", "--profile", "vllm", "--seed", "2", "--requests", "600"), nil},
	{"models", args("models"), nil},
	{"models-json", args("models", "--json"), nil},

	// compare: saved lab runs and benchmark tools' files.
	{"compare-lab-unchunked-chunked", args("compare", "{tmp}/unchunked.json", "{tmp}/chunked.json"), nil},
	{"compare-lab-three", args("compare", "{tmp}/unchunked.json", "{tmp}/chunked.json", "{tmp}/lab.json"), nil},
	{"compare-vllm-bench", args("compare", benchDir+"vllm.json"), nil},
	{"compare-guidellm-aiperf-llmperf", args("compare", benchDir+"guidellm.json", benchDir+"aiperf/profile_export.jsonl", benchDir+"llmperf/m_550_150_summary.json"), nil},
	{"compare-sglang-genai-perf-guidellm-v02", args("compare", benchDir+"sglang.jsonl", benchDir+"genai-perf/profile_export.json", benchDir+"guidellm_v02.json"), nil},

	// calibrate, and a simulation under the calibrated profile.
	{"calibrate-vllm-bench", args("calibrate", benchDir+"vllm.json"), nil},
	{"calibrate-vllm-bench-base-vllm-json", args("calibrate", benchDir+"vllm.json", "--base", "vllm", "--json"), nil},
	{"calibrate-lab-runs-lecture-ideal-json", args("calibrate", "{tmp}/unchunked.json", "{tmp}/chunked.json", "--base", "lecture", "--ideal", "-o", "{tmp}/cal.json", "--json"), []string{"{tmp}/cal.json"}},
	{"sim-calibrated-profile-json", args("sim", "--profile", "{tmp}/cal.json", "--rate", "20", "--requests", "800", "--json"), nil},
	{"step-calibrated-profile", args("step", "--profile", "{tmp}/cal.json"), nil},

	// fidelity (the fast table; --fit takes seconds and is left out).
	{"fidelity", args("fidelity", "--points", "testdata/fidelity/points.json"), nil},
	{"fidelity-json", args("fidelity", "--points", "testdata/fidelity/points.json", "--json"), nil},

	// gguf: the tiny lab model, then its config priced on a CPU core.
	{"gguf-tiny-two-layers", args("gguf", "-o", "{tmp}/tiny.gguf", "--hf-config", "{tmp}/config.json", "--layers", "2", "--seed", "3"), []string{"{tmp}/tiny.gguf", "{tmp}/config.json"}},
	{"step-gguf-config-cpu-core", args("step", "--model-config", "{tmp}/config.json", "--gpu", "CPU-core", "--batch", "1", "--context", "100"), nil},

	// Errors, with their messages.
	{"error-llama70b-ideal-one-gpu", args("sim", "--model", "Llama-3.1-70B", "--ideal"), nil},
	{"error-step-llama70b-one-gpu", args("step", "--model", "Llama-3.1-70B"), nil},
	{"error-budget0-typed", args("sim", "--policy", "chunked", "--budget", "0"), nil},
	{"error-unknown-policy", args("sim", "--policy", "fastest"), nil},
	{"error-unknown-model", args("sim", "--model", "GPT-5"), nil},
	{"error-unknown-gpu", args("step", "--gpu", "TPU-v9"), nil},
	{"error-link-gbs-0.001", args("sim", "--policy", "disaggregated", "--link-gbs", "0.001"), nil},
	{"error-bad-prompt-dist", args("sim", "--prompt-dist", "normal:5"), nil},
	{"error-utilization-1.5", args("sim", "--gpu-memory-utilization", "1.5"), nil},
	{"error-lab-disaggregated", args("sim", "--workload", "lab", "--policy", "disaggregated"), nil},
	{"error-step-empty", args("step", "--batch", "0"), nil},
	{"error-like-missing-file", args("sim", "--like", "testdata/corpus-inputs/missing.json"), nil},
}

// TestCorpusUnchanged guards today's results: it runs each invocation in the
// corpus in-process and requires its exit code, stdout and stderr (and any
// files it writes) to equal testdata/corpus/<name>.golden byte for byte, so a
// refactor of how the front ends turn settings into a simulation cannot change
// a figure, a table or a message unnoticed. After an intended change, rewrite
// the golden files with
//
//	go test ./cmd/servelab -run Corpus -update
//
// and review the diff of testdata/corpus before committing it. Run the whole
// corpus: the compare, --like and calibrate cases read files that earlier
// cases wrote.
func TestCorpusUnchanged(t *testing.T) {
	if len(corpus) < 40 {
		t.Fatalf("the corpus has %d invocations; it should keep at least 40", len(corpus))
	}
	dir := filepath.Join("testdata", "corpus")
	tmp := t.TempDir()
	seen := map[string]bool{}
	for _, c := range corpus {
		if seen[c.name] || c.name == "" || strings.ContainsAny(c.name, `/\ `) {
			t.Fatalf("corpus name %q is empty, repeated or not a plain file name", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			got := runCorpusCase(t, c, tmp)
			path := filepath.Join(dir, c.name+".golden")
			if *updateCorpus {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("servelab %s: output differs from %s\n%s\n(if the change is intended: go test ./cmd/servelab -run Corpus -update)",
					strings.Join(c.args, " "), path, firstDifference(string(want), got))
			}
		})
	}
	// A golden file whose invocation left the table would guard nothing.
	old, err := filepath.Glob(filepath.Join(dir, "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range old {
		name := strings.TrimSuffix(filepath.Base(p), ".golden")
		if seen[name] {
			continue
		}
		if *updateCorpus {
			os.Remove(p)
			continue
		}
		t.Errorf("%s belongs to no invocation in the corpus (remove it, or run with -update)", p)
	}
}

// runCorpusCase runs one invocation and renders its golden text.
func runCorpusCase(t *testing.T, c corpusCase, tmp string) string {
	t.Helper()
	expand := func(s string) string { return strings.ReplaceAll(s, "{tmp}", tmp) }
	norm := func(s string) string { return strings.ReplaceAll(s, tmp, "{tmp}") }
	argv := make([]string, len(c.args))
	for i, a := range c.args {
		argv[i] = expand(a)
	}
	var stdout, stderr bytes.Buffer
	code := run(argv, &stdout, &stderr)

	var b strings.Builder
	b.WriteString("# servelab corpus: go test ./cmd/servelab -run Corpus -update rewrites this file\n")
	quoted := make([]string, len(c.args))
	for i, a := range c.args {
		quoted[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$#") && !strings.HasPrefix(a, "../") {
			quoted[i] = strconv.Quote(a)
		}
	}
	fmt.Fprintf(&b, "$ servelab %s\nexit %d\n", strings.Join(quoted, " "), code)
	section(&b, "stdout", norm(stdout.String()))
	section(&b, "stderr", norm(stderr.String()))
	for _, f := range c.files {
		data, err := os.ReadFile(expand(f))
		if err != nil {
			t.Fatalf("servelab %s wrote no %s: %v", strings.Join(c.args, " "), f, err)
		}
		text := string(data)
		if !strings.HasSuffix(f, ".gguf") {
			text = norm(text) // a binary file is hashed as written
		}
		section(&b, "file "+f, fileText(f, text))
	}
	return b.String()
}

// fileText is a written file as its golden file shows it: whole when small;
// a binary file as its size and SHA-256; a large text file (a saved lab run
// with its thousands of gaps) as its first lines, then its size and SHA-256.
func fileText(name, text string) string {
	sum := fmt.Sprintf("%d bytes in all, sha256 %x\n", len(text), sha256.Sum256([]byte(text)))
	if strings.HasSuffix(name, ".gguf") {
		return sum
	}
	const whole, head = 16 << 10, 4 << 10
	if len(text) <= whole {
		return text
	}
	cut := strings.LastIndex(text[:head], "\n") + 1
	return text[:cut] + "... " + sum
}

// section appends a titled block; text without a final newline is marked so,
// as diff does.
func section(b *strings.Builder, title, text string) {
	fmt.Fprintf(b, "=== %s\n%s", title, text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteString("\n\\ no newline at end\n")
	}
}

// firstDifference shows where two texts part, with a few lines either side.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d:\n", i+1)
	show := func(label string, lines []string) {
		for j := max(0, i-2); j < min(len(lines), i+3); j++ {
			mark := " "
			if j == i {
				mark = ">"
			}
			fmt.Fprintf(&b, "  %s %s %4d | %s\n", label, mark, j+1, lines[j])
		}
		if i >= len(lines) {
			fmt.Fprintf(&b, "  %s > (ends after line %d)\n", label, len(lines))
		}
	}
	show("want", w)
	show("got ", g)
	return b.String()
}
