package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"servelab/cmd/internal/labclient"
	"servelab/sim"
	"servelab/sim/lab"
	"servelab/sim/scenario"
)

// labFlags are `servelab sim`'s lab options beside the workload's knobs:
// a measured file to take the workload from, the summary's label, a file
// to save the run to.
type labFlags struct {
	like          string
	label         string
	save          string
	tokensPerWord *float64
	fs            *flag.FlagSet
}

func addLabFlags(fs *flag.FlagSet) *labFlags {
	f := &labFlags{fs: fs}
	fs.StringVar(&f.like, "like", "", "take the workload from a measured file: a lab JSON's config (run.py, servelab measure), or a benchmark tool's result (its lengths, rate or concurrency; FILE#N picks run N)")
	fs.StringVar(&f.label, "label", "", "lab: label for the summary (default: sim-<policy>)")
	fs.StringVar(&f.save, "save", "", "lab: also write the run as measured JSON (config, summary, gaps) to this file")
	f.tokensPerWord = addTokensPerWord(fs)
	return f
}

// addTokensPerWord defines --tokens-per-word on fs: the factor sim --like
// and calibrate turn a lab file's prompt lengths (words) into tokens by.
// It is a flag of those two commands, not a knob of the experiment: it
// says how to read a measured file, while the experiment's lengths
// (--short-input-len, the page's sliders) are tokens already.
func addTokensPerWord(fs *flag.FlagSet) *float64 {
	return fs.Float64("tokens-per-word", lab.DefaultTokensPerWord,
		"prompt tokens per word of a lab file's short_input_len and long_input_len: run.py and servelab measure write them in words (five-digit numbers, about 3 tokens each on Llama 3's tokenizer); the default is what servelab labserver counts by default (its --tokens-per-word)")
}

func runLabSim(f *labFlags, ef *expFlags, step sim.StepModel, asJSON bool, stdout io.Writer) error {
	if ef.x.Policy == scenario.Disaggregated {
		return fmt.Errorf("the lab workload runs on one engine; --policy disaggregated takes Poisson arrivals or a --trace")
	}
	w := ef.x.Lab
	if f.like != "" {
		file, err := os.Open(f.like)
		if err != nil {
			return fmt.Errorf("--like: %w", err)
		}
		m, err := lab.Read(file)
		file.Close()
		if err != nil {
			return fmt.Errorf("--like %s: %w", f.like, err)
		}
		if w, err = lab.InTokens(m.Config.LabWorkload, *f.tokensPerWord); err != nil {
			return fmt.Errorf("--tokens-per-word: %w", err)
		}
	} else if flagSet(f.fs, "tokens-per-word") {
		return fmt.Errorf("--tokens-per-word converts the prompt lengths of a --like lab file: without one, --short-input-len and --long-input-len are tokens already")
	}
	cfg, err := ef.config(step)
	if err != nil {
		return err
	}
	if err := checkLab(w, step, f.like); err != nil {
		return err
	}
	out, err := sim.RunLab(cfg, w)
	if err != nil {
		return err
	}
	s := lab.Of(out)
	s.Label = f.label
	if s.Label == "" {
		s.Label = "sim-" + cfg.Policy.Name()
	}
	s.BaseURL = "sim://" + step.Model.Name + "@" + step.GPU.Name
	if f.save != "" {
		c := lab.DefaultConfig()
		c.BaseURL, c.Model, c.Label = s.BaseURL, step.Model.Name, s.Label
		c.LabWorkload, c.Warmup, c.JSON = w, 0, f.save
		m := &lab.Measured{Config: c, Summary: s, Gaps: lab.GapsFrom(out.Run.Arrivals, out.Run.Inject)}
		if err := labclient.SaveMeasured(f.save, m); err != nil {
			return err
		}
	}
	if asJSON {
		return writeJSON(stdout, s)
	}
	fmt.Fprintf(stdout, "Simulated lab run, %s: %d short streams (%d in / %d out), %d x %d-token prompt at t+%gs of %gs\n",
		s.Label, w.ShortConcurrency, w.ShortInputLen, w.ShortOutputLen, w.LongCount, w.LongInputLen, w.InjectAfter, w.Duration)
	labclient.Report(stdout, s, "simulated")
	if c := sim.Count(out.Outcome.Results); c.Preemptions > 0 || c.Rejected > 0 {
		fmt.Fprintf(stdout, "engine: %s\n", c)
	}
	return nil
}
