package results

// GenAI-Perf's profile_export.json (perf_analyzer's export):
// experiments[]{experiment{mode, value}, requests[]{timestamp,
// request_inputs, response_timestamps[] (ns), response_outputs[]}}. Only
// responses that carry output text count, as GenAI-Perf counts them: TTFT is
// the first such response after the timestamp, the e2e latency the last.
// Token counts come from GenAI-Perf's tokenizer and are not in the file.

import (
	"encoding/json"
	"fmt"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

type genaiReq struct {
	Timestamp  *float64          `json:"timestamp"`
	Timestamps []float64         `json:"response_timestamps"`
	Outputs    []json.RawMessage `json:"response_outputs"`
}

type genaiExp struct {
	Experiment struct {
		Mode  string  `json:"mode"`
		Value flexNum `json:"value"`
	} `json:"experiment"`
	Requests []genaiReq `json:"requests"`
}

type genaiDoc struct {
	Experiments []genaiExp `json:"experiments"`
}

func readGenAIPerf(name string, data []byte) ([]*Run, error) {
	var doc genaiDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonread.FieldError(err, "experiments")
	}
	return genaiRuns(&doc)
}

// genaiRuns are the runs of a decoded profile_export.json.
func genaiRuns(doc *genaiDoc) ([]*Run, error) {
	if len(doc.Experiments) == 0 {
		return nil, sim.Refuse("field.empty", "%s: empty", "experiments")
	}
	var runs []*Run
	for ei, ex := range doc.Experiments {
		b := &Run{Tool: "genai-perf", Format: "GenAI-Perf profile_export.json", Method: "linear", Summary: map[string]float64{}}
		switch ex.Experiment.Mode {
		case "concurrency":
			b.Concurrency = int(ex.Experiment.Value.V)
		case "request_rate":
			b.Rate = ex.Experiment.Value.V
		}
		counted := true
		for ri, q := range ex.Requests {
			where := fmt.Sprintf("experiments[%d].requests[%d]", ei, ri)
			if q.Timestamp == nil {
				return nil, sim.Refuse("field.missing", "%s: missing", where+".timestamp")
			}
			if len(q.Outputs) != 0 && len(q.Outputs) != len(q.Timestamps) {
				return nil, sim.Refuse("bench.err.responses", "%s: %d response_outputs but %d response_timestamps", where, len(q.Outputs), len(q.Timestamps))
			}
			r := Request{Start: *q.Timestamp / 1e9}
			var times []float64
			usageOut := 0
			for i, ts := range q.Timestamps {
				content := len(q.Outputs) == 0 // no outputs kept: every response counts
				if len(q.Outputs) > 0 {
					var o struct {
						Response *string `json:"response"`
					}
					text := string(q.Outputs[i])
					if json.Unmarshal(q.Outputs[i], &o) == nil && o.Response != nil {
						text = *o.Response
					}
					var p, c int
					content, p, c = chunkContent(text)
					if p > 0 {
						r.Prompt = p
					}
					if c > 0 {
						usageOut = c
					}
				}
				if content {
					times = append(times, (ts-*q.Timestamp)/1e9)
				}
			}
			if len(times) == 0 {
				r.Error = "no response with output text"
			} else {
				r.TTFT, r.Latency = times[0], times[len(times)-1]
				for i := 1; i < len(times); i++ {
					r.Gaps = append(r.Gaps, times[i]-times[i-1])
				}
			}
			r.Output = usageOut
			if r.Output == 0 {
				r.Output, counted = len(times), false
			}
			b.Requests = append(b.Requests, r)
		}
		if len(b.Requests) == 0 {
			return nil, sim.Refuse("field.empty", "%s: empty", fmt.Sprintf("experiments[%d].requests", ei))
		}
		if err := checkRequests(b.Requests, nil); err != nil {
			return nil, fmt.Errorf("experiments[%d]: %w", ei, err)
		}
		b.Duration = runSpan(b.Requests)
		rebase(b.Requests)
		if !counted {
			b.note("bench.genaiperf.counted", "output tokens counted as content responses (GenAI-Perf counts them with its tokenizer): with several tokens a response, tpot and itl_token read high by that factor")
		}
		if b.Requests[0].Prompt == 0 {
			b.cannot("bench.genaiperf.prompt", "prompt tokens: GenAI-Perf tokenizes the prompts and does not write the counts here (profile_export_genai_perf.json beside has their mean)")
		}
		b.note("bench.genaiperf.itl", "GenAI-Perf's inter_token_latency is (e2e − TTFT)/(output − 1): servelab's tpot")
		if k := b.ChunkTokens(); k > 1.05 {
			b.chunkNote(k, sim.Say("bench.genaiperf.chunks", "gaps between content responses"))
		}
		runs = append(runs, b)
	}
	return runs, nil
}
