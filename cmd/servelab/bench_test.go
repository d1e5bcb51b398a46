package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"servelab/sim/results"
)

var benchFixtures = filepath.Join("..", "..", "sim", "testdata", "bench")

// Every tool's file loads in `servelab compare`, and each figure it prints
// beside the file's own (in brackets) is within 1% of it; the medians each
// tool is known by are among them.
func TestCompareReadsEveryToolsFiles(t *testing.T) {
	pair := regexp.MustCompile(`([0-9.]+) \(([0-9.]+)\)`)
	for _, c := range []struct {
		file    string
		medians []string
	}{
		{"vllm.json", []string{"TTFT p50", "TPOT p50", "ITL/chunk p50"}},
		{"sglang.jsonl", []string{"TTFT p50", "TPOT p50", "ITL/chunk p50"}},
		{"guidellm.json", []string{"TTFT p50", "ITL/token p50"}},
		{"guidellm_v02.json", []string{"TTFT p50", "ITL/token p50"}},
		{"aiperf/profile_export.jsonl", []string{"TTFT p50", "TPOT p50"}},
		{"aiperf/profile_export_raw.jsonl", []string{"TTFT p50", "TPOT p50"}},
		{"genai-perf/profile_export.json", []string{"TTFT p50", "TPOT p50"}},
		{"llmperf/m_550_150_individual_responses.json", []string{"TTFT p50", "E2E p50"}},
	} {
		code, out, errs := cli(t, "compare", filepath.Join(benchFixtures, c.file))
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.file, code, errs)
			continue
		}
		for _, m := range c.medians {
			line := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), m+" ") {
					line = l
				}
			}
			if !pair.MatchString(line) {
				t.Errorf("%s: no %s beside the file's own figure in:\n%s", c.file, m, out)
			}
		}
		pairs := pair.FindAllStringSubmatch(out, -1)
		for _, p := range pairs {
			got, _ := strconv.ParseFloat(p[1], 64)
			want, _ := strconv.ParseFloat(p[2], 64)
			if math.Abs(got-want) > 0.01*want+0.005 {
				t.Errorf("%s: computed %s ms, the file says %s ms", c.file, p[1], p[2])
			}
		}
		if len(pairs) < 4 {
			t.Errorf("%s: %d figures beside the file's own", c.file, len(pairs))
		}
	}
	// GuideLLM and llmperf say they keep no per-token times.
	for _, f := range []string{"guidellm.json", "llmperf/m_550_150_individual_responses.json"} {
		if _, out, _ := cli(t, "compare", filepath.Join(benchFixtures, f)); !regexp.MustCompile(`cannot give: itl \(per chunk\).* per-token times`).MatchString(out) {
			t.Errorf("%s: does not say what it cannot give:\n%s", f, out)
		}
	}
}

// `sim --like` takes a benchmark file's lengths and load.
func TestSimLikeBenchmarkFiles(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"aiperf/profile_export.jsonl", "a closed loop of 8 in flight"},
		{"vllm.json", "its start times replayed"},
		{"sglang.jsonl#2", "all sent at once"},
		{"sglang.jsonl", "Poisson arrivals at its rate"},
		{"guidellm.json#2", "its start times replayed"},
		{"llmperf/m_550_150_summary.json", "closed loop of 4"},
	} {
		code, out, errs := cli(t, "sim", "--like", filepath.Join(benchFixtures, c.file), "--policy", "chunked")
		if code != 0 || !strings.Contains(out, c.want) || !strings.Contains(out, "simulated") {
			t.Errorf("%s: exit %d, want %q in\n%s%s", c.file, code, c.want, out, errs)
		}
	}
	code, out, _ := cli(t, "sim", "--like", filepath.Join(benchFixtures, "genai-perf", "profile_export.json"), "--prompt", "300", "--json")
	var j benchLikeJSON
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || j.Workload != "closed" || j.Simulated["ttft_p50"] <= 0 ||
		j.File["ttft_p50"] <= 0 || !strings.Contains(strings.Join(j.Notes, " "), "300 tokens assumed") {
		t.Errorf("exit %d, %+v\n%s", code, j, out)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"benchmarks": [{"requests": {"successful": [{"time_to_first_token_ms": -1}]}}]}`), 0o644)
	if code, _, errs := cli(t, "sim", "--like", bad); code == 0 || !strings.Contains(errs, "bad.json") || !strings.Contains(errs, "ttft") {
		t.Errorf("a bad file: exit %d, %s", code, errs)
	}
	if code, _, errs := cli(t, "sim", "--like", filepath.Join(benchFixtures, "sglang.jsonl#7")); code == 0 || !strings.Contains(errs, "holds 2") {
		t.Errorf("run 7 of 2: exit %d, %s", code, errs)
	}
}

// servelab compare and sim --like on files the tools themselves wrote
// (sim/results/testdata/real): compare shows the tool's own median TTFT
// beside servelab's, equal to within 1%, and the failed requests the file
// records; sim --like runs on each. An unplaceable file names the formats tried.
func TestCompareAndLikeOnRealFiles(t *testing.T) {
	realDir := filepath.Join("..", "..", "sim", "results", "testdata", "real")
	ttft := regexp.MustCompile(`TTFT p50 +([0-9.]+) \(([0-9.]+)\)`)
	for _, c := range []struct {
		file, failed string
	}{
		{"aiperf/run1/profile_export.jsonl", "100 requests (11 failed, left out of the figures)"},
		{"guidellm/v0.5_sync_warmup_benchmarks.json", "19 requests, concurrency 1"},
		{"llmperf/tgi_c32/01-ai-Yi-1-5-34B-Chat_550_150_individual_responses.json", "128 requests (44 failed, left out of the figures)"},
	} {
		path := filepath.Join(realDir, filepath.FromSlash(c.file))
		code, out, errs := cli(t, "compare", path)
		if code != 0 {
			t.Fatalf("compare %s: exit %d: %s", c.file, code, errs)
		}
		m := ttft.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("compare %s: no TTFT p50 with the file's own figure:\n%s", c.file, out)
		}
		ours, _ := strconv.ParseFloat(m[1], 64)
		theirs, _ := strconv.ParseFloat(m[2], 64)
		if !(theirs > 0) || math.Abs(ours-theirs) > 0.01*theirs {
			t.Errorf("compare %s: TTFT p50 %g ms, the file states %g ms", c.file, ours, theirs)
		}
		if !strings.Contains(out, c.failed) {
			t.Errorf("compare %s: no %q in\n%s", c.file, c.failed, out)
		}
		if code, _, errs := cli(t, "sim", "--like", path); code != 0 {
			t.Errorf("sim --like %s: exit %d: %s", c.file, code, errs)
		}
	}
	dir := t.TempDir()
	odd := filepath.Join(dir, "odd.json")
	os.WriteFile(odd, []byte(`{"foo": 1}`), 0o644)
	code, _, errs := cli(t, "compare", odd, odd)
	if code == 0 || !strings.Contains(errs, "it has keys: foo") || !strings.Contains(errs, "formats tried: "+results.Tried()) {
		t.Errorf("compare of an unplaceable file: exit %d: %s", code, errs)
	}
}
