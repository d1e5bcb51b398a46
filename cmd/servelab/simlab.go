package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"servelab/cmd/internal/labclient"
	"servelab/sim"
	"servelab/sim/lab"
)

// labFlags are `servelab sim --workload lab`'s knobs: run.py's flags, same
// names and defaults, or a measured file's config via --like.
type labFlags struct {
	workload string
	w        sim.LabWorkload
	like     string
	label    string
	save     string
}

func addLabFlags(fs *flag.FlagSet) *labFlags {
	f := &labFlags{w: sim.DefaultLab()}
	fs.StringVar(&f.workload, "workload", "poisson", "poisson (open loop, --rate) or lab (run.py's closed loop with an injected long prompt)")
	fs.IntVar(&f.w.ShortConcurrency, "short-concurrency", f.w.ShortConcurrency, "lab: short requests kept in flight")
	fs.IntVar(&f.w.ShortInputLen, "short-input-len", f.w.ShortInputLen, "lab: prompt tokens of the short requests")
	fs.IntVar(&f.w.ShortOutputLen, "short-output-len", f.w.ShortOutputLen, "lab: output tokens of the short requests")
	fs.IntVar(&f.w.LongInputLen, "long-input-len", f.w.LongInputLen, "lab: prompt tokens of the injected long request")
	fs.IntVar(&f.w.LongOutputLen, "long-output-len", f.w.LongOutputLen, "lab: output tokens of the long request")
	fs.IntVar(&f.w.LongCount, "long-count", f.w.LongCount, "lab: long prompts injected at once")
	fs.Float64Var(&f.w.Duration, "duration", f.w.Duration, "lab: seconds of short-request load")
	fs.Float64Var(&f.w.InjectAfter, "inject-after", f.w.InjectAfter, "lab: seconds into the run at which the long prompt arrives")
	fs.StringVar(&f.like, "like", "", "take the workload from a measured file: a lab JSON's config (run.py, servelab measure), or a benchmark tool's result (its lengths, rate or concurrency; FILE#N picks run N)")
	fs.StringVar(&f.label, "label", "", "lab: label for the summary (default: sim-<policy>)")
	fs.StringVar(&f.save, "save", "", "lab: also write the run as measured JSON (config, summary, gaps) to this file")
	return f
}

func (f *labFlags) active() bool { return f.workload == "lab" || f.like != "" }

func runLabSim(f *labFlags, ef *engineFlags, step sim.StepModel, asJSON bool, stdout io.Writer) error {
	if f.workload != "lab" && f.workload != "poisson" {
		return fmt.Errorf("--workload must be poisson or lab, got %q", f.workload)
	}
	if ef.policy == "disaggregated" {
		return fmt.Errorf("the lab workload runs on one engine; --policy disaggregated takes Poisson arrivals or a --trace")
	}
	w := f.w
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
