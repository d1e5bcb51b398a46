package main

// servelab fidelity: the step model held against published measurements.
// Each point carries a servelab command that reproduces its setting; the
// command runs in-process under each profile and the metric is read off its
// JSON as the points' README says. --fit refits a profile's per-GPU
// constants to the points with the same fitting code as `servelab calibrate`.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"servelab/cmd/internal/atomicfile"
	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
	"servelab/sim/calibrate"
)

// fidelityPoint is one published figure (../shared/fidelity/points.json).
type fidelityPoint struct {
	ID        string  `json:"id"`
	SourceURL string  `json:"source_url"`
	Model     string  `json:"model"`
	GPU       string  `json:"gpu"`
	Engine    string  `json:"engine"`
	Setting   string  `json:"setting"`
	Metric    string  `json:"metric"`
	Published float64 `json:"published"`
	Regime    string  `json:"regime"`
	Cmd       string  `json:"servelab_cmd"`
}

const defaultPoints = "cmd/servelab/testdata/fidelity/points.json"

func loadPoints(path string) ([]fidelityPoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pts []fidelityPoint
	if err := json.Unmarshal(data, &pts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, p := range pts {
		if p.ID == "" || !(p.Published > 0) || !strings.HasPrefix(p.Cmd, "servelab ") {
			return nil, fmt.Errorf("%s: point %d (%q) needs id, a positive published value and a servelab_cmd", path, i, p.ID)
		}
	}
	return pts, nil
}

// runs expands the point's command into argument lists (one per seed of a
// {1,2,...} list), paths made relative to the points' folder.
func (p fidelityPoint) runs(dir string) [][]string {
	cmd := p.Cmd
	if i := strings.Index(cmd, "#"); i >= 0 {
		cmd = cmd[:i]
	}
	fields := strings.Fields(strings.TrimPrefix(cmd, "servelab "))
	var out [][]string
	expand := regexp.MustCompile(`^\{(.*)\}$`)
	out = append(out, nil)
	for _, f := range fields {
		if strings.HasPrefix(f, "inputs/") {
			f = filepath.Join(dir, f)
		}
		if m := expand.FindStringSubmatch(f); m != nil {
			var next [][]string
			for _, a := range out {
				for _, v := range strings.Split(m[1], ",") {
					next = append(next, append(slices.Clone(a), v))
				}
			}
			out = next
			continue
		}
		for i := range out {
			out[i] = append(out[i], f)
		}
	}
	return out
}

// eval runs the point's command under profile and reads its metric.
func (p fidelityPoint) eval(dir, profile string) (float64, error) {
	var vals []float64
	for _, args := range p.runs(dir) {
		args = append(args, "--profile", profile)
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			return 0, fmt.Errorf("%s: servelab %s: %s", p.ID, strings.Join(args, " "), strings.TrimSpace(errb.String()))
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			return 0, fmt.Errorf("%s: %w", p.ID, err)
		}
		num := func(k string) float64 { v, _ := got[k].(float64); return v }
		var v float64
		switch {
		case strings.HasPrefix(p.ID, "vllmci-lat-"):
			v = num("e2e_p99") * 1e3
		case strings.HasPrefix(p.ID, "vllmci-thr-"):
			v = num("completed") / num("sim_seconds")
		case strings.HasPrefix(p.ID, "trt-thr-"):
			// trt-thr-<model>-<batch>-<in>-<out>
			parts := strings.Split(p.ID, "-")
			b, _ := strconv.Atoi(parts[len(parts)-3])
			o, _ := strconv.Atoi(parts[len(parts)-1])
			v = float64(b*o) / num("e2e_p99")
		default: // trt-ttft-, vidur-, sarathi-: one step
			v = num("seconds") * 1e3
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s: no metric in the output", p.ID)
		}
		vals = append(vals, v)
	}
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	return sum / float64(len(vals)), nil
}

// fidelityRow is one point under each profile.
type fidelityRow struct {
	ID        string             `json:"id"`
	GPU       string             `json:"gpu"`
	Regime    string             `json:"regime"`
	Metric    string             `json:"metric"`
	Published float64            `json:"published"`
	Values    map[string]float64 `json:"values"` // by profile
	Errors    map[string]float64 `json:"errors"` // relative, signed
}

func runFidelity(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fidelity", "[--points FILE] [--profiles lecture,vllm] [--json] | --fit [--base vllm] [--write FILE]", stderr)
	points := fs.String("points", defaultPoints, "published points (JSON list with servelab_cmd per point; inputs/ relative to it)")
	profiles := fs.String("profiles", "lecture,vllm", "profiles to compare (names or files), comma-separated")
	asJSON := fs.Bool("json", false, "print JSON")
	fit := fs.Bool("fit", false, "refit the base profile's per-GPU constants to the points and print them")
	base := fs.String("base", "vllm", "--fit: the profile to refit")
	write := fs.String("write", "", "--fit: write the refitted profile here (e.g. sim/profiles/vllm.json)")
	free := fs.String("free", "eff_compute,eff_mem,overhead", "--fit: the constants fitted per GPU, comma-separated")
	only := fs.String("gpu", "", "--fit: refit this GPU only")
	if err := parse(fs, args); err != nil {
		return err
	}
	pts, err := loadPoints(*points)
	if err != nil {
		return err
	}
	dir := filepath.Dir(*points)
	if *fit {
		return fitProfile(pts, dir, *base, *write, strings.Split(*free, ","), *only, stdout)
	}
	names := strings.Split(*profiles, ",")
	files := map[string]string{}
	for _, n := range names {
		files[n] = n
	}
	rows, err := fidelityRows(pts, dir, names, files)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"points": rows, "summary": fidelitySummary(rows, names)})
	}
	printFidelity(stdout, rows, names)
	return nil
}

func fidelityRows(pts []fidelityPoint, dir string, names []string, files map[string]string) ([]fidelityRow, error) {
	var rows []fidelityRow
	for _, p := range pts {
		r := fidelityRow{ID: p.ID, GPU: p.GPU, Regime: p.Regime, Metric: p.Metric, Published: p.Published,
			Values: map[string]float64{}, Errors: map[string]float64{}}
		for _, n := range names {
			v, err := p.eval(dir, files[n])
			if err != nil {
				return nil, err
			}
			r.Values[n], r.Errors[n] = v, v/p.Published-1
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// regimeStats is the median and worst |error| of a set of points.
type regimeStats struct {
	Points   int     `json:"points"`
	Median   float64 `json:"median_abs_error"`
	Worst    float64 `json:"worst_abs_error"`
	Within20 float64 `json:"within_20pct"` // fraction of points
}

func statsOf(errs []float64) regimeStats {
	abs := make([]float64, len(errs))
	within := 0
	for i, e := range errs {
		abs[i] = math.Abs(e)
		if abs[i] <= 0.2 {
			within++
		}
	}
	sort.Float64s(abs)
	s := regimeStats{Points: len(abs)}
	if len(abs) > 0 {
		m := len(abs) / 2
		s.Median = abs[m]
		if len(abs)%2 == 0 {
			s.Median = (abs[m-1] + abs[m]) / 2
		}
		s.Worst = abs[len(abs)-1]
		s.Within20 = float64(within) / float64(len(abs))
	}
	return s
}

// fidelitySummary is, per profile, the stats by regime and over all points.
func fidelitySummary(rows []fidelityRow, names []string) map[string]map[string]regimeStats {
	out := map[string]map[string]regimeStats{}
	for _, n := range names {
		by := map[string][]float64{}
		for _, r := range rows {
			by[r.Regime] = append(by[r.Regime], r.Errors[n])
			by["all"] = append(by["all"], r.Errors[n])
		}
		out[n] = map[string]regimeStats{}
		for k, errs := range by {
			out[n][k] = statsOf(errs)
		}
	}
	return out
}

func printFidelity(w io.Writer, rows []fidelityRow, names []string) {
	head := []string{"point", "published"}
	for _, n := range names {
		head = append(head, n, "err")
	}
	var cells [][]string
	for _, r := range rows {
		row := []string{r.ID, fmt.Sprintf("%.4g", r.Published)}
		for _, n := range names {
			row = append(row, fmt.Sprintf("%.4g", r.Values[n]), fmt.Sprintf("%+.1f%%", 100*r.Errors[n]))
		}
		cells = append(cells, row)
	}
	fmt.Fprintln(w, "Published figures against the step model's profiles (metric per point: see cmd/servelab/testdata/fidelity/README.md)")
	fmt.Fprintln(w)
	printGrid(w, head, cells)
	sum := fidelitySummary(rows, names)
	var regimes []string
	for k := range sum[names[0]] {
		if k != "all" {
			regimes = append(regimes, k)
		}
	}
	sort.Strings(regimes)
	regimes = append(regimes, "all")
	head = []string{"regime", "points"}
	for _, n := range names {
		head = append(head, n+" median", n+" worst", n+" ≤20%")
	}
	cells = nil
	for _, g := range regimes {
		row := []string{g, fmt.Sprint(sum[names[0]][g].Points)}
		for _, n := range names {
			s := sum[n][g]
			row = append(row, fmt.Sprintf("%.1f%%", 100*s.Median), fmt.Sprintf("%.1f%%", 100*s.Worst), fmt.Sprintf("%.0f%%", 100*s.Within20))
		}
		cells = append(cells, row)
	}
	fmt.Fprintln(w, "\n|error| by regime")
	fmt.Fprintln(w)
	printGrid(w, head, cells)
}

// printGrid prints a left-aligned first column and right-aligned others.
func printGrid(w io.Writer, head []string, rows [][]string) { grid(w, "", true, head, rows) }

// fitProfile refits base's constants for each GPU with points, with the
// calibration's fit (calibrate.Fit): each point is evidence whose
// prediction runs its command under a profile holding the candidate
// constants. Constants the points do not pin keep the profile-wide values.
func fitProfile(pts []fidelityPoint, dir, baseName, write string, free []string, only string, stdout io.Writer) error {
	base, err := loadProfile(baseName)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "servelab-fit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	byGPU := map[string][]fidelityPoint{}
	var gpus []string
	for _, p := range pts {
		g, err := hwspecs.Get(p.GPU)
		if err != nil {
			return fmt.Errorf("%s: %w", p.ID, err)
		}
		if _, ok := byGPU[g.Name]; !ok {
			gpus = append(gpus, g.Name)
		}
		byGPU[g.Name] = append(byGPU[g.Name], p)
	}
	out := base
	for _, gname := range gpus {
		if only != "" && !strings.EqualFold(only, gname) {
			continue
		}
		g, _ := hwspecs.Get(gname)
		m, _ := modelspecs.Get(modelspecs.Default)
		start, err := base.Apply(sim.StepModel{Model: m, GPU: g})
		if err != nil {
			return err
		}
		file := filepath.Join(tmp, "candidate.json")
		// The candidate profile: base's physics, the step model's constants for this GPU.
		candidate := func(s sim.StepModel) error {
			p := base
			for _, c := range sim.StepConstants(s, nil) {
				if p, err = p.With(gname, c.Name, c.Value, "candidate"); err != nil {
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
		for _, pt := range byGPU[gname] {
			pt := pt
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
		cal, err := calibrate.Fit(start, free, evidence)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d points\n", gname, len(byGPU[gname]))
		var ids []string
		for _, pt := range byGPU[gname] {
			ids = append(ids, pt.ID)
		}
		for _, c := range cal.Constants {
			state := fmt.Sprintf("±%.0f%%", 100*c.RelStdErr)
			if !c.Identified {
				state = c.Note
			}
			fmt.Fprintf(stdout, "  %-18s %.4g (was %.4g) %s\n", c.Name, c.Value, c.Base, state)
			if c.Identified {
				src := fmt.Sprintf("fitted by `servelab fidelity --fit` (%s free) to the %d published points on %s in cmd/servelab/testdata/fidelity (±%.0f%%)",
					strings.Join(free, ", "), len(ids), gname, 100*c.RelStdErr)
				if out, err = out.With(gname, c.Name, c.Value, src); err != nil {
					return err
				}
			}
		}
		for _, t := range cal.Targets {
			fmt.Fprintf(stdout, "    %-40s published %9.4g  before %9.4g (%+5.1f%%)  after %9.4g (%+5.1f%%)\n",
				t.Source, t.Measured, t.Base, 100*(t.Base/t.Measured-1), t.Fitted, 100*(t.Fitted/t.Measured-1))
		}
		fit := out.GPUs[gname]
		fit.Points = ids
		out.GPUs[gname] = fit
	}
	if write != "" {
		data, err := out.Marshal()
		if err != nil {
			return err
		}
		return atomicfile.WriteFile(write, data, 0o644)
	}
	return nil
}
