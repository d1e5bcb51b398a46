//go:build js && wasm

package play

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"servelab/sim"
)

// The sliced reader gives exactly what the whole-file reader gives, for a
// lab file and for every other kind it hands on; a yield error stops it.
func TestParseMeasuredSlicedMatchesWhole(t *testing.T) {
	c := sim.DefaultLabConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 4, 6, 2, 4000
	st, _ := sim.DefaultStepModel()
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: st, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	var lab bytes.Buffer
	if err := sim.WriteMeasured(&lab, &sim.Measured{Config: c, Summary: lo.Summary, Gaps: sim.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"lab.json": lab.Bytes(), "bom.json": append([]byte("\xef\xbb\xbf"), lab.Bytes()...)}
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
	bad := bytes.Replace(lab.Bytes(), []byte(`"gap": `), []byte(`"gap": -`), 1)
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
