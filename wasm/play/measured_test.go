//go:build js && wasm

package play

import (
	"bytes"
	"strings"
	"testing"

	"servelab/sim"
)

func labFile(t *testing.T) []byte {
	t.Helper()
	c := sim.DefaultLabConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 4, 4, 1, 4000
	s, _ := ParseQuery("")
	step, _ := stepModel(s)
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: step, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := sim.WriteMeasured(&b, &sim.Measured{Config: c, Summary: lo.Summary, Gaps: sim.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}); err != nil {
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
	if s.Workload != "lab" || s.I("streams") != 4 || s.I("long") != 4000 || s.F("inject") != 1 || s.F("duration") != 4 {
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

// A BOM is taken as the readers take it; gaps of 1e308 are refused, never a TPOT of +Inf.
func TestMeasuredBOMAndHugeGaps(t *testing.T) {
	if _, err := ParseMeasured("bom.json", append([]byte("\xef\xbb\xbf"), labFile(t)...)); err != nil {
		t.Errorf("a lab file with a UTF-8 BOM: %v", err)
	}
	o, err := ParseMeasured("bom.json", []byte("\xef\xbb\xbf"+`{"itls":[[0.01,0.03]],"ttfts":[0.1]}`))
	if err != nil || o.VLLMFig[1][0] != 0.02 {
		t.Errorf("a vLLM file with a UTF-8 BOM: %v, TPOT %v", err, o)
	}
	if _, err := ParseMeasured("huge.json", []byte(`{"itls":[[1e308,1e308]]}`)); err == nil || !strings.Contains(err.Error(), "itls[0][0]") {
		t.Errorf("itls of 1e308: %v, want a refusal naming itls[0][0]", err)
	}
}
