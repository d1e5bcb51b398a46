package main

import (
	"fmt"
	"io"

	"servelab/sim"
)

func init() {
	register(command{name: "goodput", summary: "the highest rate whose SLO attainment reaches the target (bisection)", run: runGoodput})
}

func runGoodput(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("goodput", "--policy P --ttft-slo S --tpot-slo S [--attainment 0.9] [--json]", stderr)
	sf := addStepFlags(fs)
	ef := addEngineFlags(fs)
	wf := addWorkloadFlags(fs)
	ttft := fs.Float64("ttft-slo", 0.1, "TTFT objective, seconds (0: not checked)")
	tpot := fs.Float64("tpot-slo", 0.015, "TPOT objective, seconds (0: not checked)")
	target := fs.Float64("attainment", 0.9, "fraction of requests that must meet the objectives")
	hi := fs.Float64("max-rate", 0, "search ceiling, req/s (default 400, or 2000 for decode-only)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if wf.trace != "" {
		return fmt.Errorf("--trace fixes the arrival times; goodput searches over Poisson rates")
	}
	if !(*ttft >= 0 && *tpot >= 0 && *ttft+*tpot > 0) {
		return fmt.Errorf("give a non-negative --ttft-slo and --tpot-slo, at least one positive; got %g and %g", *ttft, *tpot)
	}
	step, err := sf.stepModel()
	if err != nil {
		return err
	}
	cfg, err := ef.config(step)
	if err != nil {
		return err
	}
	ceiling := *hi
	if ceiling == 0 {
		ceiling = 400
		if cfg.Policy.Name() == "decode-only" {
			ceiling = 2000
		}
	}
	slo := sim.SLO{TTFT: *ttft, TPOT: *tpot}
	rate, saturated, err := sim.Goodput(func(rate float64) (float64, error) {
		reqs, err := wf.requestsAt(rate)
		if err != nil {
			return 0, err
		}
		out, err := sim.Run(cfg, reqs)
		if err != nil {
			return 0, err
		}
		return sim.Attainment(out.Results, slo), nil
	}, *target, ceiling)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"rate": rate, "saturated": saturated, "policy": cfg.Policy.Name(),
			"ttft_slo": slo.TTFT, "tpot_slo": slo.TPOT, "attainment": *target, "gpus": step.TP, "rate_per_gpu": rate / float64(step.TP)})
	}
	fmt.Fprintf(stdout, "goodput %.1f req/s (%s, %s on %s x%d; TTFT <= %s, TPOT <= %s for %.0f%% of requests)\n",
		rate, cfg.Policy.Name(), step.Model.Name, step.GPU.Name, step.TP, ms(slo.TTFT), ms(slo.TPOT), *target*100)
	if saturated {
		fmt.Fprintf(stdout, "  the objective holds even at the ceiling %.0f req/s: raise --max-rate to find the knee\n", ceiling)
	}
	return nil
}
