package scenario

import "servelab/sim"

// Preset is a named experiment a lecture opens by link (?preset=NAME): Set
// writes its settings over an experiment (the others keep their values),
// and Window is the stretch of simulated time worth looking at first.
type Preset struct {
	Name, Title, About string
	Set                func(*Experiment)
	Window             Window
}

// Window is a stretch of simulated time: from T0, Span seconds long.
type Window struct{ T0, Span float64 }

// Apply writes the preset over x. The lecture's presets run the lecture's
// profile: another profile is replaced by it, and its assumptions with
// the lecture's.
func (p Preset) Apply(x *Experiment) {
	if x.Profile != sim.DefaultProfile {
		x.Profile, x.Loaded = sim.DefaultProfile, nil
		x.Typed &^= TypedEffCompute | TypedEffMem | TypedOverhead
		x.FillAssumptions()
	}
	p.Set(x)
}

// poisson512 is the lecture's open-loop workload: 512-token prompts, 64-token outputs.
func poisson512(x *Experiment, policy string, rate float64) {
	x.Workload, x.Policy, x.Prompt, x.Output, x.Rate, x.Requests = Poisson, policy, 512, 64, rate, 1500
}

// labRun is run.py's closed loop with its defaults, under policy.
func labRun(x *Experiment, policy string, budget int) {
	x.Workload, x.Policy, x.Lab = Lab, policy, sim.DefaultLab()
	if budget > 0 {
		x.Budget, x.ExcludeDecodes = budget, false
	}
}

// Presets are the lecture's four demos, the lab's pair and DistServe's pair.
var Presets = []Preset{
	{"demo1", "Lecture demo 1: one prefill inside a decode batch", "A 2048-token prompt lands in a step with 32 running decodes at context 700: that step takes several times longer and every decoding user waits.",
		func(x *Experiment) {
			x.Workload, x.Policy, x.Probe = Step, Chunked, Probe{Batch: 32, Context: 700, Prefill: 2048}
			x.Budget, x.ExcludeDecodes = 8192, false
		}, Window{ProbeAt - 0.05, 0.2}},
	{"demo2", "Lecture demo 2: P90 TTFT and TPOT vs rate (colocated)", "Prefill-first on one H100, 512/64 tokens: raise the rate and P90 TPOT climbs from ~7.7 ms to tens of ms.",
		func(x *Experiment) { poisson512(x, PrefillFirst, 20) }, Window{0, 1}},
	{"demo3", "Lecture demo 3: goodput under SLOs", "TTFT ≤ 100 ms and TPOT ≤ 15 ms at 90% attainment: the colocated GPU's goodput is capped by TPOT.",
		func(x *Experiment) { poisson512(x, PrefillFirst, 10); x.SLO = sim.SLO{TTFT: 0.1, TPOT: 0.015} }, Window{0, 2}},
	{"demo4", "Lecture demo 4: chunked prefill (Sarathi-Serve)", "Rate 40, a 512-token prefill budget per step (decodes ride along): TPOT falls, TTFT pays.",
		func(x *Experiment) { poisson512(x, Chunked, 40); x.Budget, x.ExcludeDecodes = 512, true }, Window{0, 0.5}},
	{"lab-unchunked", "Lab: one long prompt, chunking off", "16 short streams in a closed loop; a 32k-token prompt injected at 20 s stalls every stream for the whole prefill.",
		func(x *Experiment) { labRun(x, PrefillFirst, 0) }, Window{19.5, 3}},
	{"lab-chunked", "Lab: one long prompt, chunked prefill", "The same lab run with a 2048-token budget: the long prompt is cut into chunks and the streams keep flowing.",
		func(x *Experiment) { labRun(x, Chunked, 2048) }, Window{19.5, 3}},
	{"distserve-colocated", "DistServe: colocated baseline", "One GPU doing both phases, 512/64 tokens, SLOs 100 ms / 15 ms.",
		func(x *Experiment) { poisson512(x, PrefillFirst, 10); x.SLO = sim.SLO{TTFT: 0.1, TPOT: 0.015} }, Window{0, 2}},
	{"distserve-2p1d", "DistServe: 2 prefill + 1 decode GPUs", "Prefill and decode on separate GPUs, KV moved over the link: each phase meets its own SLO.",
		func(x *Experiment) {
			poisson512(x, Disaggregated, 30)
			x.PrefillGPUs, x.DecodeGPUs, x.SLO = 2, 1, sim.SLO{TTFT: 0.1, TPOT: 0.015}
		}, Window{0, 2}},
	// The course after lecture 5 (issue 29): one preset per feature.
	{"prefix-cache", "A shared system prompt, cached", "2000 tokens of system prompt before every 200-token question, 64-token answers at 8 req/s, prefix caching on: most of each prompt is found in the cache and only the question is prefilled.",
		func(x *Experiment) {
			x.Workload, x.Policy, x.Prompt, x.Output, x.Rate, x.Requests = Poisson, Chunked, 200, 64, 8, 1000
			x.Budget, x.ExcludeDecodes = 2048, false
			x.SystemPrompt, x.Turns, x.PrefixCaching = 2000, 1, true
		}, Window{0, 2}},
	{"routing", "Where should this request go? Four replicas, multi-turn sessions", "Sessions of 8 turns whose history grows, at 24 req/s over 4 replicas with prefix caching: the prefix-aware router sends each turn where its history is cached; switch it to round-robin and the hits (and TTFT) go.",
		func(x *Experiment) {
			x.Workload, x.Policy, x.Prompt, x.Output, x.Rate, x.Requests = Poisson, Chunked, 250, 150, 24, 2000
			x.Budget, x.ExcludeDecodes = 2048, false
			x.SystemPrompt, x.Turns, x.ThinkTime, x.PrefixCaching = 500, 8, 8, true
			x.LengthDist, x.Spread = "uniform", 0.6
			x.Replicas, x.Route, x.RouteStale, x.RouteThreshold = 4, string(sim.RoutePrefixAware), 0, 8
		}, Window{0, 5}},
	{"speculative", "Speculation is a bet on idle compute", "One H100, 512/256 tokens at 2 req/s, 4 draft tokens from MTP heads accepted at 0.6 each: each user's tokens come about twice as fast; raise the rate and verifying 5 tokens per sequence makes every step compute-bound.",
		func(x *Experiment) {
			x.Workload, x.Policy, x.Prompt, x.Output, x.Rate, x.Requests = Poisson, Chunked, 512, 256, 2, 600
			x.Budget, x.ExcludeDecodes = 2048, false
			x.SpecTokens, x.SpecAccept, x.SpecAcceptList, x.SpecDraft, x.SpecDraftCost = 4, 0.6, "", MTP, 0.05
		}, Window{0, 2}},
	// Compare mode's starting points (run B's changes are the page's) and a full KV cache.
	{"compare-chunking", "Compare: prefill-first vs chunked 512", "",
		func(x *Experiment) { poisson512(x, PrefillFirst, 30) }, Window{0, 1}},
	{"compare-disagg", "Compare: colocated vs 2P+1D", "",
		func(x *Experiment) { poisson512(x, PrefillFirst, 10); x.SLO = sim.SLO{TTFT: 0.1, TPOT: 0.015} }, Window{0, 2}},
	{"memory-pressure", "The KV cache fills up", "",
		func(x *Experiment) {
			x.Workload, x.Policy, x.Prompt, x.Output, x.Rate, x.Requests = Poisson, Chunked, 2048, 512, 4, 300
			x.Budget, x.ExcludeDecodes = 2048, false
			x.Ideal, x.MaxSeqs, x.Utilization, x.BlockSize, x.Preempt = false, 256, 0.3, 16, true
		}, Window{0, 20}},
}

// PresetByName finds a preset by its link name.
func PresetByName(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
