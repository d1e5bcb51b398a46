package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"servelab/modelspecs"
	"servelab/sim"
	"servelab/sim/scenario"
)

// Command groups: which of the experiment's knobs each simulating
// subcommand binds as flags (the flags themselves are scenario.Knobs').
const (
	simGroups     = scenario.StepGroup | scenario.EngineGroup | scenario.ClusterGroup | scenario.PoissonGroup | scenario.LabGroup | scenario.WorkloadGroup | scenario.ProbeGroup
	goodputGroups = scenario.StepGroup | scenario.EngineGroup | scenario.ClusterGroup | scenario.PoissonGroup | scenario.SLOGroup
	engineGroups  = scenario.StepGroup | scenario.EngineGroup
)

// expFlags are a subcommand's experiment, bound to its flags from the knob
// table, plus the flags that name files (read once the flags are parsed).
type expFlags struct {
	x           scenario.Experiment
	fs          *flag.FlagSet
	modelConfig string
	trace       string
	traceUnit   string
	// resolved is the profile stepModel applied, typed flags included.
	resolved *sim.Profile
}

// addExperimentFlags binds the knobs of groups to fs, over the default experiment.
func addExperimentFlags(fs *flag.FlagSet, groups scenario.Group) *expFlags {
	f := &expFlags{x: scenario.Default(), fs: fs}
	scenario.BindFlags(fs, &f.x, groups)
	if groups&scenario.StepGroup != 0 {
		fs.StringVar(&f.modelConfig, "model-config", "", "Hugging Face config.json to use instead of --model")
	}
	if groups&scenario.PoissonGroup != 0 {
		fs.StringVar(&f.trace, "trace", "", "replay a trace file (CSV or JSONL: arrival, prompt, output) instead of Poisson arrivals")
		fs.StringVar(&f.traceUnit, "trace-unit", "", "numeric trace arrivals are s, ms or us (default: seconds, or ms for *_ms columns and Mooncake's timestamp)")
	}
	return f
}

// typed reports whether the flag was given on the command line.
func (f *expFlags) typed(name string) bool { return flagSet(f.fs, name) }

// stepModel reads the files the flags name (--model-config, a --profile
// file) into the experiment and builds its step model.
func (f *expFlags) stepModel() (sim.StepModel, error) {
	if f.modelConfig != "" && f.x.Custom == nil {
		data, err := readCapped(f.modelConfig, maxConfigBytes)
		if err != nil {
			return sim.StepModel{}, fmt.Errorf("--model-config: %w", err)
		}
		m, err := modelspecs.FromHFConfig(data, f.modelConfig)
		if err != nil {
			return sim.StepModel{}, err
		}
		f.x.Custom, f.x.Model = &m, m.Name
	}
	if f.x.Loaded == nil && isProfileFile(f.x.Profile) {
		p, err := loadProfile(f.x.Profile)
		if err != nil {
			return sim.StepModel{}, err
		}
		f.x.Loaded, f.x.Profile = p, p.Name
	}
	step, prof, err := f.x.StepModel()
	if err != nil {
		return sim.StepModel{}, err
	}
	f.resolved = prof
	return step, nil
}

// config builds the colocated engine on step.
func (f *expFlags) config(step sim.StepModel) (sim.Config, error) {
	// A typed 0 is out of range; left out, 0 is the policy's default.
	if f.x.Budget == 0 && f.typed("budget") {
		return sim.Config{}, fmt.Errorf("--budget must be in 1..%d tokens, got 0 (leave it out for the policy's default)", sim.MaxTokens)
	}
	if f.x.Policy == scenario.Disaggregated {
		x := f.x
		x.Policy = scenario.PrefillOnly // the limits are per instance; each instance's policy follows its role
		return x.ConfigFor(step)
	}
	if err := f.x.Validate(); err != nil {
		return sim.Config{}, err
	}
	return f.x.ConfigFor(step)
}

// cluster builds the disaggregated deployment on step.
func (f *expFlags) cluster(step sim.StepModel) (sim.Cluster, error) {
	if _, err := f.config(step); err != nil {
		return sim.Cluster{}, err
	}
	return f.x.ClusterFor(step)
}

// requestsAt builds the open-loop workload at rate: --trace's requests, or Poisson's.
func (f *expFlags) requestsAt(rate float64) ([]sim.Request, error) {
	if f.trace != "" && f.x.TraceReqs == nil {
		reqs, err := readTraceFile(f.trace, f.traceUnit)
		if err != nil {
			return nil, err
		}
		f.x.Workload, f.x.TraceReqs, f.x.TraceName = scenario.Trace, reqs, f.trace
	}
	return f.x.RequestsAt(rate)
}

// source names the flags that set the workload's size, for messages.
func (f *expFlags) source() string {
	switch {
	case f.trace != "":
		return "the requests of --trace " + f.trace
	case f.x.OutputDist != "":
		return fmt.Sprintf("--requests %d x --output-dist %s", f.x.Requests, f.x.OutputDist)
	}
	return fmt.Sprintf("--requests %d x --output %d", f.x.Requests, f.x.Output)
}

// checkWorkload refuses a workload name sim does not know, and settings
// that would be silently ignored: a --trace with Poisson's own knobs, or
// with another workload named.
func (f *expFlags) checkWorkload() error {
	if f.trace != "" {
		if f.typed("workload") && f.x.Workload != scenario.Trace {
			return fmt.Errorf("--trace replays its own requests: leave out --workload %s", f.x.Workload)
		}
		for _, name := range []string{"rate", "requests", "prompt", "output", "prompt-dist", "output-dist", "length-dist", "seed"} {
			if f.typed(name) {
				return fmt.Errorf("--trace fixes arrivals and lengths: --%s would be ignored; leave it out", name)
			}
		}
		f.x.Workload = scenario.Trace
	} else if f.x.Workload == scenario.Trace {
		return fmt.Errorf("--workload trace needs --trace FILE")
	}
	return f.x.Validate()
}

// maxSpan bounds the simulated seconds a Poisson workload may spread over:
// at 1e8 s a float64 clock still resolves 15 ns, while at --rate 1e-14 the
// arrivals lie near 1e17 s, where a whole step rounds away and TTFT and
// TPOT print as 0.00 ms.
const maxSpan = 1e8

// checkRate refuses a --rate so low that the workload's arrivals outrun the
// clock's precision.
func (f *expFlags) checkRate() error {
	if f.trace != "" || !(f.x.Rate > 0) || f.x.Requests < 1 {
		return nil // a trace has its own times; sim.PoissonLengths names other bad values
	}
	if span := float64(f.x.Requests) / f.x.Rate; span > maxSpan {
		return fmt.Errorf("--rate %g req/s spreads %d requests over about %.2g simulated seconds, beyond what the clock resolves: use --rate >= %.2g",
			f.x.Rate, f.x.Requests, span, float64(f.x.Requests)/maxSpan)
	}
	return nil
}

// maxConfigBytes bounds a config.json or profile read whole (a real one is a few KB).
const maxConfigBytes = 4 << 20

// readCapped reads a file of at most limit bytes (a device or a FIFO
// included), refusing a longer one before reading it all.
func readCapped(path string, limit int64) ([]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over %d MB: not a config.json or a profile", path, limit>>20)
	}
	return data, nil
}
