package results

import (
	"math"
	"strings"
	"testing"
)

// An llmperf summary's own NaN figures (the literal Python writes, or the
// string) are not available, not numbers: they are left out and said so.
func TestLLMPerfSummaryNaNNotAvailable(t *testing.T) {
	runs, err := Read("x_summary.json", []byte(`{"results_ttft_s_quantiles_p50": NaN, "results_ttft_s_quantiles_p90": "NaN",
		"results_ttft_s_quantiles_p99": 0.2, "results_end_to_end_latency_s_mean": "nan", "results_end_to_end_latency_s_quantiles_p50": 1.5, "num_concurrent_requests": 2, "results_num_completed_requests_per_min": 60, "results_num_completed_requests": 10, "results_ttft_s_mean": NaN}`))
	if err != nil {
		t.Fatal(err)
	}
	b := runs[0]
	for k, v := range b.Summary {
		if math.IsNaN(v) {
			t.Errorf("summary %s is NaN", k)
		}
	}
	if b.Summary["ttft_p99"] != 0.2 || b.Summary["e2e_p50"] != 1.5 {
		t.Errorf("the numbers beside: %v", b.Summary)
	}
	said := strings.Join(b.Cannot, "\n")
	for _, k := range []string{"results_ttft_s_mean", "results_ttft_s_quantiles_p50", "results_ttft_s_quantiles_p90", "results_end_to_end_latency_s_mean"} {
		if !strings.Contains(said, k) || !strings.Contains(said, "NaN (not available)") {
			t.Errorf("%s not said to be unavailable: %q", k, said)
		}
	}
}
