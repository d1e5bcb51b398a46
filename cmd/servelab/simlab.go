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
	like  string
	label string
	save  string
}

func addLabFlags(fs *flag.FlagSet) *labFlags {
	f := &labFlags{}
	fs.StringVar(&f.like, "like", "", "take the workload from a measured file: a lab JSON's config (run.py, servelab measure), or a benchmark tool's result (its lengths, rate or concurrency; FILE#N picks run N)")
	fs.StringVar(&f.label, "label", "", "lab: label for the summary (default: sim-<policy>)")
	fs.StringVar(&f.save, "save", "", "lab: also write the run as measured JSON (config, summary, gaps) to this file")
	return f
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
		w = m.Config.LabWorkload
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
