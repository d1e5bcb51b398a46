package play

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"
)

// The sliced reader gives exactly what the whole-file reader gives, for a
// lab file and for every other kind it hands on; a yield error stops it.
func TestParseMeasuredSlicedMatchesWhole(t *testing.T) {
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 4, 6, 2, 4000
	st, _ := sim.DefaultStepModel()
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: st, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	var labJSON bytes.Buffer
	if err := lab.Write(&labJSON, &lab.Measured{Config: c, Summary: lab.Of(lo), Gaps: lab.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"lab.json": labJSON.Bytes(), "bom.json": append([]byte("\xef\xbb\xbf"), labJSON.Bytes()...)}
	dir := filepath.Join("..", "..", "sim", "testdata", "bench")
	for _, f := range []string{"vllm.json", "sglang.jsonl", "guidellm.json", "guidellm_v02.json", "aiperf/profile_export.jsonl",
		"aiperf/profile_export_raw.jsonl", "aiperf/profile_export_aiperf.json", "genai-perf/profile_export.json",
		"genai-perf/profile_export_genai_perf.json", "llmperf/m_550_150_individual_responses.json", "llmperf/m_550_150_summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	yields := 0
	for name, data := range files {
		whole, werr := ParseMeasured(name, data)
		sliced, serr := ParseMeasuredSliced(name, data, func(float64) error { yields++; return nil })
		if fmt.Sprint(werr) != fmt.Sprint(serr) {
			t.Errorf("%s: whole-file error %v, sliced %v", name, werr, serr)
			continue
		}
		if werr == nil && !sameOverlay(whole, sliced) {
			t.Errorf("%s: the sliced reader gives another overlay (%d vs %d gaps)", name, len(sliced.Gaps), len(whole.Gaps))
		}
		// The gaps' index is made in the reader's slices, not in the first
		// redraw after the file lands (a 50 MB file's took about 130 ms there).
		if werr == nil && len(sliced.Gaps) > 0 {
			if want := (len(sliced.Gaps) + gapBlockLen - 1) / gapBlockLen; len(sliced.blocks) != want {
				t.Errorf("%s: the sliced reader's overlay has %d index blocks, want %d made as it read", name, len(sliced.blocks), want)
			} else if !reflect.DeepEqual(sliced.blocks, whole.gapBlocks()) {
				t.Errorf("%s: the index made as the file was read differs from one made at the redraw", name)
			}
		}
	}
	// Broken files get the whole reader's words.
	for name, data := range files {
		for _, cut := range []int{1, len(data) / 3, len(data) - 2} {
			for _, doc := range [][]byte{data[:cut], append(append(bytes.Clone(data[:cut]), 'x'), data[cut+1:]...)} {
				_, werr := ParseMeasured(name, doc)
				_, serr := ParseMeasuredSliced(name, doc, func(float64) error { return nil })
				if fmt.Sprint(werr) != fmt.Sprint(serr) {
					t.Errorf("%s broken at %d: whole-file error %v, sliced %v", name, cut, werr, serr)
				}
			}
		}
	}
	bad := bytes.Replace(labJSON.Bytes(), []byte(`"gap": `), []byte(`"gap": -`), 1)
	if _, err := ParseMeasuredSliced("bad.json", bad, func(float64) error { return nil }); err == nil {
		t.Errorf("a negative gap was accepted")
	}
	stop := errors.New("stop")
	big := bytes.Repeat([]byte(`{"t_rel_inject": 1.5, "gap": 0.01},`), 200000)
	doc := append(append([]byte(`{"summary": {"label": "x"}, "gaps": [`), big...), []byte(`{"t_rel_inject": 1.5, "gap": 0.01}]}`)...)
	if _, err := ParseMeasuredSliced("big.json", doc, func(float64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a yield error did not stop the read: %v", err)
	}
}

// sameOverlay compares two overlays, reading NaN (a request without a
// start time) as equal to NaN.
func sameOverlay(a, b *Overlay) bool {
	str := func(v any) string { return fmt.Sprintf("%+v", v) }
	deref := func(o *Overlay) []string {
		out := []string{o.Name, o.Kind, str(o.Gaps), str(o.Origin), str(o.VLLMFig), str(o.Runs), str(o.Figs), str(o.FigureRows())}
		if o.Lab != nil {
			out = append(out, str(*o.Lab))
		}
		if o.Config != nil {
			out = append(out, str(*o.Config))
		}
		if o.Bench != nil {
			out = append(out, str(*o.Bench))
		}
		if o.VLLM != nil {
			out = append(out, str(*o.VLLM))
		}
		return out
	}
	return reflect.DeepEqual(deref(a), deref(b))
}

// A large trace is read in slices into the requests SetTrace reads; a
// JSON Lines file whose first line is too long for a trace is not taken
// for one.
func TestReadTraceSlicedMatchesSetTrace(t *testing.T) {
	var csv bytes.Buffer
	csv.WriteString("arrival,prompt_len,output_len\n")
	for i := range 30000 {
		fmt.Fprintf(&csv, "%d.%d,%d,%d\n", (i*37)%4000, i%10, 100+i%50, 1+i%9)
	}
	data := csv.Bytes()
	if !IsBigTrace("t.csv", data) {
		t.Fatal("a CSV is a trace")
	}
	ticks := 0
	reqs, err := ReadTraceSliced("t.csv", data, func(float64) error { ticks++; return nil })
	ss := NewSession()
	if _, werr := ss.SetTrace("t.csv", data); err != nil || werr != nil || ticks == 0 {
		t.Fatalf("sliced %v, whole %v, %d ticks", err, werr, ticks)
	}
	if fmt.Sprint(reqs) != fmt.Sprint(ss.trace.reqs) {
		t.Error("the sliced trace differs from SetTrace's")
	}
	if _, err := ReadTraceSliced("bad.csv", []byte("arrival,prompt_len,output_len\n1,2,x\n"), func(float64) error { return nil }); err == nil || !strings.Contains(err.Error(), "bad.csv line 2") {
		t.Errorf("a bad line: %v", err)
	}
	long := append(append([]byte(`{"timestamp": 1, "input_length": 5, "output_length": 2, "x": "`), bytes.Repeat([]byte("a"), 5<<20)...), "\"}\n"...)
	if IsBigTrace("t.jsonl", long) || !IsTrace("t.jsonl", long) {
		t.Error("a 5 MB first line is taken for a trace line")
	}
}
