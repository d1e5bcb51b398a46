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
	"servelab/sim"
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
	// Class is the regime whose error the point counts in (sim.Regimes:
	// ttft, tpot, throughput).
	Class string `json:"class"`
	Cmd   string `json:"servelab_cmd"`
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
		if !slices.Contains(sim.Regimes(), p.Class) {
			return nil, fmt.Errorf("%s: point %q: class %q is not one of %s", path, p.ID, p.Class, strings.Join(sim.Regimes(), ", "))
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
	fs := newFlags("fidelity", "[--points FILE] [--profiles lecture,vllm] [--cv K] [--json] | --fit [--base vllm] [--write FILE]", stderr)
	points := fs.String("points", defaultPoints, "published points (JSON list with servelab_cmd per point; inputs/ relative to it)")
	profiles := fs.String("profiles", "lecture,vllm", "profiles to compare (names or files), comma-separated")
	asJSON := fs.Bool("json", false, "print JSON")
	cv := fs.Int("cv", 0, "also cross-validate the vllm profile's fit: K folds, each point predicted by the fit made without its fold (0: off)")
	workers := fs.Int("workers", 2, "--cv, --fit: folds fitted at once")
	fit := fs.Bool("fit", false, "refit the base profile to the points (every stage of the vllm fit), cross-validate the fit (--cv, default 5) and print both")
	base := fs.String("base", "vllm", "--fit, --cv: the profile to refit")
	write := fs.String("write", "", "--fit: write the refitted profile, with its cross-validated errors, here (e.g. sim/profiles/vllm.json)")
	if err := parse(fs, args); err != nil {
		return err
	}
	pts, err := loadPoints(*points)
	if err != nil {
		return err
	}
	dir := filepath.Dir(*points)
	if *fit && *cv == 0 {
		*cv = 5
	}
	var held []heldOut
	if *cv != 0 {
		b, err := loadProfile(*base)
		if err != nil {
			return err
		}
		if held, err = crossValidate(b, pts, dir, vllmStages, *cv, *workers); err != nil {
			return err
		}
	}
	if *fit {
		return fitProfile(pts, dir, *base, *write, held, *cv, stdout)
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
		out := map[string]any{"points": rows, "summary": fidelitySummary(rows, names)}
		if held != nil {
			out["cross_validated"] = sim.CrossValidated{Method: cvMethod(*cv, len(pts)), Errors: cvErrors(held)}
		}
		return writeJSON(stdout, out)
	}
	printFidelity(stdout, rows, names)
	if held != nil {
		printCV(stdout, held, *cv)
	}
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

// fitProfile refits base to every point (fitProcedure with vllmStages),
// prints each stage's fit and the held-out errors, and writes the profile,
// with those errors, to write (if set).
func fitProfile(pts []fidelityPoint, dir, baseName, write string, held []heldOut, k int, stdout io.Writer) error {
	base, err := loadProfile(baseName)
	if err != nil {
		return err
	}
	out, err := fitProcedure(base, pts, dir, vllmStages, stdout)
	if err != nil {
		return err
	}
	out.CrossValidated = &sim.CrossValidated{Method: cvMethod(k, len(pts)), Errors: cvErrors(held)}
	printCV(stdout, held, k)
	if write != "" {
		data, err := out.Marshal()
		if err != nil {
			return err
		}
		return atomicfile.WriteFile(write, data, 0o644)
	}
	return nil
}

// roundSig rounds v to n significant digits (the profile's values are
// written so, not with the optimiser's noise).
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}
