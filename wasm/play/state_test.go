package play

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"servelab/sim/scenario"
)

// valueOf is a control's or a view key's value in s, in the page's unit.
func valueOf(s State, key string) float64 {
	if c, ok := ControlByKey(key); ok {
		return c.Value(s)
	}
	for _, vk := range viewKeys {
		if vk.key == key {
			return s.viewValue(vk)
		}
	}
	return math.NaN()
}

func TestParseQueryClampsWithNotes(t *testing.T) {
	cases := []struct {
		query string
		key   string
		want  float64
		note  string // a substring of the notes; "" means no notes
	}{
		{"rate=30", "rate", 30, ""},
		{"rate=1e12", "rate", 200, "Arrival rate: 1e+12 is out of range"},
		{"prompt=-5", "prompt", 1, "Prompt length: -5 is out of range"},
		{"n=abc", "n", 1500, `Requests: "abc" is not a number`},
		{"n=12.6", "n", 13, ""},
		{"effc=NaN", "effc", 0.6, "not a number"},
		{"span=0", "span", 0.001, "View span"},
		{"bogus=1", "rate", 10, `unknown setting "bogus"`},
	}
	for _, c := range cases {
		s, notes := ParseQuery("?" + c.query)
		if got := valueOf(s, c.key); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %s = %g, want %g", c.query, c.key, got, c.want)
		}
		joined := strings.Join(notes, "; ")
		if c.note == "" && joined != "" || c.note != "" && !strings.Contains(joined, c.note) {
			t.Errorf("%s: notes %q, want %q", c.query, joined, c.note)
		}
	}
}

func TestChoicesAreChecked(t *testing.T) {
	s, notes := ParseQuery("policy=CHUNKED&workload=lab&model=nope&gpu=H100-SXM")
	if s.Policy != "chunked" || s.Workload != "lab" {
		t.Errorf("policy %q workload %q, want chunked and lab", s.Policy, s.Workload)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `model "nope"`) {
		t.Errorf("notes %q, want one about the model", notes)
	}
}

func TestEveryPresetRoundTripsThroughTheURL(t *testing.T) {
	for _, p := range Presets {
		s, notes := ParseQuery("preset=" + p.Name)
		if len(notes) > 0 {
			t.Errorf("%s: notes %q", p.Name, notes)
		}
		want := scenario.Default()
		p.Apply(&want)
		if !reflect.DeepEqual(s.Experiment, want) {
			t.Errorf("%s: the link's experiment\n%+v\nis not the preset's\n%+v", p.Name, s.Experiment, want)
		}
		back, notes := ParseQuery(s.Query())
		if len(notes) > 0 || back.Query() != s.Query() {
			t.Errorf("%s: query %q read back as %q (notes %q)", p.Name, s.Query(), back.Query(), notes)
		}
	}
	if _, notes := ParseQuery("preset=nope"); len(notes) != 1 {
		t.Errorf("unknown preset: notes %q, want one", notes)
	}
}
