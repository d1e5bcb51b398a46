package main

// servelab fidelity --fit and --cv: the vllm profile's whole fit to the
// published points as one procedure (fitStages), and k-fold
// cross-validation of that procedure: each point is predicted by a profile
// fitted without it, so the error reported is the error on points the fit
// has not seen. The fit stores that error in the profile (sim.CrossValidated)
// for sim.Profile.Trust.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
	"servelab/sim/calibrate"
)

// fitStage is one step of a profile's fit to the published points.
type fitStage struct {
	// GPU selects the points on this GPU and fits its own constants; ""
	// fits profile-wide constants to every point.
	GPU  string
	Free []string
	// From names a GPU fitted in an earlier stage whose values of Inherit
	// this GPU takes.
	From    string
	Inherit []string
}

// vllmStages is the vllm profile's fit (`make fidelity-fit`): the GEMM and
// weight-read efficiencies, the roofline's p and the per-iteration overhead
// per GPU; the H200 (the H100's chip with more and faster HBM, its points
// all decode-bound) its memory efficiency only; then, over every point, the
// fixed latency of a TP all-reduce and the engine's CPU time per prompt.
var vllmStages = []fitStage{
	{GPU: "A100-80GB", Free: []string{"eff_compute", "eff_mem", "overhead", "roofline_p"}},
	{GPU: "H100-SXM", Free: []string{"eff_compute", "eff_mem", "overhead", "roofline_p"}},
	{GPU: "H200", Free: []string{"eff_mem"}, From: "H100-SXM", Inherit: []string{"eff_compute", "roofline_p"}},
	{Free: []string{"collective_latency", "req_cost"}},
}

// wideMeans are the constants whose profile-wide value (for GPUs without
// points) is the mean of the values fitted per GPU.
var wideMeans = []string{"eff_compute", "eff_mem", "roofline_p"}

// fitProcedure returns base refitted to pts by stages: its per-GPU entries
// are dropped first, so nothing fitted before (to other points) carries
// over; constants a stage's points do not pin (calibrate.Fit's ±20% rule)
// keep base's profile-wide values. It logs each stage's fit to log.
func fitProcedure(base *sim.Profile, pts []fidelityPoint, dir string, stages []fitStage, log io.Writer) (*sim.Profile, error) {
	out := base.Clone()
	out.GPUs = map[string]sim.GPUFit{}
	out.CrossValidated = nil
	tmp, err := os.MkdirTemp("", "servelab-fit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "candidate.json")
	fitted := map[string]map[string]float64{} // GPU -> constant -> its own fitted value
	for _, st := range stages {
		var sel []fidelityPoint
		for _, p := range pts {
			if st.GPU == "" || sameGPU(p.GPU, st.GPU) {
				sel = append(sel, p)
			}
		}
		where := "all GPUs"
		if st.GPU != "" {
			where = st.GPU
		}
		if len(sel) == 0 {
			fmt.Fprintf(log, "%s: no points, nothing fitted\n", where)
			continue
		}
		gname := st.GPU
		if gname == "" {
			gname = sel[0].GPU
		}
		g, err := hwspecs.Get(gname)
		if err != nil {
			return nil, err
		}
		var inherited []string
		for _, n := range st.Inherit {
			if v, ok := fitted[st.From][n]; ok {
				src := fmt.Sprintf("%s's fitted value (the same chip)", st.From)
				if out, err = out.With(g.Name, n, v, src); err != nil {
					return nil, err
				}
				inherited = append(inherited, n)
			}
		}
		m, _ := modelspecs.Get(modelspecs.Default)
		start, err := out.Apply(sim.StepModel{Model: m, GPU: g})
		if err != nil {
			return nil, err
		}
		cur := out
		// The candidate profile: out with the stage's free constants taken from s.
		candidate := func(s sim.StepModel) error {
			p := cur
			for _, c := range sim.StepConstants(s, nil) {
				if !slices.Contains(st.Free, c.Name) {
					continue
				}
				if st.GPU == "" {
					p = withWide(p, c.Name, c.Value, "candidate")
				} else if p, err = p.With(g.Name, c.Name, c.Value, "candidate"); err != nil {
					return err
				}
			}
			data, err := p.Marshal()
			if err != nil {
				return err
			}
			return os.WriteFile(file, data, 0o644)
		}
		var evidence []calibrate.Evidence
		for _, pt := range sel {
			evidence = append(evidence, calibrate.Evidence{Source: pt.ID, Names: []string{pt.Metric},
				Measured: []float64{pt.Published}, Noise: []float64{0.05},
				Predict: func(s sim.StepModel) ([]float64, error) {
					if err := candidate(s); err != nil {
						return nil, err
					}
					v, err := pt.eval(dir, file)
					return []float64{v}, err
				}})
		}
		cal, err := calibrate.Fit(start, st.Free, evidence)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "%s: %d points\n", where, len(sel))
		var own []string
		for _, c := range cal.Constants {
			state := fmt.Sprintf("±%.0f%%", 100*c.RelStdErr)
			if !c.Identified {
				state = c.Note
			}
			fmt.Fprintf(log, "  %-18s %.4g (was %.4g) %s\n", c.Name, c.Value, c.Base, state)
			if !c.Identified {
				continue
			}
			src := fmt.Sprintf("fitted by `servelab fidelity --fit` (%s free) to the %d published points on %s in cmd/servelab/testdata/fidelity (±%.0f%%)",
				strings.Join(st.Free, ", "), len(sel), where, 100*c.RelStdErr)
			v := roundSig(c.Value, 4)
			if st.GPU == "" {
				out = withWide(out, c.Name, v, src)
				continue
			}
			if out, err = out.With(g.Name, c.Name, v, src); err != nil {
				return nil, err
			}
			if fitted[g.Name] == nil {
				fitted[g.Name] = map[string]float64{}
			}
			fitted[g.Name][c.Name] = v
			own = append(own, c.Name)
		}
		for _, t := range cal.Targets {
			fmt.Fprintf(log, "    %-40s published %9.4g  before %9.4g (%+5.1f%%)  after %9.4g (%+5.1f%%)\n",
				t.Source, t.Measured, t.Base, 100*(t.Base/t.Measured-1), t.Fitted, 100*(t.Fitted/t.Measured-1))
		}
		if st.GPU == "" {
			continue
		}
		fit := out.GPUs[g.Name]
		for _, pt := range sel {
			fit.Points = append(fit.Points, pt.ID)
		}
		fit.Note = fmt.Sprintf("fitted to %d published points on %s", len(sel), g.Name)
		if len(inherited) > 0 {
			fit.Note = fmt.Sprintf("%s fitted to %d published points on %s; %s from %s (the same chip)",
				strings.Join(own, ", "), len(sel), g.Name, strings.Join(inherited, ", "), st.From)
		}
		out.GPUs[g.Name] = fit
	}
	for _, n := range wideMeans {
		var gpus []string
		for g, cs := range fitted {
			if _, ok := cs[n]; ok {
				gpus = append(gpus, g)
			}
		}
		if len(gpus) == 0 {
			continue
		}
		sort.Strings(gpus)
		sum, parts := 0.0, []string{}
		for _, g := range gpus {
			sum += fitted[g][n]
			parts = append(parts, fmt.Sprintf("%s (%.4g)", g, fitted[g][n]))
		}
		out.Constants[n] = sim.Constant{Value: roundSig(sum/float64(len(gpus)), 3),
			Source: "no published points for this GPU: the mean of the values fitted on " + strings.Join(parts, " and ")}
	}
	return out, nil
}

// withWide returns a copy of p whose profile-wide constant name is v from
// source, taken out of every GPU's own entry so that it applies everywhere.
func withWide(p *sim.Profile, name string, v float64, source string) *sim.Profile {
	q := p.Clone()
	q.Constants[name] = sim.Constant{Value: v, Source: source}
	for g, fit := range q.GPUs {
		delete(fit.Constants, name)
		q.GPUs[g] = fit
	}
	return q
}

// sameGPU reports whether two names are one GPU of the catalogue.
func sameGPU(a, b string) bool {
	ga, err1 := hwspecs.Get(a)
	gb, err2 := hwspecs.Get(b)
	return err1 == nil && err2 == nil && ga.Name == gb.Name
}

// heldOut is one point predicted by a fit made without it.
type heldOut struct {
	Point fidelityPoint
	Value float64
	Err   float64 // relative, signed
}

// crossValidate returns every point predicted by the procedure fitted to
// the other folds: point i is in fold i mod k (the points file lists each
// source's points together, so each fold takes some of every source).
// Folds run on up to workers goroutines.
func crossValidate(base *sim.Profile, pts []fidelityPoint, dir string, stages []fitStage, k, workers int) ([]heldOut, error) {
	if k < 2 || k > len(pts) {
		return nil, fmt.Errorf("--cv: k must be in 2..%d (the points), got %d", len(pts), k)
	}
	out := make([]heldOut, len(pts))
	errs := make([]error, k)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, workers))
	for f := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[f] = fitFold(base, pts, dir, stages, k, f, out)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fitFold fits the procedure without fold f and writes the fold's
// predictions into out (at the points' indices).
func fitFold(base *sim.Profile, pts []fidelityPoint, dir string, stages []fitStage, k, f int, out []heldOut) error {
	var train []fidelityPoint
	for i, p := range pts {
		if i%k != f {
			train = append(train, p)
		}
	}
	prof, err := fitProcedure(base, train, dir, stages, io.Discard)
	if err != nil {
		return fmt.Errorf("fold %d: %w", f+1, err)
	}
	tmp, err := os.MkdirTemp("", "servelab-cv-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "fold.json")
	data, err := prof.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return err
	}
	for i, p := range pts {
		if i%k != f {
			continue
		}
		v, err := p.eval(dir, file)
		if err != nil {
			return fmt.Errorf("fold %d: %w", f+1, err)
		}
		out[i] = heldOut{Point: p, Value: v, Err: v/p.Published - 1}
	}
	return nil
}

// cvErrors returns the held-out errors by regime, over all GPUs and on
// each GPU with points in that regime (sorted), as the profile stores them.
func cvErrors(rows []heldOut) []sim.CVError {
	var out []sim.CVError
	for _, reg := range sim.Regimes() {
		by := map[string][]float64{}
		for _, r := range rows {
			if r.Point.Class != reg {
				continue
			}
			by[""] = append(by[""], r.Err)
			if g, err := hwspecs.Get(r.Point.GPU); err == nil {
				by[g.Name] = append(by[g.Name], r.Err)
			}
		}
		keys := make([]string, 0, len(by))
		for g := range by {
			keys = append(keys, g)
		}
		sort.Strings(keys) // "" (all GPUs) first
		for _, g := range keys {
			s := statsOf(by[g])
			out = append(out, sim.CVError{Regime: reg, GPU: g, Points: s.Points,
				Median: roundSig(s.Median, 3), Within20: roundSig(s.Within20, 3)})
		}
	}
	return out
}

// cvMethod says how the held-out errors were obtained.
func cvMethod(k, n int) string {
	return fmt.Sprintf("%d-fold cross-validation: each of the %d published points in cmd/servelab/testdata/fidelity predicted by the whole fit (`servelab fidelity --fit`) made without its fold (every %dth point); the error is the median |predicted/published - 1|", k, n, k)
}

// printCV prints the held-out errors by regime and GPU, and the share of
// all points within 20%.
func printCV(w io.Writer, rows []heldOut, k int) {
	fmt.Fprintf(w, "\nHeld-out |error| of the vllm profile's fit (%d-fold cross-validation: each point predicted by the fit made without it)\n\n", k)
	var cells [][]string
	for _, e := range cvErrors(rows) {
		g := e.GPU
		if g == "" {
			g = "all"
		}
		var errs []float64
		for _, r := range rows {
			if r.Point.Class == e.Regime && (e.GPU == "" || sameGPU(r.Point.GPU, e.GPU)) {
				errs = append(errs, r.Err)
			}
		}
		s := statsOf(errs)
		cells = append(cells, []string{e.Regime, g, fmt.Sprint(s.Points), fmt.Sprintf("%.1f%%", 100*s.Median), fmt.Sprintf("%.1f%%", 100*s.Worst), fmt.Sprintf("%.0f%%", 100*s.Within20)})
	}
	var all []float64
	for _, r := range rows {
		all = append(all, r.Err)
	}
	s := statsOf(all)
	cells = append(cells, []string{"all", "all", fmt.Sprint(s.Points), fmt.Sprintf("%.1f%%", 100*s.Median), fmt.Sprintf("%.1f%%", 100*s.Worst), fmt.Sprintf("%.0f%%", 100*s.Within20)})
	printGrid(w, []string{"regime", "GPU", "points", "median", "worst", "≤20%"}, cells)
}
