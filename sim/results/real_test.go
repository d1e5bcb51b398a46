package results

// Every reader on files the tools themselves wrote (testdata/real/<tool>/,
// each beside a .source naming its repository, path and commit): the format
// is recognised, the figures the file states agree with the ones servelab
// computes from its requests, failed requests are counted as failed, and
// the arrivals are the records' own start times.

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// realFile is one fixture and what the file itself says about it.
type realFile struct {
	path   string // under testdata/real
	format string // the row of Formats that must detect it
	refuse string // the file is refused with an error holding this ("": it is read)
	// Counts of the measured requests: ok and failed, and where the tool
	// states them in its own files (a path into the file or its companion,
	// "" where it states none).
	ok, failed         int
	okStated, failStat string
	starts             string // how to read each record's start from the file ("": it keeps none)
	kind               string // sim --like's workload kind ("": not checked)
	// Figures the file states that servelab does not reproduce within 1%,
	// each with why (the tool's own definition differs).
	differ map[string]string
}

var realFiles = []realFile{
	{path: "aiperf/run1/profile_export.jsonl", format: "aiperf", ok: 89, failed: 11,
		okStated: "records.request_count.avg", failStat: "records.error_request_count.avg",
		starts: "aiperf", kind: "closed"},
	{path: "aiperf/run1/profile_export_aiperf.json", format: "nvidia-summary", kind: "closed"},
	{path: "guidellm/v0.5_concurrent_benchmarks.json", format: "guidellm", ok: 4,
		okStated: "benchmarks.0.metrics.request_totals.successful", failStat: "benchmarks.0.metrics.request_totals.errored",
		starts: "guidellm", kind: "closed"},
	{path: "guidellm/v0.5_sync_warmup_benchmarks.json", format: "guidellm", ok: 19,
		okStated: "benchmarks.0.metrics.request_totals.successful", failStat: "benchmarks.0.metrics.request_totals.errored",
		starts: "guidellm", kind: "closed"},
	{path: "llmperf/vllm_c1/01-ai-Yi-1-5-34B-Chat_550_150_individual_responses.json", format: "llmperf", ok: 80,
		okStated: "results_num_completed_requests", failStat: "results_number_errors", kind: "closed"},
	{path: "llmperf/tgi_c32/01-ai-Yi-1-5-34B-Chat_550_150_individual_responses.json", format: "llmperf", ok: 84, failed: 44,
		okStated: "results_num_completed_requests", failStat: "results_number_errors", kind: "closed"},
	{path: "llmperf/vllm_c1/01-ai-Yi-1-5-34B-Chat_550_150_summary.json", format: "llmperf-summary", kind: "closed"},
	{path: "llmperf/tgi_c32/01-ai-Yi-1-5-34B-Chat_550_150_summary.json", format: "llmperf-summary", kind: "closed"},
	{path: "sglang/llama_3_3_70b_online_output.jsonl", format: "sglang", refuse: "itls: missing"},
	// Every request failed and vLLM wrote 0.0 for every latency: refused as
	// a summary, never read as a run of 0 ms requests.
	{path: "vllm/bench_serve_all_requests_failed_v0.25.1.json", format: "vllm-summary", refuse: "every request failed (0 completed, 8 failed)"},
	{path: "vllm/gateway_serving_compose_smoke_2026.json", format: "vllm-summary", kind: "poisson"},
	{path: "inference-perf/v0_5_0-clean-two-stage-run/per_request_lifecycle_metrics.json", format: "inference-perf", ok: 5, failed: 1,
		okStated: "successes.count", failStat: "failures.count", starts: "inference-perf", kind: "replay"},
	{path: "inference-perf/v0_5_0-clean-two-stage-run/summary_lifecycle_metrics.json", format: "inference-perf-summary", kind: "poisson"},
	{path: "inference-perf/kubecon-na-2025-vllm/stage_0_lifecycle_metrics.json", format: "inference-perf-summary", kind: "poisson"},
	{path: "mooncake/conversation_trace.jsonl", format: "mooncake", ok: 200, starts: "mooncake", kind: "replay"},
}

func TestRealFiles(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range realFiles {
		listed[c.path] = true
		t.Run(c.path, func(t *testing.T) { checkRealFile(t, c) })
	}
	// Every fixture is in the table and has its source beside it.
	err := filepath.Walk(filepath.Join("testdata", "real"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.HasSuffix(p, ".source") {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "real"), p)
		rel = filepath.ToSlash(rel)
		if !listed[rel] {
			t.Errorf("%s is not in realFiles", rel)
		}
		src, err := os.ReadFile(p + ".source")
		if err != nil {
			t.Errorf("%s: no source beside it: %v", rel, err)
			return nil
		}
		for _, k := range []string{"repository: ", "path: ", "commit: "} {
			if !strings.Contains(string(src), k) {
				t.Errorf("%s.source does not say its %s", rel, strings.TrimSuffix(k, ": "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkRealFile(t *testing.T, c realFile) {
	path := filepath.Join("testdata", "real", filepath.FromSlash(c.path))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, derr := Detect(data)
	if f == nil || f.Name != c.format {
		t.Fatalf("detected as %v (%v), want %s", f, derr, c.format)
	}
	runs, err := Read(path, data)
	if c.refuse != "" {
		if err == nil || !strings.Contains(err.Error(), c.refuse) {
			t.Fatalf("read with error %v, want one with %q", err, c.refuse)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	b := runs[0]
	companion := ""
	if cp := b.Companion(path); cp != "" {
		cd, err := os.ReadFile(cp)
		if err != nil {
			t.Fatalf("companion: %v", err)
		}
		cs, err := Read(cp, cd)
		if err != nil {
			t.Fatalf("companion %s: %v", cp, err)
		}
		b.Merge(cs[0])
		companion = string(cd)
	}

	// Failed requests are counted as failed; none is a 0 ms TTFT.
	ok, failed := 0, 0
	for i, r := range b.Requests {
		if r.Error != "" {
			failed++
			continue
		}
		ok++
		if b.Trace {
			continue // a trace measured no times
		}
		if !(r.TTFT > 0) || !(r.Latency >= r.TTFT) {
			t.Errorf("request %d succeeded with TTFT %g s and latency %g s", i, r.TTFT, r.Latency)
		}
	}
	if ok != c.ok || failed != c.failed {
		t.Errorf("%d successful and %d failed requests, want %d and %d", ok, failed, c.ok, c.failed)
	}
	// ... as many as the tool says it completed and lost.
	for _, s := range []struct {
		at   string
		ours int
	}{{c.okStated, ok}, {c.failStat, failed}} {
		if s.at == "" {
			continue
		}
		doc := string(data)
		if companion != "" {
			doc = companion
		}
		if v, found := jsonAt(t, doc, s.at); !found || int(v) != s.ours {
			t.Errorf("the tool states %s = %v (found %v), servelab counts %d", s.at, v, found, s.ours)
		}
	}

	// The figures the file states, within 1% of those computed from its requests.
	figs, _ := b.Figures(nil)
	compared := 0
	keys := make([]string, 0, len(b.Summary))
	for k := range b.Summary {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		theirs := b.Summary[k]
		ours, ok := figs[k]
		if !ok || len(b.Requests) == 0 {
			continue
		}
		compared++
		if why, ok := c.differ[k]; ok {
			t.Logf("%s: theirs %.6g, ours %.6g (not compared: %s)", k, theirs, ours, why)
			continue
		}
		t.Logf("%s: theirs %.6g, ours %.6g", k, theirs, ours)
		if math.Abs(ours-theirs) > 0.01*math.Abs(theirs) {
			t.Errorf("%s: the file states %.6g, servelab computes %.6g", k, theirs, ours)
		}
	}
	if b.Trace {
		if len(figs) != 0 {
			t.Errorf("a trace gave figures %v", figs)
		}
	} else if len(b.Requests) > 0 && compared == 0 {
		t.Errorf("no figure of the file's own was compared (it states %v)", keys)
	}
	if len(b.Requests) > 0 && !b.Trace {
		if _, ok := b.Summary["ttft_p50"]; !ok {
			t.Errorf("the file's median TTFT was not read (its figures: %v)", keys)
		}
	}

	// Arrivals are the records' own start times.
	if c.starts != "" {
		want := fileStarts(t, c.starts, data, b)
		if !b.HasStarts() {
			t.Fatalf("the file keeps start times, the run has none")
		}
		if len(want) != len(b.Requests) {
			t.Fatalf("%d start times in the file, %d requests", len(want), len(b.Requests))
		}
		for i, r := range b.Requests {
			if math.Abs(r.Start-want[i]) > 1e-6 {
				t.Errorf("request %d starts at %.6f s, the file says %.6f s", i, r.Start, want[i])
				break
			}
		}
	} else if b.HasStarts() && len(b.Requests) > 0 {
		t.Errorf("the file keeps no start times, the run has them")
	}

	// sim --like takes the run as the tool offered it.
	if c.kind != "" {
		w, err := b.Workload(512, 128, 1)
		if err != nil {
			t.Fatalf("Workload: %v", err)
		}
		if w.Kind != c.kind {
			t.Errorf("workload %s, want %s", w.Kind, c.kind)
		}
		if len(b.Requests) > 0 && len(w.Requests) != ok {
			t.Errorf("workload of %d requests, want the %d successful ones", len(w.Requests), ok)
		}
	}
}

// fileStarts reads each request's start from the file itself (seconds after
// the first), in the order the run keeps the requests.
func fileStarts(t *testing.T, how string, data []byte, b *Run) []float64 {
	t.Helper()
	var abs []float64
	switch how {
	case "aiperf":
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec struct {
				Metadata map[string]json.RawMessage `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			raw, ok := rec.Metadata["request_start_ns"]
			if !ok {
				raw = rec.Metadata["timestamp_ns"]
			}
			ns, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				t.Fatalf("a record without its start: %s", line[:80])
			}
			abs = append(abs, ns/1e9)
		}
	case "mooncake":
		// Mooncake's timestamps are milliseconds; the run keeps arrival order.
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec struct {
				T float64 `json:"timestamp"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			abs = append(abs, rec.T/1e3)
		}
		sort.Float64s(abs)
	case "inference-perf":
		var recs []struct {
			Start float64 `json:"start_time"`
		}
		if err := json.Unmarshal(data, &recs); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			abs = append(abs, r.Start)
		}
	case "guidellm":
		// GuideLLM's own metrics count the requests that overlap the
		// measured window: the run keeps those, successful ones first.
		var doc struct {
			Benchmarks []struct {
				SchedulerMetrics struct {
					Start float64 `json:"measure_start_time"`
					End   float64 `json:"measure_end_time"`
				} `json:"scheduler_metrics"`
				Requests map[string][]struct {
					Info struct {
						Timings struct {
							Start float64  `json:"request_start"`
							End   *float64 `json:"request_end"`
						} `json:"timings"`
					} `json:"info"`
				} `json:"requests"`
			} `json:"benchmarks"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		g := doc.Benchmarks[0]
		for _, st := range []string{"successful", "incomplete", "errored"} {
			for _, q := range g.Requests[st] {
				tm := q.Info.Timings
				end := math.Inf(1)
				if tm.End != nil {
					end = *tm.End
				}
				if end > g.SchedulerMetrics.Start && tm.Start < g.SchedulerMetrics.End {
					abs = append(abs, tm.Start)
				}
			}
		}
	default:
		t.Fatalf("no way to read starts %q", how)
	}
	if len(abs) == 0 {
		return nil
	}
	first := slices.Min(abs)
	out := make([]float64, len(abs))
	for i, s := range abs {
		out[i] = s - first
	}
	return out
}

// jsonAt is the number at a dotted path (object keys, list indices) in a
// JSON document.
func jsonAt(t *testing.T, doc, at string) (float64, bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(at, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				return 0, false
			}
			v = x[i]
		default:
			return 0, false
		}
	}
	f, ok := v.(float64)
	return f, ok
}

// AIPerf's October 2025 records name the TTFT ttft and the start
// timestamp_ns (later versions: time_to_first_token, request_start_ns).
// Read alone, the file gave TTFT 0.00 ms and sim --like refused it ("states
// no rate, concurrency, start times or duration"); its eleven cancelled
// records are failures, not 0 ms requests.
func TestAIPerfOctober2025Names(t *testing.T) {
	path := filepath.Join("testdata", "real", "aiperf", "run1", "profile_export.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Read(path, data)
	if err != nil {
		t.Fatal(err)
	}
	b := runs[0]
	figs, _ := b.Figures(nil)
	// profile_export_aiperf.json beside it: ttft p50 2369.317693 ms.
	if got := figs["ttft_p50"]; math.Abs(got-2.369317693) > 1e-9 {
		t.Errorf("TTFT p50 %.6f s, AIPerf states 2.369317693 s", got)
	}
	cancelled := 0
	for _, r := range b.Requests {
		if strings.Contains(r.Error, "cancelled") {
			cancelled++
		}
	}
	if cancelled != 11 {
		t.Errorf("%d cancelled requests, the file has 11", cancelled)
	}
	w, err := b.Workload(512, 128, 1)
	if err != nil {
		t.Fatalf("sim --like: %v", err)
	}
	if w.Kind != "replay" || len(w.Requests) != 89 {
		t.Errorf("workload %s of %d requests, want the 89 successful ones replayed at their start times", w.Kind, len(w.Requests))
	}
}
