// Package calibrate fits a step-model profile's constants to one's own
// measurements. Each file becomes Evidence (measured figures and a way to
// predict them with a step model): a lab run (run.py's or servelab
// measure's JSON, re-run on the simulator) or a `vllm bench serve
// --save-detailed` result (read analytically). Fit adjusts the free
// constants until the predictions match, in log space, and keeps at their
// base values the constants the evidence cannot pin down, saying so.
//
// It imports sim (the step model, profiles, the lab workload) and the
// packages of the files it reads; front ends (cmd/servelab, wasm) import
// it. Nothing in sim imports it.
package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servelab/sim"
	"servelab/sim/internal/floats"
	"servelab/sim/lab"
	"servelab/sim/results"
)

// Evidence is one measurement's figures and how a step model predicts them.
type Evidence struct {
	Source string   // the file (for messages)
	Names  []string // what each figure is
	// Keys are Names with their keys and arguments (see Note), one each.
	Keys     []sim.Note
	Measured []float64 // seconds
	// Noise is each figure's relative measurement uncertainty (0.01 = 1%).
	Noise []float64
	// Predict returns the same figures as the step model would give them.
	Predict func(sim.StepModel) ([]float64, error)
}

// labFigures are the figures of one lab run a calibration matches: the
// typical gap of the quiet window (the decode step), the long prompt's TTFT,
// the worst gap, the typical gap while the long request decodes (its KV
// read in every step) and, when the long prefill spans many steps
// (chunked), the typical gap during it. A typical gap is the window's
// median after dropping gaps under a quarter of it: a client that falls
// behind reads frames in bursts (gaps near zero beside long ones), which
// would pull a median down; a server that falls behind stretches some
// steps, which a median ignores (a mean would not). noise is each figure's
// relative uncertainty: a median's standard error from its gaps' spread
// (1.25 x IQR/1.35/sqrt(n)), a single figure's the step in flight when
// the long prompt arrived (one quiet step); floors 0.2% and 0.5%.
func labFigures(s lab.Summary, gaps []sim.Gap, w sim.LabWorkload) (names []string, vals, noise []float64, keys []sim.Note) {
	add := func(n sim.Note, v, nz float64) {
		if v > 0 {
			names, vals, noise, keys = append(names, n.Text), append(vals, v), append(noise, nz), append(keys, n)
		}
	}
	window := func(lo, hi float64) (typical, se float64, n int) {
		var xs []float64
		for _, g := range gaps {
			if g.TRelInject > lo && g.TRelInject <= hi {
				xs = append(xs, g.Gap)
			}
		}
		if len(xs) == 0 {
			return 0, 0, 0
		}
		floor := sim.Percentile(xs, 50) / 4 // Percentile sorts xs
		k, _ := slices.BinarySearch(xs, floor)
		xs = xs[k:]
		typical = sim.Percentile(xs, 50)
		iqr := sim.Percentile(xs, 75) - sim.Percentile(xs, 25)
		return typical, math.Max(0.002, 1.25*iqr/1.35/math.Sqrt(float64(len(xs)))/typical), len(xs)
	}
	q, qse, _ := window(math.Inf(-1), 0)
	if q == 0 {
		return
	}
	single := func(v float64) float64 { return math.Max(0.005, q/math.Max(v, q)) }
	add(sim.Say("cal.fig.quiet", "quiet ITL p50"), q, qse)
	ttft := s.LongTTFT
	if w.LongCount > 0 {
		add(sim.Say("cal.fig.ttft", "long TTFT"), ttft, single(ttft))
	}
	add(sim.Say("cal.fig.worst", "worst gap"), s.WorstGap, single(s.WorstGap))
	if ttft > 0 && w.LongOutputLen >= 8 {
		if m, se, n := window(ttft+2*q, ttft+float64(w.LongOutputLen-2)*q); n >= 8 {
			add(sim.Say("cal.fig.longdecode", "ITL p50 while the long request decodes"), m, se)
		}
	}
	if ttft > 0 {
		if m, se, n := window(0, ttft); n >= 4*max(1, s.ShortConcurrency) {
			add(sim.Say("cal.fig.prefill", "ITL p50 during the long prefill"), m, se)
		}
	}
	return
}

// shortLab is the part of a lab workload its figures come from: all of it
// up to the long request's prefill and decode (with room for a candidate
// three times slower), not the minute of load after it, so a calibration's
// hundreds of re-runs stay short. (The quiet window stays whole: cutting it
// changes which contexts its median sees.)
func shortLab(w sim.LabWorkload, s lab.Summary) sim.LabWorkload {
	q, ttft := s.ITLQuietP50, s.LongTTFT
	if !(q > 0) {
		return w
	}
	if ttft > 0 && w.LongCount > 0 {
		if end := w.InjectAfter + 3*(ttft+float64(w.LongOutputLen+20)*q); end < w.Duration {
			w.Duration = end
		}
	}
	return w
}

// LabEvidence is a lab run (run.py's or servelab measure's file): the
// simulator re-runs its workload (m.Config) on cfg's engine (policy,
// limits) with each candidate step model and reads the same figures. It
// returns an error for a file with no tokens or no quiet window, a bad
// config, or a workload over sim.MemBudget (sim.CheckLab) on cfg.Step.
func LabEvidence(cfg sim.Config, m *lab.Measured, source string) (Evidence, error) {
	if m.Summary.Error != "" {
		return Evidence{}, sim.Refuse("cal.err.notokens", "%s: the run recorded no tokens (%s)", source, m.Summary.Error)
	}
	w := m.Config.LabWorkload
	if err := w.Validate(); err != nil {
		return Evidence{}, fmt.Errorf("%s: config: %w", source, err)
	}
	names, vals, noise, keys := labFigures(m.Summary, m.Gaps, w)
	if len(vals) == 0 {
		return Evidence{}, sim.Refuse("cal.err.noquiet", "%s: no gaps before the injection (the quiet window) to calibrate against", source)
	}
	ev := Evidence{Source: source, Names: names, Keys: keys, Measured: vals, Noise: noise}
	sw := shortLab(w, m.Summary)
	// Every re-run keeps its requests and tokens: a file's config can ask
	// for more than memory holds (1024 streams x 100,000 tokens for an
	// hour), so the workload is held to the budget of every run, on the
	// base model first and on each candidate the fit tries.
	lower := "config.duration or config.short_concurrency in " + source
	if err := sim.CheckLab(sw, cfg.Step, lower); err != nil {
		return Evidence{}, err
	}
	ev.Predict = func(s sim.StepModel) ([]float64, error) {
		if err := sim.CheckLab(sw, s, lower); err != nil {
			return nil, err
		}
		c := cfg
		c.Step = s
		out, err := sim.RunLab(c, sw)
		if err != nil {
			return nil, err
		}
		pn, pv, _, _ := labFigures(lab.Of(out), lab.GapsFrom(out.Run.Arrivals, out.Run.Inject), w)
		got := make([]float64, len(names))
		for i, n := range names {
			if j := slices.Index(pn, n); j >= 0 {
				got[i] = pv[j]
			}
		}
		return got, nil
	}
	return ev, nil
}

// BenchEvidence is a `vllm bench serve --save-detailed` result. Its file
// has no arrival times, so it is read analytically: the median ITL is a
// decode step of the mean number of requests in flight (Little's law:
// total latency over duration) at the mean context, and the median TTFT a
// prefill of the median prompt plus half a decode step of waiting.
func BenchEvidence(b *results.VLLM, source string) (Evidence, error) {
	var lat, in, out []float64
	var ttfts []float64
	for i := range b.ITLs {
		if i < len(b.Errors) && b.Errors[i] != "" {
			continue
		}
		l := 0.0
		if i < len(b.TTFTs) {
			l = b.TTFTs[i]
			ttfts = append(ttfts, b.TTFTs[i])
		}
		for _, x := range b.ITLs[i] {
			l += x
		}
		lat = append(lat, l)
		if i < len(b.InputLens) {
			in = append(in, float64(b.InputLens[i]))
		}
		if i < len(b.OutputLens) {
			out = append(out, float64(b.OutputLens[i]))
		}
	}
	itl := sim.Percentile(b.AllITLs(), 50)
	if itl <= 0 || len(in) == 0 || len(out) == 0 || !(b.Duration > 0) {
		return Evidence{}, sim.Refuse("cal.err.bench", "%s: needs itls, input_lens, output_lens and duration to calibrate against", source)
	}
	sum := func(xs []float64) float64 {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t
	}
	batch := max(1, int(math.Round(sum(lat)/b.Duration)))
	ctx := int(math.Round(sum(in)/float64(len(in)) + sum(out)/float64(len(out))/2))
	decode := sim.Say("cal.fig.decode", "ITL p50 (decode of %d at context %d)", batch, ctx)
	ev := Evidence{Source: source, Names: []string{decode.Text}, Keys: []sim.Note{decode},
		Measured: []float64{itl}, Noise: []float64{0.02}}
	prompt := 0
	if ttft := sim.Percentile(ttfts, 50); ttft > 0 {
		prompt = int(sim.Percentile(slices.Clone(in), 50))
		pre := sim.Say("cal.fig.prompt", "TTFT p50 (prefill of %d tokens)", prompt)
		ev.Names, ev.Keys = append(ev.Names, pre.Text), append(ev.Keys, pre)
		ev.Measured = append(ev.Measured, ttft)
		ev.Noise = append(ev.Noise, 0.05)
	}
	ev.Predict = func(s sim.StepModel) ([]float64, error) {
		d := s.Decode(batch, batch*ctx).Seconds
		got := []float64{d}
		if prompt > 0 {
			got = append(got, s.Prefill(prompt).Seconds+d/2)
		}
		return got, nil
	}
	return ev, nil
}

// FittedConstant is one constant after calibration.
type FittedConstant struct {
	Name       string  `json:"name"`
	Value      float64 `json:"value"`
	Base       float64 `json:"base"`
	Identified bool    `json:"identified"`
	// RelStdErr is the fitted value's relative standard error from the
	// figures' noise (identified constants only).
	RelStdErr float64 `json:"rel_std_err,omitempty"`
	Note      string  `json:"note,omitempty"`
	// Why is why the constant was kept at its base value, with its key (see Note).
	Why sim.Note `json:"-"`
}

// Target is one measured figure beside the base's and the fit's predictions.
type Target struct {
	Source   string  `json:"source"`
	Name     string  `json:"name"`
	Measured float64 `json:"measured"`
	Base     float64 `json:"base"`
	Fitted   float64 `json:"fitted"`
	// Key is Name with its key and arguments (see Note), when the evidence has them.
	Key sim.Note `json:"-"`
}

// Calibration is what Fit found.
type Calibration struct {
	Step      sim.StepModel    `json:"-"`
	Constants []FittedConstant `json:"constants"`
	Targets   []Target         `json:"targets"`
	// NotIdentified says, for each constant kept at its base value, why.
	NotIdentified []string `json:"not_identified"`
}

// Value returns a constant's value after calibration.
func (c *Calibration) Value(name string) (float64, bool) {
	for _, f := range c.Constants {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// defaultCalibrated is what Fit fits when not told.
var defaultCalibrated = []string{"eff_compute", "eff_mem", "overhead"}

// maxRelStdErr is the largest relative standard error a constant may have
// and still count as identified by the evidence.
const maxRelStdErr = 0.2

// Fit fits the named constants of base (profile constant names:
// eff_compute, eff_mem, overhead, ...) to the evidence. A constant the
// evidence does not pin down (its relative standard error above 20%, or no
// figure depends on it) keeps its base value and is reported. The fit
// minimises the squared log errors weighted by each figure's noise
// (Nelder-Mead on log values); standard errors come from numerical derivatives.
func Fit(base sim.StepModel, free []string, evidence []Evidence) (*Calibration, error) {
	if len(evidence) == 0 {
		return nil, fmt.Errorf("calibrate: no measurements")
	}
	if len(free) == 0 {
		free = defaultCalibrated
	}
	base, err := base.Prepare()
	if err != nil {
		return nil, err
	}
	infos := make([]sim.ConstantInfo, len(free))
	for i, n := range free {
		info, ok := constantInfo(n)
		if !ok {
			return nil, fmt.Errorf("calibrate: unknown constant %q; valid: %s", n, constantNames())
		}
		infos[i] = info
	}
	var meas, noise []float64
	for _, ev := range evidence {
		if len(ev.Names) != len(ev.Measured) || len(ev.Noise) != len(ev.Measured) || ev.Predict == nil {
			return nil, fmt.Errorf("calibrate: evidence %s is malformed", ev.Source)
		}
		meas = append(meas, ev.Measured...)
		noise = append(noise, ev.Noise...)
	}
	predict := func(s sim.StepModel) ([]float64, error) {
		var out []float64
		for _, ev := range evidence {
			p, err := ev.Predict(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ev.Source, err)
			}
			if len(p) != len(ev.Measured) {
				return nil, fmt.Errorf("%s: predicted %d figures, measured %d", ev.Source, len(p), len(ev.Measured))
			}
			out = append(out, p...)
		}
		return out, nil
	}
	basePred, err := predict(base)
	if err != nil {
		return nil, err
	}
	active := make([]int, len(infos)) // indices into infos still free
	for i := range active {
		active[i] = i
	}
	cal := &Calibration{}
	why := map[int]sim.Note{}
	var fit sim.StepModel
	var stderr []float64
	for {
		fit, stderr, err = fitLog(base, infos, active, meas, noise, predict)
		if err != nil {
			return nil, err
		}
		worst := -1
		for k := range active {
			if stderr[k] > maxRelStdErr && (worst < 0 || stderr[k] > stderr[worst]) {
				worst = k
			}
		}
		if worst < 0 {
			break
		}
		i := active[worst]
		switch {
		case math.IsInf(stderr[worst], 1):
			why[i] = sim.Say("cal.why.nofigure", "no figure in these files depends on it")
		case stderr[worst] > 10:
			why[i] = sim.Say("cal.why.nopin", "these files do not pin it")
		default:
			why[i] = sim.Say("cal.why.pin", "these files pin it only to ±%.0f%%", 100*stderr[worst])
		}
		if p := partner(base, infos, active, worst, meas, noise, predict); p != "" {
			why[i] = sim.Say("cal.why.partner", "%s; it trades off against %s (measure another batch size, context or prompt length to separate them)", why[i], p)
		}
		active = slices.Delete(active, worst, worst+1)
	}
	cal.Step = fit
	for i, info := range infos {
		fc := FittedConstant{Name: info.Name, Value: info.Get(&fit), Base: info.Get(&base)}
		if k := slices.Index(active, i); k >= 0 {
			fc.Identified, fc.RelStdErr = true, stderr[k]
		} else {
			fc.Note, fc.Why = sim.Say("cal.kept", "kept at the base value: %s", why[i]).Text, why[i]
			cal.NotIdentified = append(cal.NotIdentified, info.Name+": "+why[i].Text)
		}
		cal.Constants = append(cal.Constants, fc)
	}
	fitPred, err := predict(fit)
	if err != nil {
		return nil, err
	}
	k := 0
	for _, ev := range evidence {
		for j, n := range ev.Names {
			key := sim.Note{Text: n}
			if len(ev.Keys) == len(ev.Names) {
				key = ev.Keys[j]
			}
			cal.Targets = append(cal.Targets, Target{Source: ev.Source, Name: n, Key: key, Measured: ev.Measured[j], Base: basePred[k], Fitted: fitPred[k]})
			k++
		}
	}
	return cal, nil
}

// constantInfo returns the constant a profile may set under name.
func constantInfo(name string) (sim.ConstantInfo, bool) {
	for _, c := range sim.ConstantInfos() {
		if c.Name == name {
			return c, true
		}
	}
	return sim.ConstantInfo{}, false
}

// constantNames returns the names of the constants a profile may set, comma-separated.
func constantNames() string {
	var n []string
	for _, c := range sim.ConstantInfos() {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}

// withLog sets the active constants of s to exp(theta), kept inside each
// constant's range (exp(log(0.01)) rounds to just under 0.01, which Prepare refuses).
func withLog(s sim.StepModel, infos []sim.ConstantInfo, active []int, theta []float64) (sim.StepModel, error) {
	for k, i := range active {
		v := math.Exp(theta[k])
		if in := infos[i]; in.Hi > in.Lo {
			v = math.Min(in.Hi, math.Max(in.Lo, v))
		}
		infos[i].Set(&s, v)
	}
	return s.Prepare()
}

// bounds are the log-space limits of a constant (zero floors become 10 µs or 0.001).
func logBounds(info sim.ConstantInfo) (lo, hi float64) {
	l := info.Lo
	if l <= 0 {
		l = 1e-3
		if info.Unit == "s" {
			l = 1e-5
		}
	}
	return math.Log(l), math.Log(info.Hi)
}

// fitLog minimises over the active constants' logs and
// returns the fitted model and each active constant's relative standard error.
func fitLog(base sim.StepModel, infos []sim.ConstantInfo, active []int, meas, noise []float64,
	predict func(sim.StepModel) ([]float64, error)) (sim.StepModel, []float64, error) {
	n := len(active)
	theta := make([]float64, n)
	lo, hi := make([]float64, n), make([]float64, n)
	for k, i := range active {
		lo[k], hi[k] = logBounds(infos[i])
		theta[k] = math.Min(hi[k], math.Max(lo[k], math.Log(math.Max(infos[i].Get(&base), math.Exp(lo[k])))))
	}
	resid := func(th []float64) ([]float64, error) {
		s, err := withLog(base, infos, active, th)
		if err != nil {
			return nil, err
		}
		p, err := predict(s)
		if err != nil {
			return nil, err
		}
		r := make([]float64, len(meas))
		for j := range meas {
			if p[j] <= 0 {
				r[j] = 10 / noise[j] // a figure the candidate does not produce
				continue
			}
			r[j] = math.Log(p[j]/meas[j]) / noise[j]
		}
		return r, nil
	}
	sq := func(r []float64) float64 {
		t := 0.0
		for _, x := range r {
			t += x * x
		}
		return t
	}
	const h = 0.05 // log step of the derivatives (5%): wide enough to step over the figures' small jumps
	jac := func(th, r0 []float64) ([][]float64, error) {
		J := make([][]float64, len(meas))
		for j := range J {
			J[j] = make([]float64, n)
		}
		for k := range n {
			t2 := slices.Clone(th)
			step := h
			if t2[k]+step > hi[k] {
				step = -h
			}
			t2[k] += step
			r, err := resid(t2)
			if err != nil {
				return nil, err
			}
			for j := range meas {
				J[j][k] = (r[j] - r0[j]) / step
			}
		}
		return J, nil
	}
	// Nelder-Mead: simulated figures jump a little with the step phase (a
	// long prompt waits for the step in flight), which misleads
	// derivative-based steps; the simplex only compares costs.
	cost := func(th []float64) (float64, error) {
		r, err := resid(th)
		if err != nil {
			return 0, err
		}
		return sq(r), nil
	}
	clamp := func(th []float64) []float64 {
		for k := range th {
			th[k] = math.Min(hi[k], math.Max(lo[k], th[k]))
		}
		return th
	}
	for restart := 0; restart < 2 && n > 0; restart++ {
		pts := [][]float64{slices.Clone(theta)}
		for k := range n {
			p := slices.Clone(theta)
			p[k] += 0.2 / float64(restart+1)
			pts = append(pts, clamp(p))
		}
		fs := make([]float64, len(pts))
		var err error
		for i, p := range pts {
			if fs[i], err = cost(p); err != nil {
				return base, nil, err
			}
		}
		for iter := 0; iter < 80*n; iter++ {
			// Order best first.
			idx := make([]int, len(pts))
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(a, b int) int { return floats.Compare(fs[a], fs[b]) })
			np, nf := make([][]float64, len(pts)), make([]float64, len(pts))
			for i, j := range idx {
				np[i], nf[i] = pts[j], fs[j]
			}
			pts, fs = np, nf
			if fs[n]-fs[0] < 1e-9*(1+fs[0]) {
				break
			}
			cen := make([]float64, n)
			for _, p := range pts[:n] {
				for k := range n {
					cen[k] += p[k] / float64(n)
				}
			}
			along := func(t float64) []float64 {
				p := make([]float64, n)
				for k := range n {
					p[k] = cen[k] + t*(pts[n][k]-cen[k])
				}
				return clamp(p)
			}
			xr := along(-1)
			fr, err := cost(xr)
			if err != nil {
				return base, nil, err
			}
			switch {
			case fr < fs[0]:
				xe := along(-2)
				fe, err := cost(xe)
				if err != nil {
					return base, nil, err
				}
				if fe < fr {
					pts[n], fs[n] = xe, fe
				} else {
					pts[n], fs[n] = xr, fr
				}
			case fr < fs[n-1]:
				pts[n], fs[n] = xr, fr
			default:
				xc := along(0.5)
				if fr < fs[n] {
					xc = along(-0.5)
				}
				fc, err := cost(xc)
				if err != nil {
					return base, nil, err
				}
				if fc < math.Min(fr, fs[n]) {
					pts[n], fs[n] = xc, fc
				} else { // shrink towards the best
					for i := 1; i <= n; i++ {
						for k := range n {
							pts[i][k] = pts[0][k] + 0.5*(pts[i][k]-pts[0][k])
						}
						if fs[i], err = cost(pts[i]); err != nil {
							return base, nil, err
						}
					}
				}
			}
		}
		best := 0
		for i := range fs {
			if fs[i] < fs[best] {
				best = i
			}
		}
		theta = pts[best]
	}
	fit, err := withLog(base, infos, active, theta)
	if err != nil {
		return base, nil, err
	}
	stderr := make([]float64, n)
	if n == 0 {
		return fit, stderr, nil
	}
	r, err := resid(theta)
	if err != nil {
		return base, nil, err
	}
	J, err := jac(theta, r)
	if err != nil {
		return base, nil, err
	}
	A, _ := normal(J, r)
	// A tiny ridge keeps A invertible when figures are fewer than constants:
	// a combination the figures do not see gets a huge variance, and only
	// the constants taking part in it inherit it.
	top := 0.0
	for k := range n {
		top = math.Max(top, A[k][k])
	}
	for k := range n {
		A[k][k] += 1e-9 * top
	}
	for k := range n {
		stderr[k] = math.Inf(1)
		if A[k][k] <= 1e-12*top || top == 0 {
			continue // no figure depends on it
		}
		// The k-th diagonal of A^-1: the variance of theta_k with the others free.
		e := make([]float64, n)
		e[k] = 1
		if x, ok := solve(A, e); ok && x[k] > 0 {
			stderr[k] = math.Expm1(math.Min(math.Sqrt(x[k]), 700))
		}
	}
	return fit, stderr, nil
}

// partner names the active constant most correlated with active[k] (|corr| > 0.9).
func partner(base sim.StepModel, infos []sim.ConstantInfo, active []int, k int, meas, noise []float64,
	predict func(sim.StepModel) ([]float64, error)) string {
	// Correlation from the Jacobian at the base values: cosine of the columns.
	th := make([]float64, len(active))
	for j, i := range active {
		th[j] = math.Log(math.Max(infos[i].Get(&base), 1e-5))
	}
	s0, err := withLog(base, infos, active, th)
	if err != nil {
		return ""
	}
	p0, err := predict(s0)
	if err != nil {
		return ""
	}
	cols := make([][]float64, len(active))
	for j := range active {
		t2 := slices.Clone(th)
		t2[j] += 0.01
		s, err := withLog(base, infos, active, t2)
		if err != nil {
			return ""
		}
		p, err := predict(s)
		if err != nil {
			return ""
		}
		cols[j] = make([]float64, len(meas))
		for m := range meas {
			if p[m] > 0 && p0[m] > 0 {
				cols[j][m] = math.Log(p[m]/p0[m]) / noise[m]
			}
		}
	}
	best, bestC := "", 0.9
	for j := range active {
		if j == k {
			continue
		}
		var ab, aa, bb float64
		for m := range meas {
			ab += cols[k][m] * cols[j][m]
			aa += cols[k][m] * cols[k][m]
			bb += cols[j][m] * cols[j][m]
		}
		if aa > 0 && bb > 0 {
			if c := math.Abs(ab) / math.Sqrt(aa*bb); c > bestC {
				best, bestC = infos[active[j]].Name, c
			}
		}
	}
	return best
}

// normal returns J^T J and J^T r.
func normal(J [][]float64, r []float64) ([][]float64, []float64) {
	n := 0
	if len(J) > 0 {
		n = len(J[0])
	}
	A := make([][]float64, n)
	g := make([]float64, n)
	for a := range n {
		A[a] = make([]float64, n)
		for b := range n {
			for j := range J {
				A[a][b] += J[j][a] * J[j][b]
			}
		}
		for j := range J {
			g[a] += J[j][a] * r[j]
		}
	}
	return A, g
}

// solve is Gaussian elimination with partial pivoting; false when singular.
func solve(A [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	M := make([][]float64, n)
	scale := 0.0
	for i := range n {
		M[i] = append(slices.Clone(A[i]), b[i])
		for j := range n {
			scale = math.Max(scale, math.Abs(A[i][j]))
		}
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(M[r][c]) > math.Abs(M[p][c]) {
				p = r
			}
		}
		if math.Abs(M[p][c]) <= 1e-12*math.Max(scale, 1e-300) {
			return nil, false
		}
		M[c], M[p] = M[p], M[c]
		for r := range n {
			if r == c {
				continue
			}
			f := M[r][c] / M[c][c]
			for k := c; k <= n; k++ {
				M[r][k] -= f * M[c][k]
			}
		}
	}
	x := make([]float64, n)
	for i := range n {
		x[i] = M[i][n] / M[i][i]
	}
	return x, true
}

// Profile returns base with the calibrated constants set for the fitted
// step model's GPU, each citing source (the files), under a new name.
func (c *Calibration) Profile(base *sim.Profile, name, source string) (*sim.Profile, error) {
	p := base.Clone()
	p.Name = name
	p.Title = "Calibrated from " + source + " (base " + base.Name + ")"
	gpu := c.Step.GPU.Name
	// The fitted GPU's entry holds every constant the fit used, so the file
	// alone reproduces it.
	var err error
	for _, r := range base.Resolve(gpu) {
		if p, err = p.With(gpu, r.Name, r.Value, r.Source); err != nil {
			return nil, err
		}
	}
	var fitted []string
	for _, f := range c.Constants {
		if f.Identified {
			if p, err = p.With(gpu, f.Name, f.Value, SourceNote(source, f.RelStdErr).Text); err != nil {
				return nil, err
			}
			fitted = append(fitted, f.Name)
		}
	}
	fit := p.GPUs[gpu]
	fit.Note = GPUNote(source, fitted, base.Name).Text
	fit.Points = nil
	p.GPUs[gpu] = fit
	return p, nil
}

// SourceNote is what a calibrated constant's source says: the files
// it was fitted to and its relative standard error (with its key, see Note).
func SourceNote(source string, relStdErr float64) sim.Note {
	return sim.Say("cal.source", "servelab calibrate on %s (±%.1f%%)", source, 100*relStdErr)
}

// GPUNote is the calibrated GPU's note: the files, the constants
// fitted and the base profile (with its key, see Note).
func GPUNote(source string, fitted []string, base string) sim.Note {
	return sim.Say("cal.gpunote", "calibrated on %s: fitted %s; the rest from profile %s", source, strings.Join(fitted, ", "), base)
}

// Lab is the page's one call: fit prof's calibrated constants
// (prof.Calibrates) for cfg's model and GPU to a lab file m, within prof's
// physics and cfg's policy, and return the fit and the calibrated profile
// (named name; Apply it to see the overlay after).
func Lab(cfg sim.Config, prof *sim.Profile, m *lab.Measured, source, name string) (*Calibration, *sim.Profile, error) {
	step, err := prof.Apply(cfg.Step)
	if err != nil {
		return nil, nil, err
	}
	cfg.Step = step
	ev, err := LabEvidence(cfg, m, source)
	if err != nil {
		return nil, nil, err
	}
	cal, err := Fit(step, prof.Calibrates, []Evidence{ev})
	if err != nil {
		return nil, nil, err
	}
	p, err := cal.Profile(prof, name, source)
	return cal, p, err
}
