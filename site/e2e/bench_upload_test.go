package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// Every benchmark tool's file (the fixtures sim/testdata/bench holds, in each
// tool's own layout) loads in the page: run A is the tool's run, with its
// TTFT and TPOT beside the simulated ones, and the simulation set up from it.
func TestEveryBenchmarkToolsFileUploads(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	dir, err := filepath.Abs(filepath.Join("..", "..", "sim", "testdata", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"vllm.json", "sglang.jsonl", "guidellm.json", "guidellm_v02.json",
		"aiperf/profile_export.jsonl", "aiperf/profile_export_raw.jsonl", "genai-perf/profile_export.json",
		"llmperf/m_550_150_individual_responses.json"} {
		eval[any](t, ctx, `document.getElementById("clear-measured").click()`)
		waitFor(t, ctx, `servelab.status().overlays === 0`, "the measured runs cleared")
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{filepath.Join(dir, f)})); err != nil {
			t.Fatalf("upload %s: %v", f, err)
		}
		waitFor(t, ctx, fmt.Sprintf(`(() => { const s = document.getElementById("measured-table").textContent;
			return servelab.status().overlays === 1 && s.includes("A: %s") && s.includes("TTFT P90") && s.includes("TPOT P90"); })()`,
			filepath.Base(f)), f+" as run A with its figures")
		if st := eval[map[string]any](t, ctx, `servelab.getState()`); st["workload"] != "poisson" || st["inject"] != 0.0 {
			t.Errorf("%s: state %v, want a Poisson run whose clock starts with the file's", f, st)
		}
	}
}
