package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"servelab/cmd/internal/atomicfile"
	"servelab/sim"
	"servelab/sim/calibrate"
	"servelab/sim/lab"
	"servelab/sim/results"
)

func runCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", "FILE.json [more.json ...] [--base lecture|vllm|PROFILE.json] [--policy P --budget B] [-o out.json] [--json]", stderr)
	ef := addExperimentFlags(fs, engineGroups)
	fs.Var(fs.Lookup("profile").Value, "base", "the profile whose physics the fit stays within and whose other constants it keeps (lecture, vllm or a file); same as --profile")
	out := fs.String("o", "", "write the calibrated profile to this file (then: servelab sim --profile FILE)")
	free := fs.String("constants", "", "constants to fit, comma-separated (default: the base profile's calibrates list, or eff_compute,eff_mem,overhead)")
	tokensPerWord := addTokensPerWord(fs)
	asJSON := fs.Bool("json", false, "print JSON: the fitted constants under the flags' names (eff_compute, eff_mem, overhead), figures, residuals")
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return errors.New("calibrate needs one or more measured files")
	}
	limitMemory()
	step, err := ef.stepModel()
	if err != nil {
		return err
	}
	cfg, err := ef.config(step)
	if err != nil {
		return err
	}
	var evidence []calibrate.Evidence
	for _, p := range files {
		ev, err := readEvidence(cfg, p, *tokensPerWord)
		if err != nil {
			return err
		}
		evidence = append(evidence, ev)
	}
	base := ef.resolved
	names := base.Calibrates
	if *free != "" {
		names = strings.Split(*free, ",")
	}
	cal, err := calibrate.Fit(step, names, evidence)
	if err != nil {
		return err
	}
	var bases []string
	for _, p := range files {
		bases = append(bases, filepath.Base(p))
	}
	source := strings.Join(bases, ", ")
	if *out != "" {
		name := strings.TrimSuffix(filepath.Base(*out), filepath.Ext(*out))
		prof, err := cal.Profile(base, name, source)
		if err != nil {
			return err
		}
		data, err := prof.Marshal()
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(*out, data, 0o644); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
	}
	if *asJSON {
		res := map[string]any{"base": base.Name, "model": step.Model.Name, "gpu": step.GPU.Name, "tp": step.TP,
			"policy": cfg.Policy.Name(), "files": files, "constants": cal.Constants, "targets": cal.Targets,
			"not_identified": append([]string{}, cal.NotIdentified...)}
		for _, c := range cal.Constants {
			res[c.Name] = c.Value
		}
		if *out != "" {
			res["profile"] = *out
		}
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "Calibrated %s on %s (TP %d, policy %s) within profile %s, from %s\n\n",
		step.Model.Name, step.GPU.Name, step.TP, cfg.Policy.Name(), base.Name, source)
	fmt.Fprintf(stdout, "  %-12s %10s %10s  %s\n", "constant", "base", "fitted", "")
	for _, c := range cal.Constants {
		note := fmt.Sprintf("±%.1f%%", 100*c.RelStdErr)
		if !c.Identified {
			note = "not identified (kept)"
		}
		fmt.Fprintf(stdout, "  %-12s %10s %10s  %s\n", c.Name, constantText(c.Name, c.Base), constantText(c.Name, c.Value), note)
	}
	fmt.Fprintf(stdout, "\n  %-44s %10s %10s %10s %9s\n", "figure (ms)", "measured", "base", "fitted", "residual")
	for _, t := range cal.Targets {
		label := t.Name
		if len(files) > 1 {
			label = filepath.Base(t.Source) + ": " + label
		}
		fmt.Fprintf(stdout, "  %-44s %10.2f %10.2f %10.2f %+8.1f%%\n", label, t.Measured*1e3, t.Base*1e3, t.Fitted*1e3, 100*(t.Fitted/t.Measured-1))
	}
	if len(cal.NotIdentified) > 0 {
		fmt.Fprintln(stdout, "\nNot identified by these files:")
		for _, s := range cal.NotIdentified {
			fmt.Fprintf(stdout, "  %s\n", s)
		}
	}
	if *out != "" {
		fmt.Fprintf(stdout, "\nWrote profile %s (servelab sim --like %s --profile %s)\n", *out, files[0], *out)
	}
	return nil
}

// constantText prints a constant with its unit (seconds as ms).
func constantText(name string, v float64) string {
	for _, c := range sim.ConstantInfos() {
		if c.Name == name && c.Unit == "s" {
			return fmt.Sprintf("%.3f ms", v*1e3)
		}
	}
	return fmt.Sprintf("%.3f", v)
}

// readEvidence reads a measured-JSON file (run.py, servelab measure), its
// prompt lengths turned from words into tokens at tokensPerWord, or a vLLM
// bench result (in tokens already) and returns it as calibration evidence.
func readEvidence(cfg sim.Config, path string, tokensPerWord float64) (calibrate.Evidence, error) {
	m, err := readMeasuredFile(path)
	if err == nil {
		if m.Config.LabWorkload, err = lab.InTokens(m.Config.LabWorkload, tokensPerWord); err != nil {
			return calibrate.Evidence{}, fmt.Errorf("--tokens-per-word: %w", err)
		}
		return calibrate.LabEvidence(cfg, m, path)
	}
	if !strings.Contains(err.Error(), "summary: missing") {
		return calibrate.Evidence{}, err
	}
	f, ferr := os.Open(path)
	if ferr != nil {
		return calibrate.Evidence{}, ferr
	}
	defer f.Close()
	b, verr := results.ReadVLLM(f)
	if verr != nil {
		return calibrate.Evidence{}, fmt.Errorf("%s: neither a measured-JSON file (%v) nor a vLLM bench result (%v)", path, err, verr)
	}
	return calibrate.BenchEvidence(b, path)
}

// parseInterleaved parses flags that may come before, between or after
// positional arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
