package main

import (
	"fmt"
	"io"

	"servelab/sim"
	"servelab/sim/scenario"
)

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
	// Prefix is the prefix cache's figures, with --prefix-caching.
	Prefix *prefixFigures `json:"prefix_cache,omitempty"`
	// Spec is speculative decoding's figures, with --spec-tokens.
	Spec *specFigures `json:"speculative,omitempty"`
	// Replicas is each replica's share, with --replicas > 1.
	Replicas []replicaFigures `json:"replicas,omitempty"`
}

// replicaFigures is one replica's share of a run behind a router.
type replicaFigures struct {
	Index    int     `json:"index"`
	Requests int     `json:"requests"` // requests the router sent it
	Busy     float64 `json:"busy"`     // fraction of the run's span spent in iterations
	HitRatio float64 `json:"prefix_hit_ratio,omitempty"`
	TTFTP50  float64 `json:"ttft_p50"`
	TTFTP99  float64 `json:"ttft_p99"`
}

// replicasOf is each replica's figures in a run across replicas.
func replicasOf(ro *sim.ReplicaOutcome) []replicaFigures {
	out := make([]replicaFigures, len(ro.Replicas))
	mine := make([][]sim.Result, len(ro.Replicas))
	for i, k := range ro.Choices {
		mine[k] = append(mine[k], ro.Results[i])
	}
	for k, r := range ro.Replicas {
		f := replicaFigures{Index: k, Requests: r.Requests}
		if ro.End > 0 {
			f.Busy = r.Busy / ro.End
		}
		if r.Prefix != nil {
			f.HitRatio = r.Prefix.HitRatio()
		}
		ttft := sim.Values(mine[k], sim.TTFT)
		f.TTFTP50, f.TTFTP99 = sim.Percentile(ttft, 50), sim.Percentile(ttft, 99)
		out[k] = f
	}
	return out
}

// prefixFigures are a run's prefix-cache figures: vLLM's hit rate (hit
// over queried prompt tokens) and the counts it comes from.
type prefixFigures struct {
	HitRatio float64 `json:"hit_ratio"`
	sim.PrefixStats
}

// specFigures are a run's speculative-decoding figures: the drafts'
// acceptance and the tokens a sequence got per step.
type specFigures struct {
	AcceptRate    float64 `json:"accept_rate"`
	TokensPerStep float64 `json:"tokens_per_step"`
	sim.SpecStats
}

// specOf is p's figures (nil for nil).
func specOf(p *sim.SpecStats) *specFigures {
	if p == nil {
		return nil
	}
	return &specFigures{AcceptRate: p.AcceptRate(), TokensPerStep: p.TokensPerStep(), SpecStats: *p}
}

// prefixOf is p's figures (nil for nil).
func prefixOf(p *sim.PrefixStats) *prefixFigures {
	if p == nil {
		return nil
	}
	return &prefixFigures{HitRatio: p.HitRatio(), PrefixStats: *p}
}

// printPrefix writes the prefix cache's line of a text summary (nothing for nil).
func printPrefix(w io.Writer, p *prefixFigures) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "  prefix cache: hit ratio %.1f%% (%d of %d prompt tokens not recomputed), %d blocks evicted\n",
		100*p.HitRatio, p.Hit, p.Queried, p.Evicted)
}

// figuresOf is `servelab sim --json`'s figures of a run: its summary, its
// size and the first rejection's reason.
func figuresOf(policy string, step sim.StepModel, s sim.Summary, results []sim.Result, steps int, end float64, truncated bool) simFigures {
	f := simFigures{Policy: policy, Model: step.Model.Name, GPU: step.GPU.Name,
		TTFTP50: s.TTFTP50, TTFTP90: s.TTFTP90, TTFTP99: s.TTFTP99,
		TPOTP50: s.TPOTP50, TPOTP90: s.TPOTP90, TPOTP99: s.TPOTP99,
		ITLP50: s.ITLP50, ITLP90: s.ITLP90, ITLP99: s.ITLP99, ITLMax: s.ITLMax,
		E2EP50: s.E2EP50, E2EP90: s.E2EP90, E2EP99: s.E2EP99, Throughput: s.Throughput,
		Submitted: s.Submitted, Completed: s.Completed, Rejected: s.Rejected, Unfinished: s.Unfinished,
		Preemptions: s.Preemptions, Steps: steps, SimSeconds: end, Truncated: truncated}
	for _, r := range results {
		if r.Rejected != "" {
			f.RejectedWhy = r.Rejected
			break
		}
	}
	return f
}

func runSim(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", "[--workload poisson|lab] [flags] [--json]", stderr)
	ef := addExperimentFlags(fs, simGroups)
	lf := addLabFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	limitMemory()
	if err := ef.checkWorkload(); err != nil {
		return err
	}
	step, err := ef.stepModel()
	if err != nil {
		return err
	}
	if lf.like != "" {
		b, note, err := benchLike(lf.like)
		if err != nil {
			return err
		}
		if b != nil {
			if flagSet(fs, "tokens-per-word") {
				return fmt.Errorf("--tokens-per-word converts a lab file's prompt lengths; %s is a benchmark result, whose lengths are tokens already", lf.like)
			}
			return runBenchLike(b, note, ef, step, *asJSON, stdout)
		}
	}
	if ef.x.Workload == scenario.Lab || lf.like != "" {
		return runLabSim(lf, ef, step, *asJSON, stdout)
	}
	if err := ef.checkRate(); err != nil {
		return err
	}
	reqs, err := ef.requestsAt(ef.x.Rate)
	if err != nil {
		return err
	}
	if err := checkOpenLoop(reqs, ef.source()); err != nil {
		return err
	}
	var out *sim.Outcome
	var replicas []replicaFigures
	policy := ef.x.Policy
	if policy == scenario.Disaggregated {
		c, err := ef.cluster(step)
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
		if ef.x.Replicas > 1 {
			rc, err := ef.x.ReplicasFor(cfg)
			if err != nil {
				return err
			}
			ro, err := sim.RunReplicas(*rc, reqs)
			if err != nil {
				return err
			}
			out, policy = &ro.Outcome, (&scenario.Built{Config: cfg, Replicas: rc}).PolicyName()
			replicas = replicasOf(ro)
		} else {
			if out, err = sim.Run(cfg, reqs); err != nil {
				return err
			}
			policy = cfg.Policy.Name()
		}
	}
	s := out.Summary()
	f := figuresOf(policy, step, s, out.Results, out.Steps, out.End, out.Truncated)
	f.Prefix, f.Spec, f.Replicas = prefixOf(out.Prefix), specOf(out.Spec), replicas
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
	head := []string{"", "P50", "P90", "P99"}
	rows := [][]string{
		{"TTFT", ms(f.TTFTP50), ms(f.TTFTP90), ms(f.TTFTP99)},
		{"TPOT", ms(f.TPOTP50), ms(f.TPOTP90), ms(f.TPOTP99)},
		{"ITL", ms(f.ITLP50), ms(f.ITLP90), ms(f.ITLP99)},
		{"E2E", ms(f.E2EP50), ms(f.E2EP90), ms(f.E2EP99)},
	}
	// Beside a profile's prediction, its error on published points held out of its fit.
	trust := func(regime string) string {
		n, _ := ef.resolved.TrustFor(step, regime)
		return n.Text
	}
	if t := trust(sim.RegimeTTFT); t != "" {
		head = append(head, "held-out error")
		for i, reg := range []string{sim.RegimeTTFT, sim.RegimeTPOT, sim.RegimeTPOT, ""} {
			rows[i] = append(rows[i], trust(reg))
		}
	}
	table(stdout, head, rows)
	fmt.Fprintf(stdout, "  throughput %.0f output tok/s over %.2f simulated s (%d iterations)", f.Throughput, f.SimSeconds, f.Steps)
	if t := trust(sim.RegimeThroughput); t != "" {
		fmt.Fprintf(stdout, ", %s", t)
	}
	fmt.Fprintln(stdout)
	printPrefix(stdout, f.Prefix)
	if p := f.Spec; p != nil {
		fmt.Fprintf(stdout, "  speculative decoding: %.1f%% of %d drafts accepted, %.2f tokens per sequence-step\n", 100*p.AcceptRate, p.Drafted, p.TokensPerStep)
	}
	printReplicas(stdout, f.Replicas)
	return nil
}

// printReplicas writes the per-replica table of a text summary (nothing
// for one engine).
func printReplicas(w io.Writer, rs []replicaFigures) {
	if len(rs) == 0 {
		return
	}
	rows := make([][]string, len(rs))
	for i, r := range rs {
		hit := "-"
		if r.HitRatio > 0 {
			hit = fmt.Sprintf("%.1f%%", 100*r.HitRatio)
		}
		rows[i] = []string{fmt.Sprintf("replica %d", r.Index), fmt.Sprint(r.Requests), fmt.Sprintf("%.0f%%", 100*r.Busy), hit, ms(r.TTFTP50), ms(r.TTFTP99)}
	}
	table(w, []string{"", "requests", "busy", "hit ratio", "TTFT P50", "TTFT P99"}, rows)
}
