package lab

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"servelab/sim"
	"servelab/sim/results"
	"strings"
	"testing"
)

// goldenCase is one file of testdata/labsummary: a run and the summary that
// run.py's own summarise computed for it (see gen.py there).
type goldenCase struct {
	Run struct {
		Label            string         `json:"label"`
		BaseURL          string         `json:"base_url"`
		ShortConcurrency int            `json:"short_concurrency"`
		LongInputLen     int            `json:"long_input_len"`
		Inject           float64        `json:"inject"`
		Arrivals         []Arrival      `json:"arrivals"`
		Long             []StreamResult `json:"long"`
		Short            []StreamResult `json:"short"`
		Wall             float64        `json:"wall"`
	} `json:"run"`
	Want json.RawMessage `json:"want"`
}

func TestSummariseLabMatchesScript(t *testing.T) {
	files, _ := filepath.Glob("testdata/labsummary/*.json")
	if len(files) < 5 {
		t.Fatalf("golden cases missing: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c goldenCase
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			r := c.Run
			got := Summarise(Run{Label: r.Label, BaseURL: r.BaseURL, ShortConcurrency: r.ShortConcurrency,
				LongInputLen: r.LongInputLen, Inject: r.Inject, Arrivals: r.Arrivals, Long: r.Long, Short: r.Short, Wall: r.Wall})
			var want Summary
			if err := json.Unmarshal(c.Want, &want); err != nil {
				t.Fatalf("golden summary: %v", err)
			}
			if got != want {
				t.Errorf("summary differs from run.py's\n got %+v\nwant %+v", got, want)
			}
			// The encoding has exactly the script's keys, in its order.
			enc, _ := json.Marshal(got)
			if k1, k2 := keyOrder(t, enc), keyOrder(t, c.Want); !reflect.DeepEqual(k1, k2) {
				t.Errorf("keys %v, script writes %v", k1, k2)
			}
		})
	}
}

// keyOrder lists a JSON object's keys in document order.
func keyOrder(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestSummariseLabDoesNotModifyInput(t *testing.T) {
	arr := []Arrival{{T: 3, Gap: 0.3}, {T: 1, Gap: 0.1}, {T: 2, Gap: 0.2}}
	Summarise(Run{Arrivals: arr, Inject: 2, Wall: 1})
	if arr[0].T != 3 || arr[1].T != 1 {
		t.Errorf("input reordered: %v", arr)
	}
}

func sampleMeasured() *Measured {
	arr := []Arrival{{T: 0.1, Gap: 0.01}, {T: 0.2, Gap: 0.012}, {T: 0.55, Gap: 0.3}, {T: 0.6, Gap: 0.011}, {T: 0.9, Gap: 0.01}}
	run := Run{Label: "chunked", BaseURL: "http://127.0.0.1:8000", ShortConcurrency: 2, LongInputLen: 4000,
		Inject: 0.5, Arrivals: arr, Long: []StreamResult{{OK: true, TTFT: 0.08, Chunks: 16}},
		Short: []StreamResult{{OK: true, Chunks: 8}, {OK: false, Error: "boom"}}, Wall: 1}
	cfg := DefaultConfig()
	cfg.Label, cfg.JSON = "chunked", "out.json"
	return &Measured{Config: cfg, Summary: Summarise(run), Gaps: GapsFrom(arr, run.Inject),
		Extra: &Extra{Frames: []Frame{{Stream: 0, TRelInject: -0.4, Tokens: 1}}, Warnings: []string{"w"}}}
}

func TestMeasuredRoundTrip(t *testing.T) {
	m := sampleMeasured()
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	if k := keyOrder(t, buf.Bytes()); !reflect.DeepEqual(k, []string{"config", "summary", "gaps", "servelab"}) {
		t.Errorf("top-level keys %v", k)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("round trip changed the file:\n got %+v\nwant %+v", got, m)
	}
	// Rebuilding the run from the file gives the same summary.
	s := Summarise(Run{Label: got.Summary.Label, BaseURL: got.Summary.BaseURL, ShortConcurrency: 2,
		LongInputLen: 4000, Inject: 0, Arrivals: got.Arrivals(), Long: []StreamResult{{OK: true, TTFT: 0.08}},
		Short: []StreamResult{{OK: true}, {OK: false, Error: "boom"}}, Wall: 1})
	if math.Abs(s.WorstGapOffset-m.Summary.WorstGapOffset) > 1e-12 || s.ITLDuringP99 != m.Summary.ITLDuringP99 {
		t.Errorf("summary from file %+v, original %+v", s, m.Summary)
	}
}

func TestMeasuredErrorSummary(t *testing.T) {
	m := &Measured{Config: DefaultConfig(), Summary: Summarise(Run{Label: "x"})}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"summary": {
    "label": "x",
    "error": "no token arrivals recorded"
  }`) || !strings.Contains(buf.String(), `"gaps": []`) {
		t.Errorf("error summary written as\n%s", buf.String())
	}
	got, err := Read(&buf)
	if err != nil || got.Summary.Error == "" {
		t.Fatalf("read back: %v %+v", err, got)
	}
}

func TestReadMeasuredNamesBadField(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleMeasured()); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for _, c := range []struct{ old, new, want string }{
		{`"itl_p99": `, `"itl_p99x": `, "summary.itl_p99: missing"},
		{`"label": "chunked",
    "base_url"`, `"label": 3,
    "base_url"`, "summary.label: want a string"},
		{`"short_failed": 1`, `"short_failed": 1.5`, "summary.short_failed: want an integer"},
		{`"wall": 1,`, `"wall": -1,`, "summary.wall: must not be negative"},
		{`"port": 8000`, `"port": "8000"`, "config.port"},
		{`"t_rel_inject": -0.4`, `"t_rel_inject": "x"`, "gaps"},
		{`"summary": {`, `"summery": {`, "summary: missing"},
		{`"wall": 1,`, `"wall": NaN,`, "NaN or Infinity"},
		{`"tokens": 1`, `"tokens": "one"`, "servelab.frames"},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Fatalf("case %q did not apply", c.old)
		}
		_, err := Read(strings.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: error %v, want it to mention %q", c.old, c.new, err, c.want)
		}
		checkKeyed(t, c.new, err)
	}
	for _, junk := range []string{"", "null", "[]", "{}", `{"summary": null}`, `{"summary": []}`} {
		_, err := Read(strings.NewReader(junk))
		if err == nil {
			t.Errorf("%q accepted", junk)
		}
		checkKeyed(t, junk, err)
	}
}

// checkKeyed fails unless err is a keyed note (a page says it in its
// language) whose English is the whole message, and every error it says
// more of that the readers wrote is keyed too (encoding/json's own
// errors, of a file that is no JSON object at all, are not theirs).
func checkKeyed(t *testing.T, what string, err error) {
	t.Helper()
	var ne *sim.NoteError
	if err == nil || !errors.As(err, &ne) || ne.Note.Key == "" || err.Error() != ne.Note.Text {
		t.Errorf("%s: error %v is not a keyed note (%+v)", what, err, ne)
		return
	}
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if _, ok := e.(*sim.NoteError); !ok && !errors.As(e, &se) && !errors.As(e, &te) && errors.Unwrap(e) == nil {
			t.Errorf("%s: %q says more with an unkeyed error %q", what, err, e)
		}
	}
}

// The vLLM reader's refusals and a writer's are keyed notes as the lab
// reader's are, with the field's path as an argument.
func TestMeasuredRefusalsHaveKeys(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`null`, "not a vLLM bench result: want a JSON object"},
		{`{"ttfts": [0.1]}`, "itls: missing; vLLM writes per-request arrays with `vllm bench serve --save-result --save-detailed`"},
		{`{"itls": [[0.1]], "ttfts": [0.1, 0.2]}`, "ttfts: 2 entries but itls has 1"},
		{`{"itls": [[0.1, -2]]}`, "itls[0][1]: must be a number of seconds in [0, 1e+06], got -2"},
		{`{"itls": [[0.1]], "ttfts": [-1]}`, "ttfts[0]: must be a number of seconds in [0, 1e+06], got -1"},
		{`{"itls": [[0.1]], "duration": -1}`, "duration: must be a number of seconds in [0, 1e+06], got -1"},
		{`{"itls": [["x"]]}`, "itls: want float64, got string"},
	} {
		_, err := results.ReadVLLM(strings.NewReader(c.doc))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.doc, err, c.want)
		}
		checkKeyed(t, c.doc, err)
	}
	m := sampleMeasured()
	m.Gaps[1].Gap = math.NaN()
	err := Write(&bytes.Buffer{}, m)
	if err == nil || err.Error() != "gaps[1]: non-finite value cannot be written as JSON" {
		t.Errorf("a NaN gap written: %v", err)
	}
	checkKeyed(t, "a NaN gap", err)
	// A type error's kinds are notes too (the page names them), the
	// English encoding/json's.
	_, err = Read(strings.NewReader(`{"summary": {"error": "x"}, "gaps": [{"t_rel_inject": 0, "gap": "slow"}]}`))
	var ne *sim.NoteError
	if !errors.As(err, &ne) || ne.Note.Key != "field.type" || err.Error() != "gaps.gap: want float64, got string" {
		t.Fatalf("a string gap: %v (%+v)", err, ne)
	}
	for i, key := range []string{"type.number", "json.string"} {
		if n, ok := ne.Note.Args[i+1].(sim.Note); !ok || n.Key != key {
			t.Errorf("argument %d of %+v is not a note keyed %s", i+1, ne.Note, key)
		}
	}
}

func TestWriteMeasuredRefusesNonFinite(t *testing.T) {
	m := sampleMeasured()
	m.Summary.SpikeRatio = math.Inf(1)
	if err := Write(&bytes.Buffer{}, m); err == nil || !strings.Contains(err.Error(), "spike_ratio") {
		t.Errorf("error %v", err)
	}
}

// A file laid out exactly as run.py's json.dump writes it (Python floats,
// null for an unset --json) reads.
func TestReadMeasuredScriptFile(t *testing.T) {
	m, err := Read(strings.NewReader(scriptFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.JSON != "" || m.Config.Model != "m" || !m.Config.IgnoreEOS || m.Summary.ShortCompleted != 31 ||
		len(m.Gaps) != 2 || m.Gaps[1].TRelInject != 0.25 || m.Extra != nil {
		t.Errorf("read %+v", m)
	}
}

const scriptFile = `{
  "config": {"base_url": "http://localhost:8000", "host": "localhost", "port": 8000, "api": "completions",
    "model": "m", "label": "run", "short_concurrency": 16, "short_input_len": 128, "short_output_len": 256,
    "long_input_len": 32000, "long_output_len": 16, "long_count": 1, "duration": 60.0, "inject_after": 20.0,
    "warmup": 2, "ignore_eos": true, "timeout": 900.0, "json": null, "seed": 0},
  "summary": {"label": "run", "base_url": "http://localhost:8000", "short_concurrency": 16,
    "long_input_len": 32000, "tokens_observed": 2, "itl_p50": 0.0077, "itl_p90": 0.9, "itl_p99": 0.9,
    "itl_max": 0.9, "itl_quiet_p50": 0.0077, "itl_quiet_p99": 0.0077, "itl_during_p50": 0.9,
    "itl_during_p99": 0.9, "itl_during_max": 0.9, "itl_after_p99": 0.0, "worst_gap": 0.9,
    "worst_gap_offset": 0.25, "spike_ratio": 116.88, "long_ttft": 0.95, "long_failed": 0,
    "long_error": "", "short_completed": 31, "short_failed": 0, "wall": 60.1, "output_tok_s": 0.033},
  "gaps": [{"t_rel_inject": -1.5, "gap": 0.0077}, {"t_rel_inject": 0.25, "gap": 0.9}]
}`

func TestReadVLLMBench(t *testing.T) {
	const ok = `{"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "duration": 12.5,
	  "completed": 2, "input_lens": [100, 200], "output_lens": [3, 2], "ttfts": [0.05, 0.06],
	  "itls": [[0.01, 0.012], [0.02]], "errors": ["", ""], "generated_texts": ["a", "b"], "mean_ttft_ms": 55.0}`
	b, err := results.ReadVLLM(strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.AllITLs(); !reflect.DeepEqual(got, []float64{0.01, 0.012, 0.02}) || b.ModelID == "" || b.Completed != 2 {
		t.Errorf("read %+v, itls %v", b, got)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"duration": 1}`, "--save-detailed"},
		{`{"itls": [[0.1]], "ttfts": [0.1, 0.2]}`, "ttfts: 2 entries"},
		{`{"itls": [[0.1, -1]]}`, "itls[0][1]"},
		{`{"itls": [["x"]]}`, "itls"},
		{`{"itls": [[0.1]], "output_lens": [1.5]}`, "output_lens"},
		{`[1]`, "not a vLLM"},
	} {
		if _, err := results.ReadVLLM(strings.NewReader(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.doc, err, c.want)
		}
	}
	// A failed request's gaps are left out.
	b, err = results.ReadVLLM(strings.NewReader(`{"itls": [[0.1], [9]], "errors": ["", "timeout"]}`))
	if err != nil || !reflect.DeepEqual(b.AllITLs(), []float64{0.1}) {
		t.Errorf("%v %v", err, b)
	}
}

// FuzzReadMeasured: no input panics, and whatever reads writes back and reads
// again to the same value.
func FuzzReadMeasured(f *testing.F) {
	var buf bytes.Buffer
	_ = Write(&buf, sampleMeasured())
	f.Add(buf.Bytes())
	f.Add([]byte(scriptFile))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, m); err != nil {
			return // e.g. huge numbers that overflow to Inf are refused, not panicked on
		}
		m2, err := Read(&out)
		if err != nil {
			t.Fatalf("rewritten file does not read: %v\n%s", err, out.String())
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the file:\n%+v\n%+v", m, m2)
		}
	})
}
