package main

import (
	"flag"
	"fmt"
	"io"

	"servelab/sim"
)

func init() {
	register(command{name: "sim", summary: "simulate a workload (Poisson, the lab's closed loop, or a trace) and print latency figures", run: runSim})
}

// simFigures is `servelab sim --json` for open-loop workloads; times in seconds.
type simFigures struct {
	Policy      string  `json:"policy"`
	Model       string  `json:"model"`
	GPU         string  `json:"gpu"`
	TTFTP50     float64 `json:"ttft_p50"`
	TTFTP90     float64 `json:"ttft_p90"`
	TTFTP99     float64 `json:"ttft_p99"`
	TPOTP50     float64 `json:"tpot_p50"`
	TPOTP90     float64 `json:"tpot_p90"`
	TPOTP99     float64 `json:"tpot_p99"`
	ITLP50      float64 `json:"itl_p50"`
	ITLP90      float64 `json:"itl_p90"`
	ITLP99      float64 `json:"itl_p99"`
	ITLMax      float64 `json:"itl_max"`
	E2EP50      float64 `json:"e2e_p50"`
	E2EP90      float64 `json:"e2e_p90"`
	E2EP99      float64 `json:"e2e_p99"`
	Throughput  float64 `json:"throughput_tok_s"`
	Submitted   int     `json:"submitted"`
	Completed   int     `json:"completed"`
	Rejected    int     `json:"rejected"`
	Unfinished  int     `json:"unfinished"`
	Preemptions int     `json:"preemptions"`
	Steps       int     `json:"steps"`
	SimSeconds  float64 `json:"sim_seconds"`
	Truncated   bool    `json:"truncated"`
	RejectedWhy string  `json:"rejected_reason,omitempty"`
}

// workloadFlags describe the open-loop workload.
type workloadFlags struct {
	rate                float64
	requests            int
	prompt, output      int
	promptDist, outDist string
	trace, traceUnit    string
	seed                uint64
}

func addWorkloadFlags(fs *flag.FlagSet) *workloadFlags {
	w := &workloadFlags{}
	fs.Float64Var(&w.rate, "rate", 10, "Poisson arrival rate, requests/s")
	fs.IntVar(&w.requests, "requests", 1500, "requests to simulate")
	fs.IntVar(&w.prompt, "prompt", 512, "prompt tokens (fixed)")
	fs.IntVar(&w.output, "output", 64, "output tokens (fixed)")
	fs.StringVar(&w.promptDist, "prompt-dist", "", "prompt length distribution instead of --prompt: N, uniform:LO,HI or lognormal:MU,SIGMA,LO,HI")
	fs.StringVar(&w.outDist, "output-dist", "", "output length distribution instead of --output (same forms)")
	fs.StringVar(&w.trace, "trace", "", "replay a trace file (CSV or JSONL: arrival, prompt, output) instead of Poisson arrivals")
	fs.StringVar(&w.traceUnit, "trace-unit", "", "numeric trace arrivals are s, ms or us (default: seconds, or ms for *_ms columns and Mooncake's timestamp)")
	fs.Uint64Var(&w.seed, "seed", 0, "workload seed")
	return w
}

// requests builds the open-loop workload at the given rate.
func (w *workloadFlags) requestsAt(rate float64) ([]sim.Request, error) {
	if w.trace != "" {
		return readTraceFile(w.trace, w.traceUnit)
	}
	p, o := sim.Fixed(w.prompt), sim.Fixed(w.output)
	var err error
	if w.promptDist != "" {
		if p, err = sim.ParseLengths(w.promptDist); err != nil {
			return nil, fmt.Errorf("--prompt-dist: %w", err)
		}
	}
	if w.outDist != "" {
		if o, err = sim.ParseLengths(w.outDist); err != nil {
			return nil, fmt.Errorf("--output-dist: %w", err)
		}
	}
	return sim.PoissonLengths(w.requests, rate, p, o, w.seed)
}

// source names the flags that set the workload's size, for messages.
func (w *workloadFlags) source() string {
	switch {
	case w.trace != "":
		return "the requests of --trace " + w.trace
	case w.outDist != "":
		return fmt.Sprintf("--requests %d x --output-dist %s", w.requests, w.outDist)
	}
	return fmt.Sprintf("--requests %d x --output %d", w.requests, w.output)
}

// maxSpan bounds the simulated seconds a Poisson workload may spread over:
// at 1e8 s a float64 clock still resolves 15 ns, while at --rate 1e-14 the
// arrivals lie near 1e17 s, where a whole step rounds away and TTFT and
// TPOT print as 0.00 ms.
const maxSpan = 1e8

// checkRate refuses a --rate so low that the workload's arrivals outrun the
// clock's precision.
func (w *workloadFlags) checkRate() error {
	if w.trace != "" || !(w.rate > 0) || w.requests < 1 {
		return nil // a trace has its own times; sim.PoissonLengths names other bad values
	}
	if span := float64(w.requests) / w.rate; span > maxSpan {
		return fmt.Errorf("--rate %g req/s spreads %d requests over about %.2g simulated seconds, beyond what the clock resolves: use --rate >= %.2g",
			w.rate, w.requests, span, float64(w.requests)/maxSpan)
	}
	return nil
}

func runSim(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", "[--workload poisson|lab] [flags] [--json]", stderr)
	sf := addStepFlags(fs)
	ef := addEngineFlags(fs)
	cf := addClusterFlags(fs)
	wf := addWorkloadFlags(fs)
	lf := addLabFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	limitMemory()
	step, err := sf.stepModel()
	if err != nil {
		return err
	}
	if lf.like != "" {
		b, note, err := benchLike(lf.like)
		if err != nil {
			return err
		}
		if b != nil {
			return runBenchLike(b, note, ef, wf, step, *asJSON, stdout)
		}
	}
	if lf.active() {
		return runLabSim(lf, ef, step, *asJSON, stdout)
	}
	if err := wf.checkRate(); err != nil {
		return err
	}
	reqs, err := wf.requestsAt(wf.rate)
	if err != nil {
		return err
	}
	if err := checkOpenLoop(reqs, wf.source()); err != nil {
		return err
	}
	var out *sim.Outcome
	policy := ef.policy
	if policy == "disaggregated" {
		c, err := cf.cluster(ef, step)
		if err != nil {
			return err
		}
		c.RecordTokens = true
		co, err := sim.RunDisaggregated(c, reqs)
		if err != nil {
			return err
		}
		out, policy = &co.Outcome, fmt.Sprintf("disaggregated %s", c)
	} else {
		cfg, err := ef.config(step)
		if err != nil {
			return err
		}
		cfg.CountGaps = true // exact ITL percentiles without keeping every token's time
		if out, err = sim.Run(cfg, reqs); err != nil {
			return err
		}
		policy = cfg.Policy.Name()
	}
	s := out.Summary()
	f := simFigures{Policy: policy, Model: step.Model.Name, GPU: step.GPU.Name,
		TTFTP50: s.TTFTP50, TTFTP90: s.TTFTP90, TTFTP99: s.TTFTP99,
		TPOTP50: s.TPOTP50, TPOTP90: s.TPOTP90, TPOTP99: s.TPOTP99,
		ITLP50: s.ITLP50, ITLP90: s.ITLP90, ITLP99: s.ITLP99, ITLMax: s.ITLMax,
		E2EP50: s.E2EP50, E2EP90: s.E2EP90, E2EP99: s.E2EP99, Throughput: s.Throughput,
		Submitted: s.Submitted, Completed: s.Completed, Rejected: s.Rejected, Unfinished: s.Unfinished,
		Preemptions: s.Preemptions, Steps: out.Steps, SimSeconds: out.End, Truncated: out.Truncated}
	for _, r := range out.Results {
		if r.Rejected != "" {
			f.RejectedWhy = r.Rejected
			break
		}
	}
	if *asJSON {
		return writeJSON(stdout, f)
	}
	fmt.Fprintf(stdout, "%s, %s on %s: %s\n", f.Policy, f.Model, f.GPU, s.Counts)
	if f.RejectedWhy != "" {
		fmt.Fprintf(stdout, "  first rejection: %s\n", f.RejectedWhy)
	}
	if f.Truncated {
		fmt.Fprintf(stdout, "  WARNING: cut short after %d iterations\n", f.Steps)
	}
	table(stdout, []string{"", "P50", "P90", "P99"}, [][]string{
		{"TTFT", ms(f.TTFTP50), ms(f.TTFTP90), ms(f.TTFTP99)},
		{"TPOT", ms(f.TPOTP50), ms(f.TPOTP90), ms(f.TPOTP99)},
		{"ITL", ms(f.ITLP50), ms(f.ITLP90), ms(f.ITLP99)},
		{"E2E", ms(f.E2EP50), ms(f.E2EP90), ms(f.E2EP99)},
	})
	fmt.Fprintf(stdout, "  throughput %.0f output tok/s over %.2f simulated s (%d iterations)\n", f.Throughput, f.SimSeconds, f.Steps)
	return nil
}
