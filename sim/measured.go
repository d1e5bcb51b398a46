package sim

// The measured JSON: the lab script's (run.py) file format, read and written
// by both the script and servelab, and the one analysis both compute from a
// stream of token arrivals.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
)

// Arrival is one timed token frame of a short stream after that stream's
// first: T is when it arrived (seconds, on the same clock as LabRun.Inject;
// any origin) and Gap the seconds since the same stream's previous frame.
type Arrival struct {
	T   float64 `json:"t"`
	Gap float64 `json:"gap"`
}

// StreamResult is one streamed request as a client saw it (run.py's
// per-request dict). TTFT is seconds from sending to the first content
// frame; Latency to the end of the stream.
type StreamResult struct {
	OK      bool    `json:"ok"`
	TTFT    float64 `json:"ttft"`
	Latency float64 `json:"latency"`
	Chunks  int     `json:"chunks"`           // frames that carried output
	Tokens  int     `json:"tokens,omitempty"` // output tokens (server's usage when sent, else Chunks)
	Error   string  `json:"error,omitempty"`
}

// LabRun is the input of the lab analysis: everything run.py's summarise
// reads. A simulated lab workload builds one from engine results just as the
// measuring client builds one from the wire.
type LabRun struct {
	Label            string         // run name (--label)
	BaseURL          string         // server measured
	ShortConcurrency int            // short streams kept in flight
	LongInputLen     int            // long prompt length asked for
	Inject           float64        // when the long prompt(s) were sent, on the Arrivals' clock
	Arrivals         []Arrival      // every short-stream frame after each stream's first, any order
	Long             []StreamResult // the injected long requests, in completion order
	Short            []StreamResult // every short request of the timed run
	Wall             float64        // seconds from the start of load to the end of the last request
}

// LabSummary is run.py's summary, key for key. When Error is set (no token
// arrivals were recorded) only Label and Error are meaningful and only those
// two keys are written, as the script does.
type LabSummary struct {
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

// SummariseLab is run.py's summarise: ITL percentiles over the whole run and
// over three windows — quiet (before injection), during (from injection until
// the first successful long request's first token; to the end when none
// succeeded) and after — plus the worst gap and where it fell. Percentiles are
// Percentile's nearest rank, as the script's pct.
func SummariseLab(r LabRun) LabSummary {
	if len(r.Arrivals) == 0 {
		return LabSummary{Label: r.Label, Error: "no token arrivals recorded"}
	}
	arr := r.Arrivals
	// The script sorts (t, gap) tuples; the same order makes ties pick the
	// same worst gap. A simulated run records them in that order already
	// (a comparison sort through a function is slow in the browser's wasm).
	if !arrivalsSorted(arr) {
		arr = slices.Clone(arr)
		slices.SortFunc(arr, func(a, b Arrival) int {
			if c := cmpFloat(a.T, b.T); c != 0 {
				return c
			}
			return cmpFloat(a.Gap, b.Gap)
		})
	}
	longTTFT, longBad, windowEnd := labWindow(r)
	var c labCounts
	for _, a := range arr {
		c.addRun(a, 1, c.window(a.T, r.Inject, windowEnd))
	}
	return c.summary(r, longTTFT, longBad)
}

// labWindow is what the analysis's windows rest on: the TTFT of the first
// long request that succeeded (0: none did), the long requests that
// failed, and the end of the during window (+Inf when none succeeded).
func labWindow(r LabRun) (ttft float64, bad []StreamResult, end float64) {
	haveOK := false
	for _, l := range r.Long {
		if l.OK {
			if !haveOK {
				ttft, haveOK = l.TTFT, true
			}
		} else {
			bad = append(bad, l)
		}
	}
	end = math.Inf(1)
	if ttft != 0 {
		end = r.Inject + ttft
	}
	return ttft, bad, end
}

// labCounts is the lab analysis's pass over the arrivals in (time, gap)
// order: the gaps counted by value in each window (the whole run is the
// three together), merging repeats in a row (one step's streams share a
// gap), so that GapPercentiles gives Percentile's figures without sorting
// every gap; and the worst gap.
type labCounts struct {
	quiet, during, after []GapCount
	worst                Arrival
	n                    int
}

// window is the counts an arrival at t goes to: before the injection,
// until the window's end (inclusive), or after.
func (c *labCounts) window(t, inject, end float64) *[]GapCount {
	switch {
	case t < inject:
		return &c.quiet
	case t <= end:
		return &c.during
	}
	return &c.after
}

// addRun counts n arrivals of a's gap, a the first of them, in win.
func (c *labCounts) addRun(a Arrival, n int, win *[]GapCount) {
	if c.n == 0 || a.Gap > c.worst.Gap {
		c.worst = a // strictly greater: the first maximum wins, as Python's max
	}
	c.n += n
	*win = addGaps(*win, a.Gap, n)
}

// summary is run.py's summary from the counts of r's arrivals.
func (c *labCounts) summary(r LabRun, longTTFT float64, longBad []StreamResult) LabSummary {
	worst := c.worst
	s := LabSummary{
		Label: r.Label, BaseURL: r.BaseURL, ShortConcurrency: r.ShortConcurrency,
		LongInputLen: r.LongInputLen, TokensObserved: c.n,
		WorstGap: worst.Gap, WorstGapOffset: worst.T - r.Inject,
		LongTTFT: longTTFT, LongFailed: len(longBad), Wall: r.Wall,
	}
	all := make([]GapCount, 0, len(c.quiet)+len(c.during)+len(c.after))
	all = append(append(append(all, c.quiet...), c.during...), c.after...)
	s.ITLP50, s.ITLP90, s.ITLP99, s.ITLMax = GapPercentiles(all)
	s.ITLQuietP50, _, s.ITLQuietP99, _ = GapPercentiles(c.quiet)
	s.ITLDuringP50, _, s.ITLDuringP99, s.ITLDuringMax = GapPercentiles(c.during)
	_, _, s.ITLAfterP99, _ = GapPercentiles(c.after)
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
		s.OutputTokS = float64(c.n) / r.Wall
	}
	return s
}

// addGaps counts n gaps of g.
func addGaps(cs []GapCount, g float64, n int) []GapCount {
	if k := len(cs); k > 0 && cs[k-1].Gap == g {
		cs[k-1].N += n
		return cs
	}
	return append(cs, GapCount{Gap: g, N: n})
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

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LabConfig is the run's flags as run.py writes them under "config" (its
// argparse namespace minus --compare), in the script's key order: the
// workload's keys (LabWorkload, embedded) sit between label and warmup.
type LabConfig struct {
	BaseURL string `json:"base_url"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	API     string `json:"api"` // "completions" or "chat"
	Model   string `json:"model"`
	Label   string `json:"label"`
	LabWorkload
	Warmup    int     `json:"warmup"`
	IgnoreEOS bool    `json:"ignore_eos"`
	Timeout   float64 `json:"timeout"`
	JSON      string  `json:"json"`
	Seed      int     `json:"seed"`
}

// DefaultLabConfig is run.py's defaults (base URL from host and port).
func DefaultLabConfig() LabConfig {
	return LabConfig{BaseURL: "http://localhost:8000", Host: "localhost", Port: 8000, API: "completions",
		Label: "run", LabWorkload: LabWorkload{ShortConcurrency: 16, ShortInputLen: 128, ShortOutputLen: 256,
			LongInputLen: 32000, LongOutputLen: 16, LongCount: 1, Duration: 60, InjectAfter: 20},
		Warmup: 2, IgnoreEOS: true, Timeout: 900}
}

// Gap is one entry of the measured JSON's "gaps": an Arrival with its time
// taken relative to the injection.
type Gap struct {
	TRelInject float64 `json:"t_rel_inject"`
	Gap        float64 `json:"gap"`
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
	Config  LabConfig  `json:"config"`
	Summary LabSummary `json:"summary"`
	Gaps    []Gap      `json:"gaps"`
	Extra   *Extra     `json:"servelab,omitempty"`
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
		if c := cmpFloat(a.T, b.T); c != 0 {
			return c
		}
		return cmpFloat(a.Gap, b.Gap)
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
func (s LabSummary) MarshalJSON() ([]byte, error) {
	if s.Error != "" {
		return json.Marshal(struct {
			Label string `json:"label"`
			Error string `json:"error"`
		}{s.Label, s.Error})
	}
	type plain LabSummary // no methods: the default encoding, in field order
	return json.Marshal(plain(s))
}

// UnmarshalJSON reads a summary, requiring every key the script writes (or
// label and error) with the right type, and names the first bad key.
func (s *LabSummary) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return Refuse("field.object", "%s: want a JSON object", "summary")
	}
	var out LabSummary
	if e, ok := raw["error"]; ok && string(e) != "null" {
		if err := json.Unmarshal(e, &out.Error); err != nil {
			return Refuse("field.string", "%s: want a string, got %s", "summary.error", clip(e))
		}
	}
	// An empty error is no error summary: the full set of keys is required.
	if out.Error != "" {
		if l, ok := raw["label"]; ok {
			if err := json.Unmarshal(l, &out.Label); err != nil {
				return Refuse("field.string", "%s: want a string, got %s", "summary.label", clip(l))
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
			return Refuse("field.missing", "%s: missing", "summary."+k.name)
		}
		switch k.kind {
		case "s":
			var x string
			if err := json.Unmarshal(v, &x); err != nil {
				return Refuse("field.string", "%s: want a string, got %s", "summary."+k.name, clip(v))
			}
			fields[k.name] = x
		case "i", "f":
			var x float64
			if err := json.Unmarshal(v, &x); err != nil {
				return Refuse("field.number", "%s: want a number, got %s", "summary."+k.name, clip(v))
			}
			if k.kind == "i" && (x != math.Trunc(x) || math.Abs(x) > 1<<53) {
				return Refuse("field.integer", "%s: want an integer, got %s", "summary."+k.name, clip(v))
			}
			fields[k.name] = x
		}
	}
	str := func(k string) string { return fields[k].(string) }
	num := func(k string) float64 { return fields[k].(float64) }
	integer := func(k string) int { return int(num(k)) }
	*s = LabSummary{
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

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// MaxMeasuredBytes bounds what ReadMeasured and ReadVLLMBench accept.
const MaxMeasuredBytes = 256 << 20

// MaxMeasuredSeconds bounds any one time in a measured file (a gap, a TTFT,
// a run's duration): 11.6 days, beyond any benchmark, and small enough that
// sums and means of them stay finite (1e308 made TPOT +Inf).
const MaxMeasuredSeconds = 1e6

// utf8BOM starts files some Windows editors save; encoding/json refuses it.
var utf8BOM = []byte("\xef\xbb\xbf")

// ReadMeasured reads a measured-JSON file written by run.py or servelab.
// "summary" is required; "config" and "gaps" are checked when present.
// Errors name the bad field. Python's NaN and Infinity literals are
// rejected with an error saying so.
func ReadMeasured(r io.Reader) (*Measured, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxMeasuredBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxMeasuredBytes {
		return nil, Refuse("lab.err.size", "measured JSON larger than %d bytes", MaxMeasuredBytes)
	}
	data = bytes.TrimPrefix(data, utf8BOM) // as ReadTrace does
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		if bytes.Contains(data, []byte("NaN")) || bytes.Contains(data, []byte("Infinity")) {
			return nil, Refuse("lab.err.nan", "not valid JSON (it holds NaN or Infinity, which JSON does not allow): %v", err)
		}
		return nil, Refuse("lab.err.notjson", "not a measured-JSON file: %v", err)
	}
	if raw == nil {
		return nil, Refuse("lab.err.notobject", "not a measured-JSON file: want a JSON object")
	}
	m := &Measured{}
	sum, ok := raw["summary"]
	if !ok {
		return nil, Refuse("lab.err.nosummary", "summary: missing (is this a run.py or servelab measure file?)")
	}
	if err := json.Unmarshal(sum, &m.Summary); err != nil {
		return nil, unwrapJSON(err, "summary")
	}
	if c, ok := raw["config"]; ok {
		if err := json.Unmarshal(c, &m.Config); err != nil {
			return nil, unwrapJSON(err, "config")
		}
	}
	if g, ok := raw["gaps"]; ok {
		if err := json.Unmarshal(g, &m.Gaps); err != nil {
			return nil, unwrapJSON(err, "gaps")
		}
	}
	if x, ok := raw["servelab"]; ok && string(x) != "null" {
		m.Extra = &Extra{}
		if err := json.Unmarshal(x, m.Extra); err != nil {
			return nil, unwrapJSON(err, "servelab")
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

// unwrapJSON turns encoding/json's errors into ones that name the field.
func unwrapJSON(err error, where string) error {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		f := te.Field
		if f == "" {
			return Refuse("field.type", "%s: want %s, got %s", where, goType(te.Type), jsonValue(te.Value))
		}
		return Refuse("field.type", "%s: want %s, got %s", where+"."+f, goType(te.Type), jsonValue(te.Value))
	}
	if strings.HasPrefix(err.Error(), where) {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// goType is the Go type a JSON value was to fill, as a note keyed by its
// kind (a page names the kind; the English is the type, as encoding/json
// writes it).
func goType(t reflect.Type) Note {
	name := fmt.Sprint(t)
	if t == nil {
		return Say("json.other", "%s", name)
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Say("type.int", "%s", name)
	case reflect.Float32, reflect.Float64:
		return Say("type.number", "%s", name)
	case reflect.String:
		return Say("type.string", "%s", name)
	case reflect.Bool:
		return Say("type.bool", "%s", name)
	case reflect.Slice, reflect.Array:
		return Say("type.list", "%s", name)
	case reflect.Struct, reflect.Map:
		return Say("type.object", "%s", name)
	}
	return Say("json.other", "%s", name)
}

// jsonValue is encoding/json's name of the value it found ("string",
// "number 1.5") as a note keyed by the value's kind.
func jsonValue(v string) Note {
	switch {
	case v == "string":
		return Say("json.string", "string")
	case v == "number":
		return Say("json.number", "number")
	case strings.HasPrefix(v, "number "):
		return Say("json.numlit", "number %s", strings.TrimPrefix(v, "number "))
	case v == "object":
		return Say("json.object", "object")
	case v == "array":
		return Say("json.array", "array")
	case v == "bool":
		return Say("json.bool", "bool")
	}
	return Say("json.other", "%s", v)
}

func asType(err error, te **json.UnmarshalTypeError) bool {
	for err != nil {
		if t, ok := err.(*json.UnmarshalTypeError); ok {
			*te = t
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
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
			return Refuse("field.negative", "%s: must not be negative, got %g", "summary."+f.name, f.v)
		}
	}
	for i, g := range m.Gaps {
		if g.Gap < 0 || g.Gap > MaxMeasuredSeconds {
			return Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", fmt.Sprintf("gaps[%d].gap", i), MaxMeasuredSeconds, g.Gap)
		}
	}
	return nil
}

// WriteMeasured writes m as run.py does (two-space indent, the script's
// keys and order), with servelab's extra key last when present. It refuses
// non-finite numbers, which JSON cannot carry, naming the field.
func WriteMeasured(w io.Writer, m *Measured) error {
	if err := m.finite(); err != nil {
		return err
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
	_, err = w.Write(append(b, '\n'))
	return err
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
			return Refuse("field.nonfinite", "%s: %g cannot be written as JSON", f.name, f.v)
		}
	}
	for i, g := range m.Gaps {
		if !finite(g.TRelInject) || !finite(g.Gap) {
			return Refuse("field.nonfinites", "%s: non-finite value cannot be written as JSON", fmt.Sprintf("gaps[%d]", i))
		}
	}
	if m.Extra != nil {
		for i, f := range m.Extra.Frames {
			if !finite(f.TRelInject) || !finite(f.Gap) || !finite(f.ServerT) {
				return Refuse("field.nonfinites", "%s: non-finite value cannot be written as JSON", fmt.Sprintf("servelab.frames[%d]", i))
			}
		}
		for i, r := range m.Extra.Requests {
			if !finite(r.TTFT) || !finite(r.Latency) {
				return Refuse("field.nonfinites", "%s: non-finite value cannot be written as JSON", fmt.Sprintf("servelab.requests[%d]", i))
			}
		}
	}
	return nil
}

// VLLMBench is the per-request part of a `vllm bench serve --save-result`
// file (vLLM writes the arrays only with --save-detailed in newer releases).
// Times are in seconds, as vLLM stores them.
type VLLMBench struct {
	Backend    string      `json:"backend"`
	ModelID    string      `json:"model_id"`
	Duration   float64     `json:"duration"`
	Completed  int         `json:"completed"`
	InputLens  []int       `json:"input_lens"`
	OutputLens []int       `json:"output_lens"`
	TTFTs      []float64   `json:"ttfts"`
	ITLs       [][]float64 `json:"itls"` // per request, every gap between its tokens
	Errors     []string    `json:"errors"`
}

// ReadVLLMBench reads a vLLM benchmark result and checks that its per-request
// arrays are present and agree in length, naming the bad field.
func ReadVLLMBench(r io.Reader) (*VLLMBench, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxMeasuredBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxMeasuredBytes {
		return nil, Refuse("vllm.err.size", "vLLM result larger than %d bytes", MaxMeasuredBytes)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		if err == nil {
			err = Refuse("value.object", "want a JSON object")
		}
		return nil, Refuse("vllm.err.notresult", "not a vLLM bench result: %v", err)
	}
	return vllmBench(raw, nil)
}

// vllmBench is ReadVLLMBench of the file's object (pre: the arrays read
// already, in slices).
func vllmBench(raw map[string]json.RawMessage, pre *preRead) (*VLLMBench, error) {
	if _, ok := raw["itls"]; !ok {
		return nil, Refuse("vllm.err.noitls", "itls: missing; vLLM writes per-request arrays with `vllm bench serve --save-result --save-detailed`")
	}
	b := &VLLMBench{}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"backend", &b.Backend}, {"model_id", &b.ModelID}, {"duration", &b.Duration},
		{"completed", &b.Completed}, {"input_lens", &b.InputLens}, {"output_lens", &b.OutputLens},
		{"ttfts", &b.TTFTs}, {"itls", &b.ITLs}, {"errors", &b.Errors},
	} {
		if err := decodeKeysPre(raw, pre, "", map[string]any{f.key: f.dst}); err != nil {
			return nil, err
		}
	}
	n := len(b.ITLs)
	for _, f := range []struct {
		key string
		n   int
	}{{"ttfts", len(b.TTFTs)}, {"input_lens", len(b.InputLens)}, {"output_lens", len(b.OutputLens)}, {"errors", len(b.Errors)}} {
		if f.n != 0 && f.n != n {
			return nil, Refuse("bench.err.count", "%s: %d entries but itls has %d", f.key, f.n, n)
		}
	}
	for i, xs := range b.ITLs {
		if err := pre.ticker().add(1+len(xs), 1); err != nil {
			return nil, err
		}
		for j, x := range xs {
			if !(x >= 0 && x <= MaxMeasuredSeconds) {
				return nil, Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", fmt.Sprintf("itls[%d][%d]", i, j), MaxMeasuredSeconds, x)
			}
		}
	}
	for i, x := range b.TTFTs {
		if !(x >= 0 && x <= MaxMeasuredSeconds) {
			return nil, Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", fmt.Sprintf("ttfts[%d]", i), MaxMeasuredSeconds, x)
		}
	}
	if !(b.Duration >= 0 && b.Duration <= MaxMeasuredSeconds) {
		return nil, Refuse("field.seconds", "%s: must be a number of seconds in [0, %g], got %g", "duration", MaxMeasuredSeconds, b.Duration)
	}
	return b, nil
}

// AllITLs returns every inter-token gap of the successful requests.
func (b *VLLMBench) AllITLs() []float64 {
	var out []float64
	for i, xs := range b.ITLs {
		if i < len(b.Errors) && b.Errors[i] != "" {
			continue
		}
		out = append(out, xs...)
	}
	return out
}
