package results

// The aggregate files of AIPerf (profile_export_aiperf.json) and GenAI-Perf
// (profile_export_genai_perf.json): one object whose keys are metric tags,
// each {unit, avg, p50, p90, p99, ...}, beside input_config. Read alone they
// give a run of figures without requests; read with the per-request file
// beside them (Merge) they give that file the tool's own percentiles.

import (
	"encoding/json"
	"math"
	"strings"
)

type nvMetric struct {
	Unit string   `json:"unit"`
	Avg  *float64 `json:"avg"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P99  *float64 `json:"p99"`
}

func readNVSummary(name string, data []byte) ([]*Run, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	b := &Run{Tool: "genai-perf", Format: "GenAI-Perf profile_export_genai_perf.json", Method: "linear", Summary: map[string]float64{}}
	_, v1 := obj["aiperf_version"]
	_, v2 := obj["schema_version"]
	metrics := obj
	if recs := nvRecords(obj); recs != nil {
		// AIPerf's October 2025 layout: the metrics under "records", beside input_config.
		metrics, v1 = recs, true
	}
	if v1 || v2 || strings.Contains(strings.ToLower(name), "aiperf") {
		b.Tool, b.Format = "aiperf", "AIPerf profile_export_aiperf.json"
	}
	for _, m := range []struct{ theirs, ours string }{{"time_to_first_token", "ttft"}, {"ttft", "ttft"},
		{"inter_token_latency", "tpot"}, {"request_latency", "e2e"}, {"inter_chunk_latency", "itl"}} {
		theirs, ours := m.theirs, m.ours
		if _, done := b.Summary[ours+"_p50"]; done {
			continue // the newer name was read already
		}
		raw, ok := metrics[theirs]
		if !ok {
			continue
		}
		var m nvMetric
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		sc, ok := unitSeconds(m.Unit)
		if !ok {
			continue
		}
		for _, f := range []struct {
			v   *float64
			suf string
		}{{m.Avg, "mean"}, {m.P50, "p50"}, {m.P90, "p90"}, {m.P99, "p99"}} {
			if f.v != nil {
				b.Summary[ours+"_"+f.suf] = *f.v * sc
			}
		}
	}
	for theirs, ours := range map[string]string{"input_sequence_length": "prompt_tokens_mean", "output_sequence_length": "output_tokens_mean"} {
		var m nvMetric
		if raw, ok := metrics[theirs]; ok && json.Unmarshal(raw, &m) == nil && m.Avg != nil {
			b.Summary[ours] = *m.Avg
		}
	}
	var thr nvMetric
	if raw, ok := metrics["request_throughput"]; ok && json.Unmarshal(raw, &thr) == nil && thr.Avg != nil {
		b.Throughput = *thr.Avg
	}
	var dur nvMetric
	if raw, ok := metrics["benchmark_duration"]; ok && json.Unmarshal(raw, &dur) == nil && dur.Avg != nil {
		if sc, ok := unitSeconds(dur.Unit); ok {
			b.Duration = *dur.Avg * sc
		}
	}
	// The load asked for: AIPerf keeps it under input_config.loadgen, newer
	// GenAI-Perf under input_config.perf_analyzer.stimulus, older at input_config's top.
	type load struct {
		Concurrency flexNum `json:"concurrency"`
		RequestRate flexNum `json:"request_rate"`
	}
	var cfg struct {
		load
		Loadgen      *load `json:"loadgen"`
		PerfAnalyzer *struct {
			Stimulus *load `json:"stimulus"`
		} `json:"perf_analyzer"`
	}
	if raw, ok := obj["input_config"]; ok && json.Unmarshal(raw, &cfg) == nil {
		c, r := cfg.Concurrency, cfg.RequestRate
		if cfg.Loadgen != nil {
			c, r = cfg.Loadgen.Concurrency, cfg.Loadgen.RequestRate
		}
		if cfg.PerfAnalyzer != nil && cfg.PerfAnalyzer.Stimulus != nil {
			c, r = cfg.PerfAnalyzer.Stimulus.Concurrency, cfg.PerfAnalyzer.Stimulus.RequestRate
		}
		if r.OK && r.V > 0 {
			b.Rate = r.V
		} else if c.OK && c.V > 0 && !math.IsInf(c.V, 0) {
			b.Concurrency = int(c.V)
		}
	}
	b.cannot("bench.nv.aggregate", "per-request data: this is the aggregate; the requests are in profile_export.json(l) beside it")
	return []*Run{b}, nil
}

// nvRecords is the metrics of an AIPerf summary that keeps them under
// "records" (an object holding TTFT or request latency), else nil.
func nvRecords(obj map[string]json.RawMessage) map[string]json.RawMessage {
	raw, ok := obj["records"]
	if !ok {
		return nil
	}
	var recs map[string]json.RawMessage
	if json.Unmarshal(raw, &recs) != nil || !hasAny(recs, []string{"time_to_first_token", "ttft", "request_latency"}) {
		return nil
	}
	return recs
}

// nvDetect detects NVIDIA's summary: its metrics at the top level (GenAI-Perf,
// AIPerf) or under "records" (AIPerf, October 2025).
func nvDetect(s Shape, m map[string]json.RawMessage) bool {
	return s == Object && (hasAny(m, []string{"time_to_first_token", "request_latency", "inter_token_latency"}) || nvRecords(m) != nil)
}
