// Package lecture computes the interference lecture's four demos on the
// simulator: the in-step cost of a prefill beside a decode batch (demo 1),
// latency against rate colocated and on single-phase instances (demo 2),
// goodput per GPU of colocated and disaggregated serving (demo 3), and
// chunked prefill's budgets (demo 4). It is what `servelab demo
// interference` prints and what the page's chapters show.
//
// It imports sim and sim/scenario (a lecture is built from an experiment); front ends (cmd/servelab, wasm, wasm/play) import it.
// Nothing in sim imports it.
package lecture

import (
	"fmt"

	"servelab/sim"
	"servelab/sim/scenario"
)

// Lecture is the interference lecture's setup: one model on one GPU, a
// Poisson workload of N requests with fixed prompt and output lengths.
type Lecture struct {
	Step   sim.StepModel
	N      int
	Prompt int
	Output int
	Seed   uint64
	// reuse, when set, is memory the demos' runs reuse (see Job.Run).
	reuse *sim.Scratch
	// draws, when set, is the workload's randomness, drawn once for all the
	// jobs of Interference (every demo runs the same workload at its rates).
	draws *sim.PoissonDraws
}

// workload is the lecture's Poisson workload at one rate. With draws and
// memory it is built in the memory's request buffer: valid until the next
// call on that memory.
func (l Lecture) workload(rate float64) ([]sim.Request, error) {
	if l.draws != nil && l.reuse != nil {
		return l.reuse.Poisson(l.draws, rate)
	}
	return sim.Poisson(l.N, rate, l.Prompt, l.Output, l.Seed)
}

// values is Values of one metric, in the memory's buffer when there is
// one: valid until the next call on that memory.
func (l Lecture) values(rs []sim.Result, m sim.Metric) []float64 {
	return l.reuse.Values(rs, m)
}

// searchWorkload is workload for one search's experiments, one after
// another: the randomness is drawn once and each call's requests replace
// the last call's.
func (l Lecture) searchWorkload() sim.Workload {
	if l.draws != nil && l.reuse != nil {
		return l.workload
	}
	return sim.PoissonSearch(l.N, sim.Fixed(l.Prompt), sim.Fixed(l.Output), l.Seed)
}

// run simulates the lecture's workload at rate under policy p; its results
// are valid until l's memory serves another run.
func (l Lecture) run(p sim.Policy, rate float64) ([]sim.Result, error) {
	reqs, err := l.workload(rate)
	if err != nil {
		return nil, err
	}
	return l.runReqs(p, reqs)
}

// runReqs simulates reqs under policy p on l's memory (none: fresh).
func (l Lecture) runReqs(p sim.Policy, reqs []sim.Request) ([]sim.Result, error) {
	o, err := sim.RunOn(sim.Config{Step: l.Step, Policy: p}, reqs, l.reuse)
	if err != nil {
		return nil, err
	}
	return o.Results, nil
}

// Demo1Row is one line of demo 1: a decode batch with one prompt of Prompt tokens in the same step.
type Demo1Row struct {
	Prompt          int       `json:"prompt"`
	DecodeOnly      float64   `json:"decode_only"`  // seconds, the decode batch alone
	Mixed           float64   `json:"mixed"`        // seconds, decode batch + the prefill
	PrefillOnly     float64   `json:"prefill_only"` // seconds, the prefill alone
	DecodeSlowdown  float64   `json:"decode_slowdown"`
	PrefillSlowdown float64   `json:"prefill_slowdown"`
	MixedBound      sim.Bound `json:"mixed_bound"`
}

// Demo1 is in-step interference: batch decodes at context ctx each, plus one prompt of each length.
func (l Lecture) Demo1(batch, ctx int, prompts []int) []Demo1Row {
	dec := l.Step.Decode(batch, batch*ctx)
	rows := make([]Demo1Row, len(prompts))
	for i, p := range prompts {
		mixed, pre := l.Step.Mixed(batch, batch*ctx, p), l.Step.Prefill(p)
		rows[i] = Demo1Row{Prompt: p, DecodeOnly: dec.Seconds, Mixed: mixed.Seconds, PrefillOnly: pre.Seconds,
			DecodeSlowdown: mixed.Seconds / dec.Seconds, PrefillSlowdown: mixed.Seconds / pre.Seconds, MixedBound: mixed.Bound}
	}
	return rows
}

// Demo2Row is one rate of demo 2: P90 latencies colocated and on single-phase instances.
type Demo2Row struct {
	Rate            float64 `json:"rate"`
	ColocatedTTFT90 float64 `json:"colocated_ttft_p90"`
	ColocatedTPOT90 float64 `json:"colocated_tpot_p90"`
	PrefillTTFT90   float64 `json:"prefill_only_ttft_p90"`
	DecodeTPOT90    float64 `json:"decode_only_tpot_p90"`
}

// Demo2Rate is demo 2 at one rate (rates are independent, so callers may run them in parallel).
func (l Lecture) Demo2Rate(rate float64) (Demo2Row, error) {
	row := Demo2Row{Rate: rate}
	reqs, err := l.workload(rate) // the three runs share it (a run does not change its requests); each run's figures are taken before the next
	if err != nil {
		return row, err
	}
	col, err := l.runReqs(sim.PrefillFirst{MaxTokens: sim.DefaultMaxPrefillTokens}, reqs)
	if err != nil {
		return row, err
	}
	row.ColocatedTTFT90 = p90(l.values(col, sim.TTFT))
	row.ColocatedTPOT90 = p90(l.values(col, sim.TPOT))
	pre, _ := l.runReqs(sim.PrefillOnlyPolicy{MaxTokens: sim.DefaultMaxPrefillTokens}, reqs)
	row.PrefillTTFT90 = p90(l.values(pre, sim.TTFT))
	dec, _ := l.runReqs(sim.DecodeOnlyPolicy{}, reqs)
	row.DecodeTPOT90 = p90(l.values(dec, sim.TPOT))
	return row, nil
}

// p90 is the nearest-rank P90 of xs (see sim.Percentile); it reorders xs.
func p90(xs []float64) float64 {
	_, v, _ := sim.Percentiles3(xs)
	return v
}

// Demo3Goodput is the goodput (req/s at 90% SLO attainment) of one kind of instance.
// Which says which: "colocated", "prefill-only" or "decode-only"; colocated
// is judged on both SLOs, the single-phase instances on their own one.
func (l Lecture) Demo3Goodput(which string, slo sim.SLO, attainment float64) (float64, error) {
	var p sim.Policy
	hi := 400.0
	switch which {
	case "colocated":
		p = sim.PrefillFirst{MaxTokens: sim.DefaultMaxPrefillTokens}
	case "prefill-only":
		p = sim.PrefillOnlyPolicy{MaxTokens: sim.DefaultMaxPrefillTokens}
	case "decode-only":
		p, hi = sim.DecodeOnlyPolicy{}, 2000
	default:
		return 0, fmt.Errorf("unknown instance kind %q", which)
	}
	g, _, err := sim.InstanceGoodputOn(sim.Config{Step: l.Step, Policy: p}, l.searchWorkload(), Demo3SLO(which, slo), attainment, hi, l.reuse)
	return g, err
}

// Demo3SLO is the objective an instance kind of demo 3 is judged on:
// colocated on both, prefill-only on TTFT alone, decode-only on TPOT alone.
func Demo3SLO(which string, slo sim.SLO) sim.SLO {
	switch which {
	case "prefill-only":
		slo.TPOT = 0
	case "decode-only":
		slo.TTFT = 0
	}
	return slo
}

// SimulatedSplit is the goodput of x prefill + y decode instances, fully
// simulated (least-loaded router, KV over the GPU's link). The search starts
// below guess, the arithmetic's estimate (pooling can beat it a little), and
// widens if the objective still holds at the ceiling. A guess of 0 (a
// single instance of a phase meets its objective at no rate) gives the
// split a goodput of 0 without a search: there is no ceiling to search under.
func (l Lecture) SimulatedSplit(x, y int, slo sim.SLO, attainment, guess float64) (sim.Split, error) {
	if !(guess > 0) {
		return sim.Split{Prefill: x, Decode: y}, nil
	}
	c := sim.Cluster{Step: l.Step, Prefill: x, Decode: y}
	hi := 1.5 * guess
	wl := l.searchWorkload()
	for {
		total, perGPU, saturated, err := sim.ClusterGoodputOn(c, wl, slo, attainment, hi, l.reuse)
		if err != nil || !saturated || hi >= sim.MaxRate/4 {
			return sim.Split{Prefill: x, Decode: y, Total: total, PerGPU: perGPU}, err
		}
		hi *= 4
	}
}

// Demo4Row is one policy line of demo 4.
type Demo4Row struct {
	Policy  string  `json:"policy"`
	Budget  int     `json:"budget"` // 0 for prefill-first
	TTFTP50 float64 `json:"ttft_p50"`
	TTFTP90 float64 `json:"ttft_p90"`
	TPOTP50 float64 `json:"tpot_p50"`
	TPOTP90 float64 `json:"tpot_p90"`
}

// Demo4Row runs demo 4's line for one budget at rate (budget 0: prefill-first).
// As in the lecture's simulator, the chunk budget limits the prefill tokens
// of a step and the decodes ride along (Chunked.ExcludeDecodes).
func (l Lecture) Demo4Row(rate float64, budget int) (Demo4Row, error) {
	var p sim.Policy = sim.PrefillFirst{MaxTokens: sim.DefaultMaxPrefillTokens}
	if budget > 0 {
		p = sim.Chunked{Budget: budget, ExcludeDecodes: true}
	}
	rs, err := l.run(p, rate)
	if err != nil {
		return Demo4Row{}, err
	}
	t50, t90, _ := sim.Percentiles3(l.values(rs, sim.TTFT))
	p50, p90, _ := sim.Percentiles3(l.values(rs, sim.TPOT))
	return Demo4Row{Policy: p.Name(), Budget: budget, TTFTP50: t50, TTFTP90: t90, TPOTP50: p50, TPOTP90: p90}, nil
}

// Demos are the settings of the lecture's demos that are not the workload:
// demo 1's decode batch and its prompts, demo 2's rates, demo 3's SLO and
// attainment, demo 4's rate and budgets (0 is prefill-first).
type Demos struct {
	Batch, Context int
	Prompts        []int
	Rates          []float64
	SLO            sim.SLO
	Attainment     float64
	Rate4          float64
	Budgets        []int
}

// Defaults returns the lecture's own settings, with the demo-3 SLO given.
func Defaults(slo sim.SLO) Demos {
	return Demos{Batch: 32, Context: 700, Prompts: []int{128, 512, 1024, 2048},
		Rates: []float64{5, 10, 20, 30, 40, 50, 60}, SLO: slo, Attainment: 0.9,
		Rate4: 40, Budgets: []int{0, 256, 512, 1024, 2048}}
}

// Of is the lecture an experiment describes, on its step model (built by
// the caller, scenario.Experiment.StepModel): the Poisson workload
// (requests, prompt, output, seed), demo 1's batch and context, demo 3's
// SLO; demo 4 runs at the lecture's rate (the page's chapter moves it).
// The CLI's `demo interference` and the page's chapters both start here.
func Of(x *scenario.Experiment, step sim.StepModel) (Lecture, Demos, error) {
	l := Lecture{Step: step, N: x.Requests, Prompt: x.Prompt, Output: x.Output, Seed: x.Seed}
	if _, err := sim.Poisson(l.N, 1, l.Prompt, l.Output, l.Seed); err != nil {
		return Lecture{}, Demos{}, err
	}
	if !(x.SLO.TTFT > 0 && x.SLO.TPOT > 0) {
		return Lecture{}, Demos{}, fmt.Errorf("SLOs must be positive seconds, got ttft %g and tpot %g", x.SLO.TTFT, x.SLO.TPOT)
	}
	d := Defaults(x.SLO)
	d.Batch, d.Context = x.Probe.Batch, x.Probe.Context
	return l, d, nil
}

// Interference is everything the four demos compute: what `servelab demo
// interference --json` prints and what the page's chapters show.
type Interference struct {
	Model  string     `json:"model"`
	GPU    string     `json:"gpu"`
	Demo1  []Demo1Row `json:"demo1_in_step"`
	Demo2  []Demo2Row `json:"demo2_latency_vs_rate"`
	Demo3  Demo3      `json:"demo3_goodput"`
	Demo4  []Demo4Row `json:"demo4_chunked"`
	Config DemoConfig `json:"config"`
}

// Demo3 is demo 3's goodput per GPU: the single instances, the splits by
// the lecture's arithmetic, and the splits fully simulated.
type Demo3 struct {
	SLO        sim.SLO     `json:"slo"`
	Colocated  float64     `json:"colocated"`
	Prefill    float64     `json:"prefill_only"`
	Decode     float64     `json:"decode_only"`
	Splits     []sim.Split `json:"splits"`
	Best       sim.Split   `json:"best"`
	Advantage  float64     `json:"best_over_colocated"`
	Attainment float64     `json:"attainment"`
	// Full simulations of splits (router, KV transfer over the GPU's link).
	Simulated []sim.Split `json:"simulated"`
}

// DemoConfig is the workload the demos ran.
type DemoConfig struct {
	Requests int     `json:"requests"`
	Prompt   int     `json:"prompt"`
	Output   int     `json:"output"`
	Seed     uint64  `json:"seed"`
	Rate4    float64 `json:"demo4_rate"`
}

// Job is one independent run of the demos: the jobs of a phase may
// run in any order or in parallel (each writes its own slot); Demo says
// which demo it fills, so a page can run only the one it shows.
type Job struct {
	Demo int
	// Run runs the job; its runs reuse mem when it is not nil. One
	// Scratch must serve one job at a time: a caller running jobs one
	// after another passes the same, one running them in parallel gives
	// each worker its own (or nil).
	Run func(mem *sim.Scratch) error
	// Key is everything the job reads beside its Lecture, and Out the slot
	// Run fills (*Demo2Row, *float64, *Split or *Demo4Row): the same
	// Lecture and Key give the same Out, so a caller may keep results.
	Key JobKey
	Out any
}

// JobKey is one job's inputs beside its Lecture (unused ones zero).
type JobKey struct {
	Kind       string // "demo2", "demo3 colocated|prefill-only|decode-only", "demo3 split", "demo4"
	Rate       float64
	Budget     int
	SLO        sim.SLO // for demo 3's single instances, the part the kind is judged on (Demo3SLO)
	Attainment float64
	X, Y       int     // a split's prefill and decode instances
	Guess      float64 // a split's search start (the arithmetic's total)
}

// drawn is l with its workload's randomness drawn, for jobs to share
// (when it cannot be drawn, each run draws its own and reports the error).
func (l Lecture) drawn() Lecture {
	l.draws, _ = sim.DrawPoisson(l.N, sim.Fixed(l.Prompt), sim.Fixed(l.Output), l.Seed)
	return l
}

// on is l with its runs on mem's memory.
func (l Lecture) on(mem *sim.Scratch) Lecture {
	l.reuse = mem
	return l
}

// Interference returns the demos' result with demo 1 filled in and the jobs
// that fill demos 2, 3 (its single instances) and 4. After they ran,
// Demo3Splits does demo 3's arithmetic and returns its last jobs.
func (l Lecture) Interference(d Demos) (*Interference, []Job) {
	res := &Interference{Model: l.Step.Model.Name, GPU: l.Step.GPU.Name,
		Demo1:  l.Demo1(d.Batch, d.Context, d.Prompts),
		Demo2:  make([]Demo2Row, len(d.Rates)),
		Demo4:  make([]Demo4Row, len(d.Budgets)),
		Config: DemoConfig{Requests: l.N, Prompt: l.Prompt, Output: l.Output, Seed: l.Seed, Rate4: d.Rate4}}
	res.Demo3.SLO, res.Demo3.Attainment = d.SLO, d.Attainment
	l = l.drawn()
	var jobs []Job
	for _, k := range []struct {
		kind string
		dst  *float64
	}{{"colocated", &res.Demo3.Colocated}, {"prefill-only", &res.Demo3.Prefill}, {"decode-only", &res.Demo3.Decode}} {
		jobs = append(jobs, Job{Demo: 3, Run: func(mem *sim.Scratch) (err error) {
			*k.dst, err = l.on(mem).Demo3Goodput(k.kind, d.SLO, d.Attainment)
			return
		},
			Key: JobKey{Kind: "demo3 " + k.kind, SLO: Demo3SLO(k.kind, d.SLO), Attainment: d.Attainment}, Out: k.dst})
	}
	for i, r := range d.Rates {
		jobs = append(jobs, Job{Demo: 2, Run: func(mem *sim.Scratch) (err error) { res.Demo2[i], err = l.on(mem).Demo2Rate(r); return },
			Key: JobKey{Kind: "demo2", Rate: r}, Out: &res.Demo2[i]})
	}
	for i, b := range d.Budgets {
		jobs = append(jobs, Job{Demo: 4, Run: func(mem *sim.Scratch) (err error) { res.Demo4[i], err = l.on(mem).Demo4Row(d.Rate4, b); return },
			Key: JobKey{Kind: "demo4", Rate: d.Rate4, Budget: b}, Out: &res.Demo4[i]})
	}
	return res, jobs
}

// Demo3Splits fills demo 3's splits by the arithmetic (1P+1D, 2P+1D, the
// best with up to 8 of each) from the single instances' goodput, and
// returns the jobs that simulate DistServe's 2P+1D and the best split in full.
func (l Lecture) Demo3Splits(res *Interference) []Job {
	l = l.drawn()
	d := &res.Demo3
	d.Best = sim.BestSplitArithmetic(d.Prefill, d.Decode, 8)
	d.Splits = []sim.Split{sim.SplitArithmetic(1, 1, d.Prefill, d.Decode), sim.SplitArithmetic(2, 1, d.Prefill, d.Decode), d.Best}
	if d.Colocated > 0 {
		d.Advantage = d.Best.PerGPU / d.Colocated
	}
	splits := []sim.Split{d.Splits[1]}
	if d.Best.Total > 0 && (d.Best.Prefill != 2 || d.Best.Decode != 1) { // no best when no rate meets the objectives
		splits = append(splits, d.Best)
	}
	d.Simulated = make([]sim.Split, len(splits))
	jobs := make([]Job, len(splits))
	for i, s := range splits {
		jobs[i] = Job{Demo: 3, Run: func(mem *sim.Scratch) (err error) {
			d.Simulated[i], err = l.on(mem).SimulatedSplit(s.Prefill, s.Decode, d.SLO, d.Attainment, s.Total)
			return
		}, Key: JobKey{Kind: "demo3 split", SLO: d.SLO, Attainment: d.Attainment, X: s.Prefill, Y: s.Decode, Guess: s.Total}, Out: &d.Simulated[i]}
	}
	return jobs
}
