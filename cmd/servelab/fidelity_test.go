package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
)

const pointsFile = "testdata/fidelity/points.json"

// variant writes the vllm profile with one correction taken out.
func variant(t *testing.T, edit func(p *sim.Profile)) string {
	t.Helper()
	p, err := sim.BuiltinProfile("vllm")
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "variant.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// setEverywhere sets a constant profile-wide and in every GPU's entry.
func setEverywhere(p *sim.Profile, name string, v float64) {
	p.Constants[name] = sim.Constant{Value: v, Source: "test"}
	for g, fit := range p.GPUs {
		if _, ok := fit.Constants[name]; ok {
			fit.Constants[name] = sim.Constant{Value: v, Source: "test"}
			p.GPUs[g] = fit
		}
	}
}

func medianAbs(errs []float64) float64 {
	return statsOf(errs).Median
}

// errsOf evaluates the points whose id has one of the prefixes under profile.
func errsOf(t *testing.T, pts []fidelityPoint, profile string, match func(fidelityPoint) bool) []float64 {
	t.Helper()
	var out []float64
	for _, p := range pts {
		if !match(p) {
			continue
		}
		v, err := p.eval(filepath.Dir(pointsFile), profile)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v/p.Published-1)
	}
	if len(out) == 0 {
		t.Fatal("no points matched")
	}
	return out
}

// make fidelity's claim: on the shared published points the vllm profile's
// median |error| is at most 8%, and the lecture profile still gives what it
// gave when the points were recorded (the lecture model is unchanged).
func TestFidelityOfProfiles(t *testing.T) {
	pts, err := loadPoints(pointsFile)
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		ID      string  `json:"id"`
		Lecture float64 `json:"lecture_profile_value_2026_12_01"`
	}
	data, _ := os.ReadFile(pointsFile)
	json.Unmarshal(data, &raw)
	rows, err := fidelityRows(pts, filepath.Dir(pointsFile), []string{"lecture", "vllm"}, map[string]string{"lecture": "lecture", "vllm": "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	var errs []float64
	for i, r := range rows {
		if rel := math.Abs(r.Values["lecture"]/raw[i].Lecture - 1); rel > 0.005 {
			t.Errorf("%s: lecture profile gives %.4g, recorded %.4g", r.ID, r.Values["lecture"], raw[i].Lecture)
		}
		errs = append(errs, r.Errors["vllm"])
	}
	s := statsOf(errs)
	t.Logf("vllm on %d shared points: median |error| %.1f%%, worst %.1f%%, %.0f%% within 20%%", s.Points, 100*s.Median, 100*s.Worst, 100*s.Within20)
	if s.Median > 0.08 {
		t.Errorf("vllm median |error| %.1f%% > 8%%", 100*s.Median)
	}
}

// Each correction is needed: without it the points it is about miss. (The
// per-request and per-sequence CPU costs are too small on these points to
// be pinned by them; sim's TestLightLoadTTFTPaysTheRequestCost checks them.)
func TestFidelityCorrectionsMatter(t *testing.T) {
	pts, err := loadPoints(pointsFile)
	if err != nil {
		t.Fatal(err)
	}
	is := func(sub ...string) func(fidelityPoint) bool {
		return func(p fidelityPoint) bool {
			for _, s := range sub {
				if !strings.Contains(p.ID, s) {
					return false
				}
			}
			return true
		}
	}
	for _, c := range []struct {
		name      string
		match     func(fidelityPoint) bool
		edit      func(p *sim.Profile)
		with, off float64 // the median |error| must be at most with, and above off without the correction
	}{
		{"MoE expert union (Mixtral TP2 latency)", is("vllmci-lat-Mixtral"),
			func(p *sim.Profile) { p.Physics.MoEUnion = false }, 0.13, 0.18},
		{"TP collective latency (70B TP4 latency)", is("vllmci-lat-Llama-3.1-70B"),
			func(p *sim.Profile) { setEverywhere(p, "collective_latency", 0) }, 0.08, 0.15},
	} {
		with := medianAbs(errsOf(t, pts, "vllm", c.match))
		off := medianAbs(errsOf(t, pts, variant(t, c.edit), c.match))
		t.Logf("%s: median |error| %.1f%% with, %.1f%% without", c.name, 100*with, 100*off)
		if with > c.with || off <= c.off {
			t.Errorf("%s: median |error| %.1f%% with (want <= %.0f%%), %.1f%% without (want > %.0f%%)", c.name, 100*with, 100*c.with, 100*off, 100*c.off)
		}
	}
}

// Cross-validation predicts each point with a fit made without it: point 0
// held out gives what a fit to the other points predicts for it, and its
// held-out error differs from its error under the fit to every point.
func TestCrossValidationHoldsPointsOut(t *testing.T) {
	all, err := loadPoints(pointsFile)
	if err != nil {
		t.Fatal(err)
	}
	var pts []fidelityPoint
	for _, p := range all {
		if strings.HasPrefix(p.ID, "vidur-Llama-2-7B-H100-SXM-") {
			pts = append(pts, p)
		}
	}
	base, err := sim.BuiltinProfile("vllm")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(pointsFile)
	stages := []fitStage{{GPU: "H100-SXM", Free: []string{"eff_compute", "eff_mem"}}}
	k := len(pts)
	held, err := crossValidate(base, pts, dir, stages, k, 2)
	if err != nil {
		t.Fatal(err)
	}
	without, err := fitProcedure(base, pts[1:], dir, stages, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	everything, err := fitProcedure(base, pts, dir, stages, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(p *sim.Profile) float64 {
		data, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "p.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := pts[0].eval(dir, file)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got, want := held[0].Value, eval(without); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("%s held out: %g, a fit without it predicts %g", pts[0].ID, got, want)
	}
	if in := eval(everything); math.Abs(held[0].Value/in-1) < 1e-6 {
		t.Errorf("%s: held-out prediction %g equals the fit to every point's %g", pts[0].ID, held[0].Value, in)
	}
	if _, err := crossValidate(base, pts, dir, stages, 1, 1); err == nil {
		t.Error("k = 1 accepted")
	}
	rows := cvErrors(held)
	if len(rows) == 0 || rows[0].GPU != "" {
		t.Fatalf("cvErrors: %+v, want the all-GPU row first", rows)
	}
}

// The vllm profile states its held-out error for every regime, and the CLI
// prints it beside a vllm prediction, never beside a lecture one.
func TestPredictionsSayTheirHeldOutError(t *testing.T) {
	p, err := sim.BuiltinProfile("vllm")
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range sim.Regimes() {
		if _, _, ok := p.Trust(reg, "A100-80GB"); !ok {
			t.Errorf("vllm states no cross-validated error for %s", reg)
		}
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"step", "--profile", "vllm", "--gpu", "A100-80GB", "--batch", "8", "--context", "100"}, true},
		{[]string{"step", "--profile", "lecture", "--gpu", "A100-80GB", "--batch", "8", "--context", "100"}, false},
		{[]string{"step", "--profile", "vllm", "--eff-mem", "0.5", "--batch", "8", "--context", "100"}, false},
		{[]string{"sim", "--profile", "vllm", "--rate", "2", "--requests", "20"}, true},
		{[]string{"sim", "--profile", "lecture", "--rate", "2", "--requests", "20"}, false},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 0 {
			t.Fatalf("%v: %s", c.args, errb.String())
		}
		if got := strings.Contains(out.String(), "cross-validated"); got != c.want {
			t.Errorf("%v: says its cross-validated error: %v, want %v\n%s", c.args, got, c.want, out.String())
		}
	}
}
