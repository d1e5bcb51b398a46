package main

import (
	"fmt"
	"io"

	"servelab/sim"
	"servelab/sim/scenario"
)

func runGoodput(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("goodput", "--policy P --ttft-slo S --tpot-slo S [--attainment 0.9] [--json]", stderr)
	ef := addExperimentFlags(fs, goodputGroups)
	hi := fs.Float64("max-rate", 0, "search ceiling, req/s (default 400, or 2000 for decode-only)")
	searchGPUs := fs.Int("search-gpus", 0, "disaggregated: find the best prefill:decode split with at most this many GPUs (the lecture's demo 3)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if ef.trace != "" {
		return fmt.Errorf("--trace fixes the arrival times; goodput searches over Poisson rates")
	}
	if ef.x.Replicas > 1 {
		return fmt.Errorf("goodput searches one engine or a disaggregated cluster; --replicas %d is servelab sim's", ef.x.Replicas)
	}
	limitMemory()
	slo, target := ef.x.SLO, ef.x.Attainment
	if !(slo.TTFT >= 0 && slo.TPOT >= 0 && slo.TTFT+slo.TPOT > 0) {
		return fmt.Errorf("give a non-negative --ttft-slo and --tpot-slo, at least one positive; got %g and %g", slo.TTFT, slo.TPOT)
	}
	step, err := ef.stepModel()
	if err != nil {
		return err
	}
	// Every rate tried runs the same requests (the lengths do not depend on the rate).
	if reqs, err := ef.requestsAt(1); err != nil {
		return err
	} else if err := checkOpenLoop(reqs, ef.source()); err != nil {
		return err
	}
	if ef.x.Policy == scenario.Disaggregated {
		return disaggregatedGoodput(ef, step, slo, target, *hi, *searchGPUs, *asJSON, stdout)
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
	rate, saturated, err := sim.InstanceGoodput(cfg, ef.requestsAt, slo, target, ceiling)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"rate": rate, "saturated": saturated, "policy": cfg.Policy.Name(),
			"ttft_slo": slo.TTFT, "tpot_slo": slo.TPOT, "attainment": target, "gpus": step.TP, "rate_per_gpu": rate / float64(step.TP)})
	}
	fmt.Fprintf(stdout, "goodput %.1f req/s (%s, %s on %s x%d; TTFT <= %s, TPOT <= %s for %.0f%% of requests)\n",
		rate, cfg.Policy.Name(), step.Model.Name, step.GPU.Name, step.TP, ms(slo.TTFT), ms(slo.TPOT), target*100)
	if saturated {
		fmt.Fprintf(stdout, "  the objective holds even at the ceiling %.0f req/s: raise --max-rate to find the knee\n", ceiling)
	}
	if rate == 0 {
		fmt.Fprintln(stdout, noRate)
	}
	return nil
}

// noRate is what goodput says when no rate the search tries (down to 0.01
// req/s) meets the objectives.
const noRate = "  no rate meets the objectives, down to 0.01 req/s: relax --ttft-slo, --tpot-slo or --attainment"

// disaggregatedGoodput is goodput for x prefill + y decode instances, or with
// searchGPUs > 0 the lecture's search for the best split under that many GPUs.
func disaggregatedGoodput(ef *expFlags, step sim.StepModel, slo sim.SLO, target, hi float64, searchGPUs int, asJSON bool, stdout io.Writer) error {
	c, err := ef.cluster(step)
	if err != nil {
		return err
	}
	if searchGPUs < 0 || searchGPUs > 2*sim.MaxInstances {
		return fmt.Errorf("--search-gpus must be in 0..%d, got %d", 2*sim.MaxInstances, searchGPUs)
	}
	if hi == 0 {
		hi = 400
	}
	wl := sim.Workload(ef.requestsAt)
	if searchGPUs > 0 {
		gPre, gDec, err := sim.PhaseGoodputs(c, wl, slo, target, hi, 5*hi)
		if err != nil {
			return err
		}
		best := sim.BestSplitWithin(gPre, gDec, searchGPUs)
		if best.Total == 0 {
			return fmt.Errorf("no split attains the objective: no rate meets it on one prefill instance (%.1f req/s) or one decode instance (%.1f req/s); relax --ttft-slo or --tpot-slo", gPre, gDec)
		}
		c.Prefill, c.Decode = best.Prefill, best.Decode
		total, perGPU, sat, err := sim.ClusterGoodput(c, wl, slo, target, 2*best.Total)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(stdout, map[string]any{"policy": "disaggregated", "prefill_gpus": c.Prefill, "decode_gpus": c.Decode,
				"prefill_instance_goodput": gPre, "decode_instance_goodput": gDec, "arithmetic_rate": best.Total, "arithmetic_per_gpu": best.PerGPU,
				"rate": total, "rate_per_gpu": perGPU, "saturated": sat})
		}
		fmt.Fprintf(stdout, "one prefill instance sustains %.1f req/s, one decode instance %.1f req/s\n", gPre, gDec)
		if sat {
			// The search's ceiling is no rate the cluster was shown to sustain.
			fmt.Fprintf(stdout, "best split within %d GPUs: %dP+%dD, %.1f req/s by arithmetic (%.1f per GPU); simulated: saturated, the objective still holds at the search ceiling %.1f req/s, so the goodput is not found\n",
				searchGPUs, c.Prefill, c.Decode, best.Total, best.PerGPU, total)
			fmt.Fprintf(stdout, "  %d requests are too few to load %d instances: raise --requests to find the knee\n", ef.x.Requests, c.Prefill+c.Decode)
			return nil
		}
		fmt.Fprintf(stdout, "best split within %d GPUs: %dP+%dD, %.1f req/s by arithmetic (%.1f per GPU); simulated %.1f req/s (%.1f per GPU)\n",
			searchGPUs, c.Prefill, c.Decode, best.Total, best.PerGPU, total, perGPU)
		return nil
	}
	total, perGPU, sat, err := sim.ClusterGoodput(c, wl, slo, target, hi)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, map[string]any{"policy": "disaggregated", "prefill_gpus": c.Prefill, "decode_gpus": c.Decode,
			"rate": total, "rate_per_gpu": perGPU, "saturated": sat, "ttft_slo": slo.TTFT, "tpot_slo": slo.TPOT, "attainment": target})
	}
	fmt.Fprintf(stdout, "goodput %.1f req/s, %.1f per GPU (%s; TTFT <= %s, TPOT <= %s for %.0f%% of requests)\n",
		total, perGPU, c, ms(slo.TTFT), ms(slo.TPOT), target*100)
	if sat {
		fmt.Fprintf(stdout, "  the objective holds even at the ceiling %.0f req/s: raise --max-rate\n", hi)
	}
	if total == 0 {
		fmt.Fprintln(stdout, noRate)
	}
	return nil
}
