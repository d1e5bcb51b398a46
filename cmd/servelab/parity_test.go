package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/scenario"
	"servelab/wasm/play"
)

// TestPagePresetsRunAsTheCLI: every preset's link, opened in the page,
// runs the experiment the CLI runs from the same settings: the page's
// state written as flags (scenario.Flags) reads back as the same
// experiment, and `servelab sim --json` with those flags prints what the
// page's own run gives, byte for byte.
func TestPagePresetsRunAsTheCLI(t *testing.T) {
	for _, p := range play.Presets {
		s, notes := play.ParseQuery("preset=" + p.Name)
		if len(notes) > 0 {
			t.Fatalf("%s: %v", p.Name, notes)
		}
		args := append([]string{"sim"}, scenario.Flags(&s.Experiment, simGroups)...)
		code, out, errs := cli(t, append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%s: servelab %s: %s", p.Name, strings.Join(args, " "), errs)
		}
		r, err := play.Simulate(s)
		if err != nil {
			t.Fatalf("%s: the page: %v", p.Name, err)
		}
		var page bytes.Buffer
		if s.Workload == scenario.Lab {
			sum := *r.Lab
			sum.Label, sum.BaseURL = "sim-"+s.Policy, "sim://"+r.Step.Model.Name+"@"+r.Step.GPU.Name
			writeJSON(&page, sum)
		} else {
			steps := 0
			for _, row := range r.Rows {
				steps += len(row.Iters)
			}
			x := s.Experiment
			b, err := x.Build()
			if err != nil {
				t.Fatal(err)
			}
			f := figuresOf(b.PolicyName(), r.Step, r.Summary, r.Results, steps, r.End, r.Truncated)
			f.Prefix, f.Spec = prefixOf(r.Prefix), specOf(r.Spec)
			if r.Choices != nil {
				f.Replicas = replicasOf(&sim.ReplicaOutcome{Outcome: sim.Outcome{Results: r.Results, End: r.End}, Choices: r.Choices, Replicas: r.Replicas})
			}
			writeJSON(&page, f)
		}
		if page.String() != out {
			t.Errorf("%s: servelab %s --json prints\n%s\nthe page's run gives\n%s", p.Name, strings.Join(args, " "), out, page.String())
		}
	}
}

// TestChaptersAreTheLecture: each chapter's table, as a student opens the
// chapter's link, holds the numbers `servelab demo interference` prints
// with no flags (the lecture's own: workload seed 0 among them).
func TestChaptersAreTheLecture(t *testing.T) {
	code, out, errs := cli(t, "demo", "interference", "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	keys := map[int]string{1: "demo1_in_step", 2: "demo2_latency_vs_rate", 3: "demo3_goodput", 4: "demo4_chunked"}
	for _, ch := range play.Chapters {
		if ch.Demo == 0 {
			continue
		}
		s, notes := play.ParseQuery("chapter=" + ch.ID)
		if len(notes) > 0 {
			t.Fatalf("%s: %v", ch.ID, notes)
		}
		res, err := play.RunLecture(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		data, _ := json.Marshal(res)
		json.Unmarshal(data, &got)
		k := keys[ch.Demo]
		var g, w bytes.Buffer
		json.Compact(&g, got[k])
		json.Compact(&w, want[k])
		if g.Len() == 0 || g.String() != w.String() {
			t.Errorf("chapter %s's table %s\n%s\nis not the CLI's\n%s", ch.ID, k, g.String(), w.String())
		}
	}
}

// TestLinksAndFlagsRoundTrip: a preset's experiment goes through a link
// and through flags and comes back equal, and a hand-written chapter link
// keeps its own settings (clamped with a note where out of range).
func TestLinksAndFlagsRoundTrip(t *testing.T) {
	s, notes := play.ParseQuery("chapter=demo4&rate=30&seed=0")
	if len(notes) > 0 || s.Rate != 30 || s.Seed != 0 || s.Budget != 512 {
		t.Errorf("chapter link: rate %g seed %d budget %d, notes %v", s.Rate, s.Seed, s.Budget, notes)
	}
	s, notes = play.ParseQuery("chapter=demo4&rate=500")
	if s.Rate != 200 || len(notes) != 1 || !strings.Contains(notes[0], "500") {
		t.Errorf("an out-of-range rate: %g, notes %v", s.Rate, notes)
	}
}
