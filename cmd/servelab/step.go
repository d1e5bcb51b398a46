package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"servelab/sim"
	"servelab/sim/scenario"
)

func runStep(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("step", "--batch B --context C [--prefill L] [--json]", stderr)
	sf := addExperimentFlags(fs, scenario.StepGroup|scenario.ProbeGroup)
	batch, ctx, prefill := &sf.x.Probe.Batch, &sf.x.Probe.Context, &sf.x.Probe.Prefill
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *batch < 0 || *ctx < 0 || *prefill < 0 || *batch > sim.MaxRequests || *ctx > sim.MaxTokens || *prefill > sim.MaxTokens {
		return fmt.Errorf("--batch must be in 0..%d and --context, --prefill in 0..%d, got %d, %d, %d", sim.MaxRequests, sim.MaxTokens, *batch, *ctx, *prefill)
	}
	if *batch == 0 && *prefill == 0 {
		return fmt.Errorf("an empty step: give --batch > 0 or --prefill > 0")
	}
	step, err := sf.stepModel()
	if err != nil {
		return err
	}
	// As sim does: a model whose weights leave no room on the GPUs is refused, with the --tp that fits.
	if _, err := (sim.MemorySplit{}).KVBlocks(step); err != nil {
		return err
	}
	w := sim.Work{Window: step.Model.SlidingWindow}
	for range *batch {
		w.AddDecode(*ctx)
	}
	if *prefill > 0 {
		w.AddPrefill(0, *prefill)
	}
	c := step.Price(w)
	consts := sim.StepConstants(step, sf.resolved)
	_, note := sf.resolved.GPUNote(step.GPU.Name)
	if *asJSON {
		return writeJSON(stdout, struct {
			sim.Cost
			Model     string                 `json:"model"`
			GPU       string                 `json:"gpu"`
			Batch     int                    `json:"batch"`
			Context   int                    `json:"context"`
			Prefill   int                    `json:"prefill"`
			Tokens    float64                `json:"tokens"`
			Profile   string                 `json:"profile"`
			Physics   sim.Physics            `json:"physics"`
			Constants []sim.ResolvedConstant `json:"constants"`
			GPUNote   string                 `json:"gpu_note"`
		}{c, step.Model.Name, step.GPU.Name, *batch, *ctx, *prefill, w.Tokens, sf.resolved.Name, step.Physics, consts, note})
	}
	fmt.Fprintf(stdout, "%s on %s: %d decodes at context %d", step.Model.Name, step.GPU.Name, *batch, *ctx)
	if *prefill > 0 {
		fmt.Fprintf(stdout, " + a %d-token prefill", *prefill)
	}
	fmt.Fprintf(stdout, "\n  step time   %s (%s-bound)", ms(c.Seconds), c.Bound)
	regime := sim.RegimeTPOT // a decode step
	if *prefill > 0 {
		regime = sim.RegimeTTFT // a prefill in it
	}
	if n, ok := sf.resolved.TrustFor(step, regime); ok {
		fmt.Fprintf(stdout, ", %s", n.Text)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "  compute     %.3g FLOPs -> %s at %.0f%% of %.0f TFLOP/s\n", c.FLOPs, ms(c.ComputeTime), step.EffCompute*100, step.GPU.FLOPS/1e12)
	fmt.Fprintf(stdout, "  memory      %.3g bytes -> %s at %.0f%% of %.2f TB/s\n", c.Bytes, ms(c.MemoryTime), step.EffMem*100, step.GPU.MemBW/1e12)
	if c.CommTime > 0 {
		fmt.Fprintf(stdout, "  all-reduce  %s (TP %d)\n", ms(c.CommTime), step.TP)
	}
	fmt.Fprintf(stdout, "  overhead    %s\n", ms(c.Overhead))
	if c.CPUTime > 0 {
		fmt.Fprintf(stdout, "  CPU         %s (per sequence and per new prompt)\n", ms(c.CPUTime))
	}
	if c.GPUTime != math.Max(c.ComputeTime, c.MemoryTime) {
		fmt.Fprintf(stdout, "  kernels     %s (each kernel on its own smooth roofline)\n", ms(c.GPUTime))
	}
	fmt.Fprintf(stdout, "\nProfile %s: %s\n", sf.resolved.Name, note)
	if ph := step.Physics; ph != (sim.Physics{}) {
		var on []string
		if ph.MoEUnion && step.Model.Experts > 1 {
			on = append(on, fmt.Sprintf("experts read: the expected union, %.2f of %d per layer", step.ExpectedExperts(w.Tokens), step.Model.Experts))
		}
		for _, c := range []struct {
			on   bool
			text string
		}{{ph.EmbedGather, "embedding rows gathered, not the table"}, {ph.SampledLogits, "lm_head only where a token is sampled"},
			{ph.SplitAttention, "attention on its own roofline"}, {ph.FP8Compute, "FP8 tensor peak for 1-byte weights"}} {
			if c.on {
				on = append(on, c.text)
			}
		}
		fmt.Fprintf(stdout, "  physics: %s\n", strings.Join(on, "; "))
	}
	for _, k := range consts {
		fmt.Fprintf(stdout, "  %-18s %-10s %s\n", k.Name, constantText(k.Name, k.Value), k.Source)
	}
	return nil
}
