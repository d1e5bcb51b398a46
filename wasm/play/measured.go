package play

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/results"
	"servelab/sim/scenario"
)

// Overlay is a measured run laid over the simulation: the lab's gaps on the
// simulation's clock, or a benchmark tool's run (vLLM bench, GuideLLM,
// AIPerf, GenAI-Perf, SGLang bench_serving, llmperf) with its latency
// figures and, where the file keeps start times and chunk gaps, its gaps
// normalised to tokens on the run's clock.
type Overlay struct {
	Name    string
	Kind    string // "lab", or the tool: "vllm", "guidellm", "aiperf", "genai-perf", "sglang", "llmperf"
	Gaps    []sim.Gap
	Origin  float64 // simulated time of the measured run's injection (gap times are relative to it; a tool's run starts at it)
	Lab     *lab.Summary
	Config  *lab.Config
	VLLM    *results.VLLM // Kind "vllm" only
	Bench   *results.Run  // every tool's run, vLLM's included
	VLLMFig [3][3]float64 // TTFT, TPOT, ITL per token x P50, P90, P99, for any tool's run
	Runs    int           // runs in the file (a GuideLLM sweep, SGLang's appended lines); the first is shown
	// Figs is Bench.Figures(nil), computed once when the file is read (the
	// page draws the table often; a large run's figures take seconds).
	Figs   map[string]float64
	blocks []gapBlock // Gaps' index for GapColumns, made on first use
}

// KindIn names the overlay's kind in lang: the lab's in the catalogues
// ("ovkind."+Kind), a tool's by its own name.
func (o *Overlay) KindIn(lang string) string {
	if _, ok := catalogueEN["ovkind."+o.Kind]; ok {
		return T(lang, "ovkind."+o.Kind)
	}
	return o.Kind
}

// FigureRow is one line of a tool's figures for the page: computed from the
// file's requests and, where the file states it, the file's own.
type FigureRow struct {
	Key      string  // results.Run figure key, e.g. "ttft_p50"
	Label    string  // e.g. "TTFT P50" (English; the page labels it by Key from the catalogues)
	Measured float64 // seconds; NaN when the file cannot give it
	File     float64 // seconds; NaN when the file states none
}

// FigureRows lists the tool's figures (P50, P90, P99 of TTFT, TPOT, ITL per
// chunk, ITL per token, E2E) that either side has; nil for a lab run.
func (o *Overlay) FigureRows() []FigureRow {
	if o.Bench == nil {
		return nil
	}
	figs := o.Figs
	if figs == nil {
		figs, _ = o.Bench.Figures(nil)
	}
	names := map[string]string{"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL per chunk", "itl_token": "ITL per token", "e2e": "E2E"}
	var rows []FigureRow
	for _, f := range results.FigureNames {
		for _, p := range []string{"p50", "p90", "p99"} {
			k := f + "_" + p
			m, okm := figs[k]
			v, okf := o.Bench.Summary[k]
			if !okm && !okf {
				continue
			}
			if !okm {
				m = math.NaN()
			}
			if !okf {
				v = math.NaN()
			}
			rows = append(rows, FigureRow{Key: k, Label: names[f] + " " + strings.ToUpper(p), Measured: m, File: v})
		}
	}
	return rows
}

// ParseMeasured reads an uploaded file: a lab JSON (run.py or servelab
// measure) or a benchmark tool's result. Errors say what is wrong with it.
func ParseMeasured(name string, data []byte) (*Overlay, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM, as the readers take it
	var probe map[string]json.RawMessage
	perr := json.Unmarshal(data, &probe)
	if f, _ := results.Detect(data); f != nil && f.Name == "lab" {
		m, err := lab.Read(bytes.NewReader(data))
		if err != nil {
			return nil, errorf("meas.lab", name, err)
		}
		if m.Summary.Error != "" {
			return nil, errorf("meas.notokens", name, m.Summary.Error)
		}
		o := &Overlay{Name: name, Kind: "lab", Gaps: m.Gaps, Lab: &m.Summary}
		if _, ok := probe["config"]; ok {
			c := m.Config
			o.Config = &c
		}
		return o, nil
	}
	runs, err := results.Read(name, data)
	if err != nil {
		if perr != nil && !results.IsBench(data) {
			return nil, errorf("meas.notjson", name, perr)
		}
		return nil, errorf("meas.neither", name, err)
	}
	b := runs[0]
	gaps, _ := b.Timeline(nil)
	o := &Overlay{Name: name, Kind: b.Tool, Bench: b, Gaps: gaps, Runs: len(runs)}
	if b.Tool == "vllm" {
		if v, err := results.ReadVLLM(bytes.NewReader(data)); err == nil {
			o.VLLM = v
		}
	}
	figs, _ := b.Figures(nil)
	o.setFigures(figs)
	return o, nil
}

// setFigures keeps the run's figures and the table's nine.
func (o *Overlay) setFigures(f map[string]float64) {
	o.Figs = f
	itl := "itl_token" // per token, as the simulation's gaps are
	for i, k := range []string{"ttft", "tpot", itl} {
		for j, p := range []string{"p50", "p90", "p99"} {
			o.VLLMFig[i][j] = f[k+"_"+p]
		}
	}
}

// Absorb takes a summary-only file of the same tool (AIPerf's
// profile_export_aiperf.json, GenAI-Perf's profile_export_genai_perf.json,
// llmperf's *_summary.json) into o, a run of that tool's per-request file,
// so its figures sit beside the tool's own. It reports whether it did; the
// page calls it before laying a second file as run B.
func (o *Overlay) Absorb(s *Overlay) bool {
	if o == nil || s == nil || o.Bench == nil || s.Bench == nil || o.Bench.Tool != s.Bench.Tool ||
		len(o.Bench.Requests) == 0 || len(s.Bench.Requests) != 0 {
		return false
	}
	o.Bench.Merge(s.Bench)
	return true
}

// Lines says, for the page, what the tool's file is, what was normalised
// and which figures it cannot give (nil for a lab run), in English.
func (o *Overlay) Lines() []string { return o.LinesIn("en") }

// LinesIn is Lines in lang (the readers' notes by their keys, see Say).
func (o *Overlay) LinesIn(lang string) []string {
	b := o.Bench
	if b == nil {
		return nil
	}
	out := []string{Tf(lang, "bench.file", o.Name, b.Format, len(b.Requests))}
	if o.Runs > 1 {
		out = append(out, Tf(lang, "bench.runs", o.Runs))
	}
	for _, n := range SayAll(lang, b.Notes, b.NoteNotes) {
		out = append(out, Tf(lang, "bench.note", n))
	}
	for _, c := range SayAll(lang, b.Cannot, b.CannotNotes) {
		out = append(out, Tf(lang, "bench.cannot", c))
	}
	return out
}

// ApplyConfig sets the simulation up as the measured run was: the lab's
// closed loop with its knobs, or a Poisson run of the bench's mean lengths.
func (o *Overlay) ApplyConfig(s *State) []string {
	var notes []string
	set := func(k string, v float64) {
		if n := s.SetNum(k, v); n != "" {
			notes = append(notes, n)
		}
	}
	switch o.Kind {
	case "lab":
		s.Workload = scenario.Lab
		if !OneGPUColocated(s.Policy) {
			s.Policy = scenario.Chunked
		}
		c := lab.DefaultConfig()
		if o.Config != nil {
			c = *o.Config
		}
		set("streams", float64(c.ShortConcurrency))
		set("sin", float64(c.ShortInputLen))
		set("sout", float64(c.ShortOutputLen))
		set("long", float64(c.LongInputLen))
		set("longout", float64(c.LongOutputLen))
		set("duration", float64(c.Duration))
		set("inject", float64(c.InjectAfter))
		set("t0", math.Max(0, c.InjectAfter-0.5))
		set("span", 3)
	default: // a benchmark tool's run
		b := o.Bench
		if b == nil {
			break
		}
		s.Workload = scenario.Poisson
		if p, out := b.MeanLengths(); p > 0 || out > 0 {
			if p > 0 {
				set("prompt", math.Round(p))
			}
			if out > 0 {
				set("output", math.Round(out))
			}
		}
		n := 0
		for _, r := range b.Requests {
			if r.Error == "" {
				n++
			}
		}
		if n > 0 {
			set("n", float64(n))
		}
		rate := b.Rate
		if b.Concurrency > 0 || math.IsInf(rate, 1) || rate <= 0 {
			rate = b.AchievedRate()
			how := T(s.Lang, "bench.norate")
			switch {
			case b.Concurrency > 0:
				how = Tf(s.Lang, "bench.kept", b.Concurrency)
			case math.IsInf(b.Rate, 1):
				how = T(s.Lang, "bench.once")
			}
			if rate > 0 {
				notes = append(notes, Tf(s.Lang, "bench.poisson", o.Name, how, rate))
			}
		}
		if rate > 0 {
			set("rate", rate)
		} else {
			notes = append(notes, Tf(s.Lang, "bench.keeprate", o.Name))
		}
		set("inject", 0) // a tool's run has no injection: its clock starts at the simulation's zero
		set("t0", 0)
		if b.Duration > 0 {
			set("span", math.Min(b.Duration, 10))
		}
		if p, _ := b.MeanLengths(); p == 0 {
			notes = append(notes, Tf(s.Lang, "bench.keepprompt", o.Name))
		}
	}
	return notes
}
