package play

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The page's upload places the new inputs as the CLI does: a Mooncake trace
// becomes the workload whatever its name (the format table names it a
// trace), with its timestamps in milliseconds; inference-perf's
// per-request file is laid over the timeline as a measured run.
func TestUploadPlacesTheNewInputs(t *testing.T) {
	real := filepath.Join("..", "..", "sim", "results", "testdata", "real")
	trace, err := os.ReadFile(filepath.Join(real, "mooncake", "conversation_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"conversation_trace.jsonl", "conversation.json", "trace"} {
		if !IsTrace(name, trace) {
			t.Fatalf("%s: a Mooncake trace not taken for a trace", name)
		}
	}
	ss := NewSession()
	n, err := ss.SetTrace("conversation.json", trace)
	if err != nil || n != 200 {
		t.Fatalf("SetTrace: %d requests, %v", n, err)
	}
	if last := ss.trace.reqs[n-1].Arrival; math.Abs(last-72) > 1e-9 {
		t.Errorf("last arrival %g s, the file's last timestamp is 72000 ms", last)
	}

	ip, err := os.ReadFile(filepath.Join(real, "inference-perf", "v0_5_0-clean-two-stage-run", "per_request_lifecycle_metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if IsTrace("per_request_lifecycle_metrics.json", ip) {
		t.Fatal("inference-perf's per-request file taken for a trace")
	}
	o, err := ParseMeasured("per_request_lifecycle_metrics.json", ip)
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind != "inference-perf" || o.Bench.Failed() != 1 || len(o.Gaps) == 0 {
		t.Errorf("overlay %s, %d failed, %d gaps on the timeline", o.Kind, o.Bench.Failed(), len(o.Gaps))
	}
	if got := o.Figs["ttft_p50"]; math.Abs(got-1.0/9) > 1e-9 {
		t.Errorf("TTFT p50 %g s, inference-perf states 0.1111 s", got)
	}
}
