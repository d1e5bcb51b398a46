// Package lab is run.py's world: the lab script's measured JSON (its
// config, summary and gaps, plus servelab's extra key), read and written
// by both the script and servelab; the summary and its windows, computed
// from a run's token arrivals as the script computes them; the script's
// prompts; and the reader of an OpenAI-compatible token stream that the
// measuring client and the page's live modes share.
//
// It imports sim for types only: a run's record (sim.LabRun, sim.Arrival,
// sim.StreamResult, sim.LabCounts, sim.GapCount and its percentiles), the
// workload (sim.LabWorkload) and keyed notes (sim.Note). The measuring
// client (cmd/internal/labclient), the lab server, the companion, the
// CLI, calibration and the page import it.
package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"servelab/sim"
	"servelab/sim/internal/floats"
	"servelab/sim/internal/jsonread"
)

// MaxTokens bounds a prompt or output length in a lab run's flags.
const MaxTokens = sim.MaxTokens

// Gap, Arrival, StreamResult and Run are a lab run's record (see sim.LabRun):
// the measuring client builds one from the wire as the simulator builds
// one from engine results.
type (
	Gap          = sim.Gap
	Arrival      = sim.Arrival
	StreamResult = sim.StreamResult
	Run          = sim.LabRun
)

// Summary is run.py's summary, key for key. When Error is set (no token
// arrivals were recorded) only Label and Error are meaningful and only those
// two keys are written, as the script does.
type Summary struct {
	Label            string  `json:"label"`
	BaseURL          string  `json:"base_url"`
	ShortConcurrency int     `json:"short_concurrency"`
	LongInputLen     int     `json:"long_input_len"`
	TokensObserved   int     `json:"tokens_observed"`
	ITLP50           float64 `json:"itl_p50"`
	ITLP90           float64 `json:"itl_p90"`
	ITLP99           float64 `json:"itl_p99"`
	ITLMax           float64 `json:"itl_max"`
	ITLQuietP50      float64 `json:"itl_quiet_p50"`
	ITLQuietP99      float64 `json:"itl_quiet_p99"`
	ITLDuringP50     float64 `json:"itl_during_p50"`
	ITLDuringP99     float64 `json:"itl_during_p99"`
	ITLDuringMax     float64 `json:"itl_during_max"`
	ITLAfterP99      float64 `json:"itl_after_p99"`
	WorstGap         float64 `json:"worst_gap"`
	WorstGapOffset   float64 `json:"worst_gap_offset"` // seconds from injection
	SpikeRatio       float64 `json:"spike_ratio"`      // worst gap over the quiet median
	LongTTFT         float64 `json:"long_ttft"`
	LongFailed       int     `json:"long_failed"`
	LongError        string  `json:"long_error"`
	ShortCompleted   int     `json:"short_completed"`
	ShortFailed      int     `json:"short_failed"`
	Wall             float64 `json:"wall"`
	OutputTokS       float64 `json:"output_tok_s"`
	Error            string  `json:"error,omitempty"`
}

// Summarise is run.py's summarise: ITL percentiles over the whole run and
// over three windows — quiet (before injection), during (from injection until
// the first successful long request's first token; to the end when none
// succeeded) and after — plus the worst gap and where it fell. Percentiles are
// Percentile's nearest rank, as the script's pct.
func Summarise(r Run) Summary {
	if len(r.Arrivals) == 0 {
		return Summary{Label: r.Label, Error: "no token arrivals recorded"}
	}
	arr := r.Arrivals
	// The script sorts (t, gap) tuples; the same order makes ties pick the
	// same worst gap. A simulated run records them in that order already
	// (a comparison sort through a function is slow in the browser's wasm).
	if !arrivalsSorted(arr) {
		arr = slices.Clone(arr)
		slices.SortFunc(arr, func(a, b Arrival) int {
			if c := floats.Compare(a.T, b.T); c != 0 {
				return c
			}
			return floats.Compare(a.Gap, b.Gap)
		})
	}
	_, _, windowEnd := r.Window()
	var c sim.LabCounts
	for _, a := range arr {
		c.Add(a, 1, c.Window(a.T, r.Inject, windowEnd))
	}
	return summary(r, &c)
}

// Of returns a simulated lab run's summary: from the counts the simulator
// took as it ran when they apply, else Summarise of its run (the same
// figures either way).
func Of(o *sim.LabOutcome) Summary {
	if o.Counts != nil {
		return summary(o.Run, o.Counts)
	}
	return Summarise(o.Run)
}

// summary is run.py's summary from the counts c of r's arrivals.
func summary(r Run, c *sim.LabCounts) Summary {
	longTTFT, longBad, _ := r.Window()
	worst := c.Worst
	s := Summary{
		Label: r.Label, BaseURL: r.BaseURL, ShortConcurrency: r.ShortConcurrency,
		LongInputLen: r.LongInputLen, TokensObserved: c.N,
		WorstGap: worst.Gap, WorstGapOffset: worst.T - r.Inject,
		LongTTFT: longTTFT, LongFailed: len(longBad), Wall: r.Wall,
	}
	all := make([]sim.GapCount, 0, len(c.Quiet)+len(c.During)+len(c.After))
	all = append(append(append(all, c.Quiet...), c.During...), c.After...)
	s.ITLP50, s.ITLP90, s.ITLP99, s.ITLMax = sim.GapPercentiles(all)
	s.ITLQuietP50, _, s.ITLQuietP99, _ = sim.GapPercentiles(c.Quiet)
	s.ITLDuringP50, _, s.ITLDuringP99, s.ITLDuringMax = sim.GapPercentiles(c.During)
	_, _, s.ITLAfterP99, _ = sim.GapPercentiles(c.After)
	if s.ITLQuietP50 != 0 {
		s.SpikeRatio = s.WorstGap / s.ITLQuietP50
	}
	if len(longBad) > 0 {
		s.LongError = longBad[0].Error
	}
	for _, x := range r.Short {
		if x.OK {
			s.ShortCompleted++
		} else {
			s.ShortFailed++
		}
	}
	if r.Wall != 0 {
		s.OutputTokS = float64(c.N) / r.Wall
	}
	return s
}

// arrivalsSorted reports whether arr is in (t, gap) order with no NaN
// (where a sort's order of NaNs is its own).
func arrivalsSorted(arr []Arrival) bool {
	for i, a := range arr {
		if a.T != a.T || a.Gap != a.Gap {
			return false
		}
		if i > 0 {
			if p := arr[i-1]; a.T < p.T || (a.T == p.T && a.Gap < p.Gap) {
				return false
			}
		}
	}
	return true
}

// Config is the run's flags as run.py writes them under "config" (its
// argparse namespace minus --compare), in the script's key order: the
// workload's keys (LabWorkload, embedded) sit between label and warmup.
type Config struct {
	BaseURL string `json:"base_url"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	API     string `json:"api"` // "completions" or "chat"
	Model   string `json:"model"`
	Label   string `json:"label"`
	sim.LabWorkload
	Warmup    int     `json:"warmup"`
	IgnoreEOS bool    `json:"ignore_eos"`
	Timeout   float64 `json:"timeout"`
	JSON      string  `json:"json"`
	Seed      int     `json:"seed"`
}

// DefaultConfig is run.py's defaults (base URL from host and port).
func DefaultConfig() Config {
	return Config{BaseURL: "http://localhost:8000", Host: "localhost", Port: 8000, API: "completions",
		Label: "run", LabWorkload: sim.DefaultLab(),
		Warmup: 2, IgnoreEOS: true, Timeout: 900}
}

// Frame is one raw frame of any stream, short or long, first frames
// included: servelab's extra detail, which the script does not write.
type Frame struct {
	Stream     int     `json:"stream"` // request index in the run (order of sending)
	Long       bool    `json:"long,omitempty"`
	TRelInject float64 `json:"t_rel_inject"`
	Gap        float64 `json:"gap"`    // since the same stream's previous frame; 0 for its first
	Tokens     int     `json:"tokens"` // tokens the frame carried (from usage when sent, else 1)
	// ServerT is the send time a servelab lab server in self-test mode
	// stamps on the frame (seconds on its own clock), when it did.
	ServerT float64 `json:"server_t,omitempty"`
}

// Extra is what servelab adds under the "servelab" key; the script ignores it.
type Extra struct {
	Frames      []Frame        `json:"frames,omitempty"`
	Requests    []StreamResult `json:"requests,omitempty"` // every timed request, in sending order
	Warnings    []string       `json:"warnings,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"` // stopped early (Ctrl-C or a dead server): a partial run
}

// Measured is one measured-JSON file: {"config", "summary", "gaps"} as
// run.py writes them, plus servelab's optional "servelab" key.
type Measured struct {
	Config  Config  `json:"config"`
	Summary Summary `json:"summary"`
	Gaps    []Gap   `json:"gaps"`
	Extra   *Extra  `json:"servelab,omitempty"`
}

// Arrivals returns the gaps as arrivals on a clock whose zero is the
// injection (so a LabRun built from them has Inject 0).
func (m *Measured) Arrivals() []Arrival {
	out := make([]Arrival, len(m.Gaps))
	for i, g := range m.Gaps {
		out[i] = Arrival{T: g.TRelInject, Gap: g.Gap}
	}
	return out
}

// GapsFrom converts arrivals to the file's gaps relative to inject, sorted by time.
func GapsFrom(arrivals []Arrival, inject float64) []Gap {
	arr := slices.Clone(arrivals)
	slices.SortFunc(arr, func(a, b Arrival) int {
		if c := floats.Compare(a.T, b.T); c != 0 {
			return c
		}
		return floats.Compare(a.Gap, b.Gap)
	})
	out := make([]Gap, len(arr))
	for i, a := range arr {
		out[i] = Gap{TRelInject: a.T - inject, Gap: a.Gap}
	}
	return out
}

// summaryKeys lists the summary's keys in the script's order, with kinds:
// s string, i integer, f number.
var summaryKeys = []struct{ name, kind string }{
	{"label", "s"}, {"base_url", "s"}, {"short_concurrency", "i"}, {"long_input_len", "i"},
	{"tokens_observed", "i"}, {"itl_p50", "f"}, {"itl_p90", "f"}, {"itl_p99", "f"}, {"itl_max", "f"},
	{"itl_quiet_p50", "f"}, {"itl_quiet_p99", "f"}, {"itl_during_p50", "f"}, {"itl_during_p99", "f"},
	{"itl_during_max", "f"}, {"itl_after_p99", "f"}, {"worst_gap", "f"}, {"worst_gap_offset", "f"},
	{"spike_ratio", "f"}, {"long_ttft", "f"}, {"long_failed", "i"}, {"long_error", "s"},
	{"short_completed", "i"}, {"short_failed", "i"}, {"wall", "f"}, {"output_tok_s", "f"},
}

// MarshalJSON writes the script's keys in its order; an error summary is
// {"label", "error"} only.
func (s Summary) MarshalJSON() ([]byte, error) {
	if s.Error != "" {
		return json.Marshal(struct {
			Label string `json:"label"`
			Error string `json:"error"`
		}{s.Label, s.Error})
	}
	type plain Summary // no methods: the default encoding, in field order
	return json.Marshal(plain(s))
}

// UnmarshalJSON reads a summary, requiring every key the script writes (or
// label and error) with the right type, and names the first bad key.
func (s *Summary) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return sim.Refuse("field.object", "%s: want a JSON object", "summary")
	}
	var out Summary
	if e, ok := raw["error"]; ok && string(e) != "null" {
		if err := json.Unmarshal(e, &out.Error); err != nil {
			return sim.Refuse("field.string", "%s: want a string, got %s", "summary.error", jsonread.Clip(e))
		}
	}
	// An empty error is no error summary: the full set of keys is required.
	if out.Error != "" {
		if l, ok := raw["label"]; ok {
			if err := json.Unmarshal(l, &out.Label); err != nil {
				return sim.Refuse("field.string", "%s: want a string, got %s", "summary.label", jsonread.Clip(l))
			}
		}
		*s = out
		return nil
	}
	// Decode into a generic map of fields by name, then check each key.
	fields := map[string]any{}
	for _, k := range summaryKeys {
		v, ok := raw[k.name]
		if !ok {
			return sim.Refuse("field.missing", "%s: missing", "summary."+k.name)
		}
		switch k.kind {
		case "s":
			var x string
			if err := json.Unmarshal(v, &x); err != nil {
				return sim.Refuse("field.string", "%s: want a string, got %s", "summary."+k.name, jsonread.Clip(v))
			}
			fields[k.name] = x
		case "i", "f":
			var x float64
			if err := json.Unmarshal(v, &x); err != nil {
				return sim.Refuse("field.number", "%s: want a number, got %s", "summary."+k.name, jsonread.Clip(v))
			}
			if k.kind == "i" && (x != math.Trunc(x) || math.Abs(x) > 1<<53) {
				return sim.Refuse("field.integer", "%s: want an integer, got %s", "summary."+k.name, jsonread.Clip(v))
			}
			fields[k.name] = x
		}
	}
	str := func(k string) string { return fields[k].(string) }
	num := func(k string) float64 { return fields[k].(float64) }
	integer := func(k string) int { return int(num(k)) }
	*s = Summary{
		Label: str("label"), BaseURL: str("base_url"), ShortConcurrency: integer("short_concurrency"),
		LongInputLen: integer("long_input_len"), TokensObserved: integer("tokens_observed"),
		ITLP50: num("itl_p50"), ITLP90: num("itl_p90"), ITLP99: num("itl_p99"), ITLMax: num("itl_max"),
		ITLQuietP50: num("itl_quiet_p50"), ITLQuietP99: num("itl_quiet_p99"),
		ITLDuringP50: num("itl_during_p50"), ITLDuringP99: num("itl_during_p99"), ITLDuringMax: num("itl_during_max"),
		ITLAfterP99: num("itl_after_p99"), WorstGap: num("worst_gap"), WorstGapOffset: num("worst_gap_offset"),
		SpikeRatio: num("spike_ratio"), LongTTFT: num("long_ttft"), LongFailed: integer("long_failed"),
		LongError: str("long_error"), ShortCompleted: integer("short_completed"), ShortFailed: integer("short_failed"),
		Wall: num("wall"), OutputTokS: num("output_tok_s"),
	}
	return nil
}

// Read reads a measured-JSON file written by run.py or servelab.
// "summary" is required; "config" and "gaps" are checked when present.
// Errors name the bad field. Python's NaN and Infinity literals are
// rejected with an error saying so.
func Read(r io.Reader) (*Measured, error) {
	data, err := io.ReadAll(io.LimitReader(r, jsonread.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > jsonread.MaxBytes {
		return nil, sim.Refuse("lab.err.size", "measured JSON larger than %d bytes", jsonread.MaxBytes)
	}
	data = bytes.TrimPrefix(data, jsonread.BOM) // as ReadTrace does
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		if bytes.Contains(data, []byte("NaN")) || bytes.Contains(data, []byte("Infinity")) {
			return nil, sim.Refuse("lab.err.nan", "not valid JSON (it holds NaN or Infinity, which JSON does not allow): %v", err)
		}
		return nil, sim.Refuse("lab.err.notjson", "not a measured-JSON file: %v", err)
	}
	if raw == nil {
		return nil, sim.Refuse("lab.err.notobject", "not a measured-JSON file: want a JSON object")
	}
	m := &Measured{}
	sum, ok := raw["summary"]
	if !ok {
		return nil, sim.Refuse("lab.err.nosummary", "summary: missing (is this a run.py or servelab measure file?)")
	}
	if err := json.Unmarshal(sum, &m.Summary); err != nil {
		return nil, jsonread.FieldError(err, "summary")
	}
	if c, ok := raw["config"]; ok {
		if err := json.Unmarshal(c, &m.Config); err != nil {
			return nil, jsonread.FieldError(err, "config")
		}
	}
	if g, ok := raw["gaps"]; ok {
		if err := json.Unmarshal(g, &m.Gaps); err != nil {
			return nil, jsonread.FieldError(err, "gaps")
		}
	}
	if x, ok := raw["servelab"]; ok && string(x) != "null" {
		m.Extra = &Extra{}
		if err := json.Unmarshal(x, m.Extra); err != nil {
			return nil, jsonread.FieldError(err, "servelab")
		}
	}
	if m.Gaps == nil {
		m.Gaps = []Gap{} // absent and empty read alike
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// check rejects values no run can produce, naming the field.
func (m *Measured) check() error {
	s := &m.Summary
	if s.Error != "" {
		return nil
	}
	nonNeg := []struct {
		name string
		v    float64
	}{
		{"short_concurrency", float64(s.ShortConcurrency)}, {"long_input_len", float64(s.LongInputLen)},
		{"tokens_observed", float64(s.TokensObserved)}, {"itl_p50", s.ITLP50}, {"itl_p90", s.ITLP90},
		{"itl_p99", s.ITLP99}, {"itl_max", s.ITLMax}, {"itl_quiet_p50", s.ITLQuietP50},
		{"itl_quiet_p99", s.ITLQuietP99}, {"itl_during_p50", s.ITLDuringP50}, {"itl_during_p99", s.ITLDuringP99},
		{"itl_during_max", s.ITLDuringMax}, {"itl_after_p99", s.ITLAfterP99}, {"worst_gap", s.WorstGap},
		{"spike_ratio", s.SpikeRatio}, {"long_ttft", s.LongTTFT}, {"long_failed", float64(s.LongFailed)},
		{"short_completed", float64(s.ShortCompleted)}, {"short_failed", float64(s.ShortFailed)},
		{"wall", s.Wall}, {"output_tok_s", s.OutputTokS},
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return sim.Refuse("field.negative", "%s: must not be negative, got %g", "summary."+f.name, f.v)
		}
	}
	for i, g := range m.Gaps {
		if g.Gap < 0 || g.Gap > jsonread.MaxSeconds {
			return sim.Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", fmt.Sprintf("gaps[%d].gap", i), jsonread.MaxSeconds, g.Gap)
		}
	}
	return nil
}

// maxWriteBytes is the largest file Write writes: what Read accepts, so
// that servelab never writes a file its own readers refuse.
var maxWriteBytes = jsonread.MaxBytes

// minGapBytes is the least a gap takes in the written file (two-space
// indent, two keys, the shortest numbers), for refusing before marshalling.
const minGapBytes = 50

// Write writes m as run.py does (two-space indent, the script's
// keys and order), with servelab's extra key last when present. It refuses
// non-finite numbers, which JSON cannot carry, naming the field. A file
// that would pass the size Read accepts (jsonread.MaxBytes) is kept
// under it: servelab's raw frames, then its per-request results, are left
// out (a warning in the file says so); when the summary and gaps alone
// are too large it returns an error and writes nothing.
func Write(w io.Writer, m *Measured) error {
	if err := m.finite(); err != nil {
		return err
	}
	if n := len(m.Gaps); n > maxWriteBytes/minGapBytes {
		return tooLarge(fmt.Sprintf("its %d gaps alone pass", n))
	}
	gaps := m.Gaps
	if gaps == nil {
		gaps = []Gap{} // the script writes [] rather than null
	}
	out := *m
	out.Gaps = gaps
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	for len(b)+1 > maxWriteBytes && out.Extra != nil {
		x := *out.Extra
		left := ""
		switch {
		case len(x.Frames) > 0:
			x.Frames, left = nil, "the raw frames were"
		case len(x.Requests) > 0:
			x.Requests, left = nil, "the per-request results were"
		}
		if left == "" {
			break
		}
		x.Warnings = append(slices.Clone(x.Warnings), fmt.Sprintf("%s left out: with them this file would be %d bytes, over the %d servelab's readers accept", left, len(b)+1, maxWriteBytes))
		out.Extra = &x
		if b, err = json.MarshalIndent(&out, "", "  "); err != nil {
			return err
		}
	}
	if len(b)+1 > maxWriteBytes {
		return tooLarge(fmt.Sprintf("it would be %d bytes, over", len(b)+1))
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// tooLarge is Write's refusal of a run whose file would pass the readers'
// limit; what says by how much.
func tooLarge(what string) error {
	return fmt.Errorf("the run is too large to save as measured JSON: %s the %d MiB servelab's readers accept (shorten --duration or use fewer streams)", what, maxWriteBytes>>20)
}

func (m *Measured) finite() error {
	s := &m.Summary
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"summary.itl_p50", s.ITLP50}, {"summary.itl_p90", s.ITLP90}, {"summary.itl_p99", s.ITLP99},
		{"summary.itl_max", s.ITLMax}, {"summary.itl_quiet_p50", s.ITLQuietP50}, {"summary.itl_quiet_p99", s.ITLQuietP99},
		{"summary.itl_during_p50", s.ITLDuringP50}, {"summary.itl_during_p99", s.ITLDuringP99},
		{"summary.itl_during_max", s.ITLDuringMax}, {"summary.itl_after_p99", s.ITLAfterP99},
		{"summary.worst_gap", s.WorstGap}, {"summary.worst_gap_offset", s.WorstGapOffset},
		{"summary.spike_ratio", s.SpikeRatio}, {"summary.long_ttft", s.LongTTFT}, {"summary.wall", s.Wall},
		{"summary.output_tok_s", s.OutputTokS}, {"config.duration", m.Config.Duration},
		{"config.inject_after", m.Config.InjectAfter}, {"config.timeout", m.Config.Timeout},
	} {
		if !finite(f.v) {
			return sim.Refuse("field.nonfinite", "%s: %g cannot be written as JSON", f.name, f.v)
		}
	}
	for i, g := range m.Gaps {
		if !finite(g.TRelInject) || !finite(g.Gap) {
			return sim.Refuse("field.nonfinites", "%s: non-finite value cannot be written as JSON", fmt.Sprintf("gaps[%d]", i))
		}
	}
	if m.Extra != nil {
		for i, f := range m.Extra.Frames {
			if !finite(f.TRelInject) || !finite(f.Gap) || !finite(f.ServerT) {
				return sim.Refuse("field.nonfinites", "%s: non-finite value cannot be written as JSON", fmt.Sprintf("servelab.frames[%d]", i))
			}
		}
		for i, r := range m.Extra.Requests {
			if !finite(r.TTFT) || !finite(r.Latency) {
				return sim.Refuse("field.nonfinites", "%s: non-finite value cannot be written as JSON", fmt.Sprintf("servelab.requests[%d]", i))
			}
		}
	}
	return nil
}

// finite reports whether v is a number (not NaN nor infinite).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
