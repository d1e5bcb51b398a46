package play

import (
	"strings"
	"testing"
)

// TestPairRoundTripsThroughTheURL: run B's settings survive the URL, the
// workload stays A's, and a setting equal to A's is not stored.
func TestPairRoundTripsThroughTheURL(t *testing.T) {
	a, _ := ParseQuery("preset=compare-chunking")
	p := ParsePair("preset=compare-chunking")
	if !p.On || p.B["policy"] != "chunked" || p.B["budget"] != "512" {
		t.Fatalf("compare-chunking's B: %+v", p)
	}
	if n := p.SetB(a, "rate", "99"); n != "" || p.B["rate"] != "99" {
		t.Fatalf("B's rate: note %q, %+v", n, p.B)
	}
	p.SetB(a, "prompt", "4000") // the workload is shared: refused for B
	if _, ok := p.B["prompt"]; ok {
		t.Errorf("B stored a workload key: %+v", p.B)
	}
	p.SetB(a, "rate", FormatNum(a.Rate)) // back to A's: nothing stored
	if _, ok := p.B["rate"]; ok {
		t.Errorf("B keeps a rate equal to A's: %+v", p.B)
	}
	q := p.Query()
	back := ParsePair(q)
	if back.Query() != q {
		t.Errorf("pair %q read back as %q", q, back.Query())
	}
	b, notes := back.StateB(a)
	if len(notes) > 0 || b.Policy != "chunked" || b.Budget != 512 || b.Prompt != a.Prompt || b.Requests != a.Requests {
		t.Errorf("B's state %s (notes %q) from A %s", b.Query(), notes, a.Query())
	}
	if s, notes := ParseQuery(a.Query() + "&" + q + "&proj=1&speed=5"); len(notes) > 0 || s.Query() != a.Query() {
		t.Errorf("the page's keys leaked into the state: %q, notes %q", s.Query(), notes)
	}
	if strings.Contains(Pair{}.Query(), "cmp") {
		t.Error("compare mode off still writes cmp")
	}
}

// TestMemoryPressureRunsOutOfKV: the preset's run preempts, its held
// tokens never exceed the cache, and a disaggregated run moves one KV cache
// per completed request.
func TestMemoryPressureRunsOutOfKV(t *testing.T) {
	s, _ := ParseQuery("preset=memory-pressure")
	r, err := Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.KVCapacity == 0 || r.Preemptions == 0 || r.PeakKV() > r.KVCapacity || r.FirstHeld() < 0 {
		t.Fatalf("capacity %d, peak %d, %d preemptions, first held step %d", r.KVCapacity, r.PeakKV(), r.Preemptions, r.FirstHeld())
	}
	k := len(r.Rows[0].Iters) / 2
	total := 0
	for _, h := range r.HeldAt(0, k) {
		total += h.Tokens
	}
	if total == 0 || total > r.KVCapacity*r.BlockSize {
		t.Errorf("step %d: requests hold %d tokens, the cache %d", k, total, r.KVCapacity*r.BlockSize)
	}
	d, _ := ParseQuery("preset=distserve-2p1d&n=200")
	rd, err := Simulate(d)
	if err != nil {
		t.Fatal(err)
	}
	n, mean, _ := rd.Transfers()
	if n != rd.Summary.Completed || n == 0 || !(mean > 0) {
		t.Errorf("%d transfers (mean %g s) for %d completed requests", n, mean, rd.Summary.Completed)
	}
}

// TestTakeOverlayPairsEachRunWithItsFile: two measured lab runs, one
// labelled unchunked and one chunked at 512: run B becomes the chunked
// simulation of the second while A stays the first's; a second file with
// another workload keeps A's, with a note.
func TestTakeOverlayPairsEachRunWithItsFile(t *testing.T) {
	parse := func(name, label string) *Overlay {
		t.Helper()
		o, err := ParseMeasured(name, []byte(labFileWith(t, `"label": "run"`, `"label": "`+label+`"`)))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	a := DefaultState()
	oa := parse("a.json", "unchunked")
	a.Lang = "en"
	oa.ApplyConfig(&a)
	a.Set("policy", "prefill-first")
	var p Pair
	notes := p.TakeOverlay(a, parse("b.json", "chunked 512"))
	if len(notes) != 0 {
		t.Errorf("same workload, notes %v", notes)
	}
	b, _ := p.StateB(a)
	if !p.On || b.Policy != "chunked" || b.EffectiveBudget() != 512 || a.Policy != "prefill-first" {
		t.Errorf("B runs %s at %d (on %v), A %s; want B chunked 512 beside A's prefill-first", b.Policy, b.EffectiveBudget(), p.On, a.Policy)
	}
	if b.Workload != a.Workload || b.Lab != a.Lab {
		t.Errorf("B's workload %s %+v differs from A's %s %+v", b.Workload, b.Lab, a.Workload, a.Lab)
	}
	// Another long prompt in B's file: the pair still shares A's, and says so.
	other, err := ParseMeasured("c.json", []byte(labFileWith(t, `"long_input_len": 32000`, `"long_input_len": 8000`)))
	if err != nil {
		t.Fatal(err)
	}
	notes = p.TakeOverlay(a, other)
	if len(notes) == 0 || !strings.Contains(strings.Join(notes, " "), "8000") {
		t.Errorf("a file with another long prompt gives notes %v; want one naming 8000", notes)
	}
	if b, _ := p.StateB(a); b.Lab.LongInputLen != a.Lab.LongInputLen {
		t.Errorf("B's long prompt %d, A's %d: the pair must share it", b.Lab.LongInputLen, a.Lab.LongInputLen)
	}
}
