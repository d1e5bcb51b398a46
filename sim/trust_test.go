package sim

import (
	"strings"
	"testing"
)

func trustProfile() *Profile {
	return &Profile{Name: "t", Constants: map[string]Constant{}, CrossValidated: &CrossValidated{Method: "test", Errors: []CVError{
		{Regime: RegimeTTFT, Points: 10, Median: 0.07, Within20: 1},
		{Regime: RegimeTTFT, GPU: "A100-80GB", Points: 6, Median: 0.05, Within20: 1},
		{Regime: RegimeTTFT, GPU: "H100-SXM", Points: 2, Median: 0.01, Within20: 1},
	}}}
}

// A GPU with enough held-out points gets its own error; one with fewer, or
// none, gets the error over all GPUs; a regime without points gets none.
func TestTrustStatesTheHeldOutErrorOfTheRegime(t *testing.T) {
	p := trustProfile()
	e, n, ok := p.Trust(RegimeTTFT, "a100-80gb")
	if !ok || e.GPU != "A100-80GB" || n.Text != "±5% (cross-validated, A100-80GB)" || n.Key != "trust.gpu" {
		t.Errorf("A100: %+v %q %v", e, n.Text, ok)
	}
	if e, n, ok := p.Trust(RegimeTTFT, "H100-SXM"); !ok || e.GPU != "" || n.Text != "±7% (cross-validated, all GPUs)" {
		t.Errorf("H100 with 2 points: %+v %q %v, want the all-GPU error", e, n.Text, ok)
	}
	if _, _, ok := p.Trust(RegimeThroughput, "A100-80GB"); ok {
		t.Error("a regime without held-out points stated an error")
	}
	if _, _, ok := (&Profile{Name: "x"}).Trust(RegimeTTFT, "A100-80GB"); ok {
		t.Error("a profile without cross-validation stated an error")
	}
}

// A profile changed by a typed constant, another profile's step model or
// FP8 weights are not what was validated.
func TestTrustForOnlyTheValidatedModel(t *testing.T) {
	p := trustProfile()
	s := StepModel{Profile: "t", DtypeBytes: 2}
	s.GPU.Name = "A100-80GB"
	if _, ok := p.TrustFor(s, RegimeTTFT); !ok {
		t.Fatal("the validated step model got no error")
	}
	fp8 := s
	fp8.DtypeBytes = 1
	other := s
	other.Profile = "lecture"
	for name, s := range map[string]StepModel{"FP8": fp8, "another profile": other} {
		if _, ok := p.TrustFor(s, RegimeTTFT); ok {
			t.Errorf("%s: stated an error", name)
		}
	}
	q, err := p.With("A100-80GB", "eff_mem", 0.5, "typed")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := q.Trust(RegimeTTFT, "A100-80GB"); ok {
		t.Error("a profile with a typed constant kept the cross-validated error")
	}
	if _, _, ok := p.Clone().Trust(RegimeTTFT, "A100-80GB"); !ok {
		t.Error("Clone lost the cross-validated error")
	}
}

func TestParseProfileChecksCrossValidated(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{`{"regime": "latency", "points": 1, "median_abs_error": 0.1, "within_20pct": 1}`, "unknown regime"},
		{`{"regime": "ttft", "gpu": "Z9", "points": 1, "median_abs_error": 0.1, "within_20pct": 1}`, "Z9"},
		{`{"regime": "ttft", "points": 1, "median_abs_error": -1, "within_20pct": 1}`, "out of range"},
	} {
		_, err := ParseProfile([]byte(`{"name": "x", "physics": {}, "constants": {}, "cross_validated": {"method": "m", "errors": [` + c.entry + `]}}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.entry, err, c.want)
		}
	}
}
