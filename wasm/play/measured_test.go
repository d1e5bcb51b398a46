package play

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"
)

func labFile(t *testing.T) []byte {
	t.Helper()
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 4, 4, 1, 4000
	s, _ := ParseQuery("")
	step, _ := stepModel(s)
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: step, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := lab.Write(&b, &lab.Measured{Config: c, Summary: lab.Of(lo), Gaps: lab.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestLabFileConfiguresTheSimulation(t *testing.T) {
	o, err := ParseMeasured("lab.json", labFile(t))
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultState()
	if notes := o.ApplyConfig(&s); len(notes) > 0 {
		t.Errorf("notes %q", notes)
	}
	if s.Workload != "lab" || s.Lab.ShortConcurrency != 4 || s.Lab.LongInputLen != 4000 || s.Lab.InjectAfter != 1 || s.Lab.Duration != 4 {
		t.Errorf("state from the file: %s", s.Query())
	}
	if len(o.Gaps) == 0 || o.Lab == nil || o.Lab.WorstGap <= 0 {
		t.Errorf("overlay lacks gaps or summary: %d gaps", len(o.Gaps))
	}
	// Simulating the file's config gives the file's figures back (it came from the same simulator).
	r, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lab.WorstGap != o.Lab.WorstGap {
		t.Errorf("simulated worst gap %g, file says %g", r.Lab.WorstGap, o.Lab.WorstGap)
	}
}

func TestMalformedFilesSayWhy(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"summary": {"label": 3`, "not JSON"},
		{`[1, 2]`, "not JSON"},
		{`{"hello": 1}`, "neither a lab JSON"},
		{`{"summary": {"label": "x"}}`, "x.json"},
		{`{"itls": "nope"}`, "itls"},
	} {
		_, err := ParseMeasured("x.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.data, err, c.want)
		}
	}
}

// Every tool's file loads in the page: its figures match the file's own
// within 1%, it sets the simulation up with its lengths and load, and its
// gaps go on the timeline where it keeps them.
func TestEveryToolsFileLoads(t *testing.T) {
	dir := filepath.Join("..", "..", "sim", "testdata", "bench")
	for _, c := range []struct {
		file, kind string
		gaps       bool
		rate       float64 // 0: the achieved rate, any
		companion  string  // the tool's summary file, dropped with it
	}{
		{"vllm.json", "vllm", true, 6, ""},
		{"sglang.jsonl", "sglang", false, 4, ""},
		{"guidellm.json", "guidellm", false, 0, ""},
		{"guidellm_v02.json", "guidellm", false, 5, ""},
		{"aiperf/profile_export.jsonl", "aiperf", true, 0, "aiperf/profile_export_aiperf.json"},
		{"aiperf/profile_export_raw.jsonl", "aiperf", true, 0, "aiperf/profile_export_aiperf.json"},
		{"aiperf/profile_export_aiperf.json", "aiperf", false, 0, ""},
		{"genai-perf/profile_export.json", "genai-perf", true, 0, "genai-perf/profile_export_genai_perf.json"},
		{"llmperf/m_550_150_individual_responses.json", "llmperf", false, 0, "llmperf/m_550_150_summary.json"},
		{"llmperf/m_550_150_summary.json", "llmperf", false, 0, ""},
	} {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseMeasured(filepath.Base(c.file), data)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if o.Kind != c.kind || o.Bench == nil || (len(o.Gaps) > 0) != c.gaps || len(o.Lines()) == 0 {
			t.Errorf("%s: kind %q, %d gaps (want some: %v)", c.file, o.Kind, len(o.Gaps), c.gaps)
		}
		if c.companion != "" {
			cd, err := os.ReadFile(filepath.Join(dir, c.companion))
			if err != nil {
				t.Fatal(err)
			}
			co, err := ParseMeasured(filepath.Base(c.companion), cd)
			if err != nil || !o.Absorb(co) {
				t.Errorf("%s: its summary %s not taken in: %v", c.file, c.companion, err)
			}
			if o.Absorb(o) {
				t.Errorf("%s: absorbed itself", c.file)
			}
		}
		rows := o.FigureRows()
		stated := 0
		for _, r := range rows {
			if math.IsNaN(r.File) || math.IsNaN(r.Measured) {
				continue
			}
			stated++
			if math.Abs(r.Measured-r.File) > 0.01*r.File {
				t.Errorf("%s: %s %g, the file says %g", c.file, r.Label, r.Measured, r.File)
			}
		}
		if len(o.Bench.Requests) > 0 && (stated < 2 || o.VLLMFig[0][0] <= 0) {
			t.Errorf("%s: %d figures beside the file's own; TTFT P50 %g", c.file, stated, o.VLLMFig[0][0])
		}
		s := DefaultState()
		notes := o.ApplyConfig(&s)
		if s.Workload != "poisson" || s.Lab.InjectAfter != 0 || !(s.Rate > 0) {
			t.Errorf("%s: state %s, notes %q", c.file, s.Query(), notes)
		}
		if c.rate > 0 && s.Rate != c.rate {
			t.Errorf("%s: rate %g, the file asked %g", c.file, s.Rate, c.rate)
		}
		if p, _ := o.Bench.MeanLengths(); p > 0 && float64(s.Prompt) != math.Round(p) {
			t.Errorf("%s: prompt %g, file's mean %g", c.file, float64(s.Prompt), p)
		}
		if o.Bench.Concurrency > 0 && !strings.Contains(strings.Join(notes, " "), "in flight") {
			t.Errorf("%s: a concurrency-bound run set up without saying so: %q", c.file, notes)
		}
		if _, err := Simulate(s); err != nil {
			t.Errorf("%s: the simulation it set up fails: %v", c.file, err)
		}
	}
}

// A BOM is taken as the readers take it; gaps of 1e308 are refused, never a TPOT of +Inf.
func TestMeasuredBOMAndHugeGaps(t *testing.T) {
	if _, err := ParseMeasured("bom.json", append([]byte("\xef\xbb\xbf"), labFile(t)...)); err != nil {
		t.Errorf("a lab file with a UTF-8 BOM: %v", err)
	}
	o, err := ParseMeasured("bom.json", []byte("\xef\xbb\xbf"+`{"itls":[[0.01,0.03]],"ttfts":[0.1]}`))
	if err != nil || o.VLLMFig[0][0] != 0.1 {
		t.Errorf("a vLLM file with a UTF-8 BOM: %v, TTFT %v", err, o)
	}
	if _, err := ParseMeasured("huge.json", []byte(`{"itls":[[1e308,1e308]]}`)); err == nil || !strings.Contains(err.Error(), "request 0: gap 0") {
		t.Errorf("itls of 1e308: %v, want a refusal naming request 0's gap 0", err)
	}
}
