package results

// AIPerf (NVIDIA's successor to GenAI-Perf): profile_export.jsonl, one record
// per request — metadata{request_start_ns, request_end_ns, benchmark_phase,
// was_cancelled}, metrics{name: {value, unit}} with time_to_first_token,
// request_latency, inter_chunk_latency (a list, one gap per chunk),
// input_sequence_length, output_sequence_length, inter_token_latency, and
// error{code, type, message} — and, with --export-level raw,
// profile_export_raw.jsonl: start_perf_ns and the raw responses[] with their
// perf_ns, from which TTFT and the chunk gaps follow. The run's own figures
// are in profile_export_aiperf.json (bench_nvsummary.go).

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

type aiperfMeta struct {
	RequestStartNs *float64 `json:"request_start_ns"`
	TimestampNs    *float64 `json:"timestamp_ns"` // earlier versions' name for the start (AIPerf, October 2025)
	Phase          string   `json:"benchmark_phase"`
	CreditPhase    string   `json:"credit_phase"` // earlier versions' name
	Cancelled      bool     `json:"was_cancelled"`
}

// start is the record's start in seconds on AIPerf's clock, under either
// version's name; NaN when the record has none.
func (m *aiperfMeta) start() float64 {
	switch {
	case m.RequestStartNs != nil:
		return *m.RequestStartNs / 1e9
	case m.TimestampNs != nil:
		return *m.TimestampNs / 1e9
	}
	return math.NaN()
}

// warmup reports a record outside the profiling phase, which AIPerf's own
// figures leave out.
func (m *aiperfMeta) warmup() bool {
	p := m.Phase
	if p == "" {
		p = m.CreditPhase
	}
	return p != "" && p != "profiling"
}

type aiperfError struct {
	Code    any    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *aiperfError) String() string {
	if e == nil {
		return ""
	}
	if e.Message != "" {
		return e.Message
	}
	if e.Type != "" {
		return e.Type
	}
	return fmt.Sprintf("error %v", e.Code)
}

// unitSeconds is how many seconds one unit of a metric is ("ms", "ns", ...).
func unitSeconds(u string) (float64, bool) {
	switch strings.ToLower(u) {
	case "ns":
		return 1e-9, true
	case "us", "µs":
		return 1e-6, true
	case "ms":
		return 1e-3, true
	case "s", "sec", "seconds":
		return 1, true
	}
	return 0, false
}

// aiperfLines reads profile_export.jsonl a record at a time.
type aiperfLines struct{ b *Run }

func newAIPerfLines() lineReader               { return &aiperfLines{newAIPerf()} }
func (a *aiperfLines) line(raw []byte) error   { return aiperfLine(a.b, raw) }
func (a *aiperfLines) finish() ([]*Run, error) { return finishAIPerf(a.b) }

func newAIPerf() *Run {
	return &Run{Tool: "aiperf", Format: "AIPerf profile_export.jsonl", Method: "linear", Summary: map[string]float64{}}
}

// aiperfLine reads one record of profile_export.jsonl into b.
func aiperfLine(b *Run, raw []byte) error {
	{
		var rec struct {
			Metadata aiperfMeta `json:"metadata"`
			Metrics  map[string]struct {
				Value json.RawMessage `json:"value"`
				Unit  string          `json:"unit"`
			} `json:"metrics"`
			Error *aiperfError `json:"error"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return jsonread.FieldError(err, "record")
		}
		if rec.Metadata.warmup() {
			return nil
		}
		r := Request{Start: math.NaN(), Error: rec.Error.String()}
		if rec.Metadata.Cancelled && r.Error == "" {
			r.Error = "cancelled"
		}
		r.Start = rec.Metadata.start()
		num := func(name string) (float64, bool, error) {
			m, ok := rec.Metrics[name]
			if !ok {
				return 0, false, nil
			}
			var v float64
			if err := json.Unmarshal(m.Value, &v); err != nil {
				return 0, false, sim.Refuse("field.number", "%s: want a number, got %s", "metrics."+name+".value", jsonread.Clip(m.Value))
			}
			if sc, ok := unitSeconds(m.Unit); ok {
				v *= sc
			}
			return v, true, nil
		}
		// Each metric under the names AIPerf's versions gave it: the first
		// present wins (October 2025 wrote ttft, later time_to_first_token).
		for _, f := range []struct {
			names []string
			dst   *float64
		}{{[]string{"time_to_first_token", "ttft"}, &r.TTFT}, {[]string{"request_latency"}, &r.Latency},
			{[]string{"inter_token_latency"}, &r.MeanITL}} {
			for _, n := range f.names {
				v, ok, err := num(n)
				if err != nil {
					return err
				}
				if ok {
					*f.dst = v
					break
				}
			}
		}
		for _, f := range []struct {
			names []string
			dst   *int
		}{{[]string{"input_sequence_length", "error_isl"}, &r.Prompt}, {[]string{"output_sequence_length", "output_token_count"}, &r.Output}} {
			for _, n := range f.names {
				if v, ok, err := num(n); err != nil {
					return err
				} else if ok {
					*f.dst = int(math.Round(v))
					break
				}
			}
		}
		if m, ok := rec.Metrics["inter_chunk_latency"]; ok {
			if err := json.Unmarshal(m.Value, &r.Gaps); err != nil {
				return sim.Refuse("field.numbers", "%s: want a list of numbers, got %s", "metrics.inter_chunk_latency.value", jsonread.Clip(m.Value))
			}
			sc, ok := unitSeconds(m.Unit)
			if !ok {
				return sim.Refuse("field.unit", "%s: want a time unit, got %q", "metrics.inter_chunk_latency.unit", m.Unit)
			}
			for i := range r.Gaps {
				r.Gaps[i] *= sc
			}
		}
		b.Requests = append(b.Requests, r)
		return nil
	}
}

func finishAIPerf(b *Run) ([]*Run, error) {
	if len(b.Requests) == 0 {
		return nil, sim.Refuse("bench.err.norecords", "no profiling records in the file")
	}
	if err := checkRequests(b.Requests, nil); err != nil {
		return nil, err
	}
	b.Duration = runSpan(b.Requests)
	rebase(b.Requests)
	b.cannot("bench.aiperf.load", "the load asked for (rate or concurrency) and the tool's own percentiles: they are in profile_export_aiperf.json beside this file")
	b.note("bench.aiperf.itl", "AIPerf's inter_token_latency is (e2e − TTFT)/(output − 1): servelab's tpot")
	if k := b.ChunkTokens(); k > 1.05 {
		b.chunkNote(k, sim.Say("bench.aiperf.chunks", "AIPerf's inter_chunk_latency"))
	}
	return []*Run{b}, nil
}

// runSpan is from the first start to the last request's end, when known.
func runSpan(rs []Request) float64 {
	first, last := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		if math.IsNaN(r.Start) {
			return 0
		}
		first, last = math.Min(first, r.Start), math.Max(last, r.Start+r.Latency)
	}
	if last > first {
		return last - first
	}
	return 0
}

// aiperfRawLines reads profile_export_raw.jsonl a record at a time.
type aiperfRawLines struct {
	b       *Run
	counted bool // false once output tokens were counted as chunks
}

func newAIPerfRawLines() lineReader { return &aiperfRawLines{newAIPerfRaw(), true} }
func (a *aiperfRawLines) line(raw []byte) error {
	return aiperfRawLine(a.b, &a.counted, raw)
}
func (a *aiperfRawLines) finish() ([]*Run, error) { return finishAIPerfRaw(a.b, a.counted) }

func newAIPerfRaw() *Run {
	return &Run{Tool: "aiperf", Format: "AIPerf profile_export_raw.jsonl", Method: "linear", Summary: map[string]float64{}}
}

// aiperfRawLine reads one record of profile_export_raw.jsonl into b;
// counted goes false when it counts output tokens as chunks.
func aiperfRawLine(b *Run, counted *bool, raw []byte) error {
	{
		var rec struct {
			Metadata    aiperfMeta `json:"metadata"`
			StartPerfNs *float64   `json:"start_perf_ns"`
			Responses   []struct {
				PerfNs  *float64 `json:"perf_ns"`
				Text    *string  `json:"text"`
				Packets []struct {
					Name  string  `json:"name"`
					Value *string `json:"value"`
				} `json:"packets"`
			} `json:"responses"`
			Error *aiperfError `json:"error"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return jsonread.FieldError(err, "record")
		}
		if rec.Metadata.warmup() {
			return nil
		}
		if rec.StartPerfNs == nil {
			return sim.Refuse("field.missing", "%s: missing", "start_perf_ns")
		}
		r := Request{Start: math.NaN(), Error: rec.Error.String()}
		if rec.Metadata.Cancelled && r.Error == "" {
			r.Error = "cancelled"
		}
		r.Start = rec.Metadata.start()
		var times []float64
		usageOut := 0
		for i, resp := range rec.Responses {
			if resp.PerfNs == nil {
				return sim.Refuse("field.missing", "%s: missing", fmt.Sprintf("responses[%d].perf_ns", i))
			}
			text := ""
			if resp.Text != nil {
				text = *resp.Text
			}
			for _, p := range resp.Packets {
				if p.Name == "data" && p.Value != nil {
					text += *p.Value
				}
			}
			content, prompt, out := chunkContent(text)
			if prompt > 0 {
				r.Prompt = prompt
			}
			if out > 0 {
				usageOut = out
			}
			if content {
				times = append(times, (*resp.PerfNs-*rec.StartPerfNs)/1e9)
			}
		}
		if len(times) > 0 {
			r.TTFT, r.Latency = times[0], times[len(times)-1]
			for i := 1; i < len(times); i++ {
				r.Gaps = append(r.Gaps, times[i]-times[i-1])
			}
		} else if r.Error == "" {
			r.Error = "no content in the responses"
		}
		r.Output = usageOut
		if r.Output == 0 {
			r.Output = len(times)
			*counted = false
		}
		b.Requests = append(b.Requests, r)
		return nil
	}
}

func finishAIPerfRaw(b *Run, counted bool) ([]*Run, error) {
	if !counted {
		b.note("bench.aiperf.counted", "where the server sent no usage, output tokens are counted as content chunks (AIPerf counts them with its tokenizer)")
	}
	if !b.HasStarts() {
		b.cannot("bench.aiperf.starts", "start times: metadata.request_start_ns is missing")
	}
	return finishAIPerf(b)
}

// chunkContent reads one streamed response body (an SSE data payload or a
// plain JSON body): whether it carried output text, and the usage's prompt
// and completion tokens when it holds them.
func chunkContent(s string) (content bool, prompt, completion int) {
	if strings.Contains(s, "data:") { // SSE: one or more events
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "data:") {
				c, p, o := chunkContent(strings.TrimPrefix(l, "data:"))
				content = content || c
				prompt, completion = max(prompt, p), max(completion, o)
			}
		}
		return content, prompt, completion
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "[DONE]" {
		return false, 0, 0
	}
	var msg struct {
		Choices []struct {
			Text  string `json:"text"`
			Delta struct {
				Content   string `json:"content"`
				Reasoning string `json:"reasoning_content"`
			} `json:"delta"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
		TextOutput string `json:"text_output"`
	}
	if json.Unmarshal([]byte(s), &msg) != nil {
		return false, 0, 0
	}
	for _, c := range msg.Choices {
		if c.Text != "" || c.Delta.Content != "" || c.Delta.Reasoning != "" || c.Message.Content != "" {
			content = true
		}
	}
	if msg.TextOutput != "" {
		content = true
	}
	if msg.Usage != nil {
		prompt, completion = msg.Usage.Prompt, msg.Usage.Completion
	}
	return content, prompt, completion
}
