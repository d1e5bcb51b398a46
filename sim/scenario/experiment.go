// Package scenario holds the experiment as a value: what every front end
// (the CLI's flags, the page's URL and controls, the chapters, the lecture
// and the lab server) turns its settings into before anything is simulated.
//
// An Experiment names a model, a GPU, a profile and the assumptions typed
// over it, a policy and its budget, the engine's limits, a workload, a
// cluster (for disaggregation) and an SLO. Knobs is the one table of its
// settings: each row gives a setting's field accessors, CLI flag, URL key,
// JSON key, range, step, default, unit and catalogue label key, so a
// setting is defined once. Build turns a validated experiment into what
// sim runs. Presets are typed experiments.
//
// It may import sim, hwspecs and modelspecs; front ends (cmd, wasm) import it.
package scenario

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
)

// Policy names: one per scheduler, on every front end.
const (
	PrefillFirst  = "prefill-first"
	Chunked       = "chunked"
	PrefillOnly   = "prefill-only"
	DecodeOnly    = "decode-only"
	Disaggregated = "disaggregated"
)

// Policies lists the policy names an experiment accepts: one engine's
// (sim's), then the disaggregated deployment of prefill and decode instances.
var Policies = append(sim.PolicyNames(), Disaggregated)

// Workload names.
const (
	Poisson = "poisson"
	Lab     = "lab"
	Trace   = "trace"
	// Step is the lecture's demo 1 as a run: Probe.Batch requests of
	// Probe.Context-token prompts decoding, and one Probe.Prefill-token
	// prompt arriving among them at ProbeAt.
	Step = "step"
)

// Workloads lists the workload names an experiment accepts.
var Workloads = []string{Poisson, Lab, Trace, Step}

// ProbeAt is when the Step workload's prompt arrives: after its batch's
// prompts are prefilled on any catalogue GPU, while the batch decodes
// (each of its requests decodes probeOutput tokens).
const ProbeAt = 1.0

const probeOutput = 512

// Assumption is a bit set of the step model's assumptions; Experiment.Typed
// says which of them the user typed, so they override the profile's values.
type Assumption uint8

const (
	TypedEffCompute Assumption = 1 << iota
	TypedEffMem
	TypedOverhead
	TypedDtype
)

// Experiment is one simulation, described completely. The zero value is not
// useful: start from Default (or a preset) and set fields.
type Experiment struct {
	// Model is a catalogue name, or Custom's name when Custom is set.
	Model string
	// Custom is a model read from a Hugging Face config.json (the CLI's
	// --model-config, an upload in the page); nil: the catalogue's Model.
	Custom *modelspecs.Model
	GPU    string
	// Profile names the step model's profile: a built-in one, or Loaded's name.
	Profile string
	// Loaded is a profile read from a file (the CLI's --profile FILE, an
	// upload or a calibration in the page); nil: Profile is built in.
	Loaded *sim.Profile
	// Pause is not part of the experiment but how its runs share a thread
	// with their caller: copied into every sim.Config the experiment
	// builds (sim.Config.Pause). Never in its query, flags or JSON.
	Pause func() (stop bool) `json:"-"`

	// The step model's assumptions: they replace the profile's values only
	// where Typed says they were typed (DtypeBytes otherwise follows the
	// checkpoint: 1 for an FP8 config.json).
	EffCompute, EffMem float64
	Overhead           float64 // seconds per iteration
	DtypeBytes         float64
	TP                 int
	Typed              Assumption

	Policy string
	// Budget is vLLM's max_num_batched_tokens: chunked's per-step token
	// budget (decodes included unless ExcludeDecodes), and the most prefill
	// tokens in one step of prefill-first and prefill instances. 0: the
	// policy's default (2048 chunked, 32768 otherwise).
	Budget         int
	ExcludeDecodes bool

	// Engine limits (none when Ideal: the lecture's engine).
	Ideal       bool
	MaxSeqs     int
	BlockSize   int
	Utilization float64
	Preempt     bool // KV cache full: preempt and recompute (else reserve and wait)
	// PrefixCaching keeps KV blocks by content and reuses a prompt's
	// cached prefix (the ideal engine's cache is never full).
	PrefixCaching bool

	// Speculative decoding (sim.Speculation): SpecTokens drafts per step
	// (0: off), accepted at SpecAccept each, or at the rates of
	// SpecAcceptList ("0.9,0.8,0.6"; it wins when set); drafted by MTP
	// heads costing SpecDraftCost of a step per draft (SpecDraft "mtp") or
	// by a catalogue model named by SpecDraft on the same GPU.
	SpecTokens     int
	SpecAccept     float64
	SpecAcceptList string
	SpecDraft      string
	SpecDraftCost  float64

	Workload string
	// Poisson: Requests arrivals at Rate, lengths fixed at Prompt and
	// Output, or drawn by LengthDist with Spread (the page's knob), or by
	// PromptDist/OutputDist in sim.ParseLengths' forms (they win).
	Rate                   float64
	Requests               int
	Prompt, Output         int
	LengthDist             string // fixed, uniform or lognormal
	Spread                 float64
	PromptDist, OutputDist string
	Seed                   uint64
	// SystemPrompt is tokens every Poisson prompt starts with, the same
	// for all; Turns > 1 makes sessions of that many turns, each turn's
	// prompt the history so far plus a new Prompt-token message, ThinkTime
	// seconds (mean) after the turn before (sim.Conversations).
	SystemPrompt int
	Turns        int
	ThinkTime    float64
	// Lab is the lab's closed loop (run.py's flags).
	Lab sim.LabWorkload
	// TraceReqs are a replayed trace's requests (TraceName says whence).
	TraceReqs []sim.Request
	TraceName string

	// Disaggregated deployment: PrefillGPUs + DecodeGPUs instances, KV over
	// a link of LinkGBs GB/s (0: the GPU's), a router.
	PrefillGPUs, DecodeGPUs int
	LinkGBs                 float64
	Router                  string

	// Replicas > 1 runs that many colocated engines behind a router
	// (sim.Replicas): Route names it, RouteStale is how old its load
	// figures are (seconds), RouteThreshold the prefix-aware route's slack
	// in outstanding requests.
	Replicas       int
	Route          string
	RouteStale     float64
	RouteThreshold int

	SLO        sim.SLO
	Attainment float64

	// Probe is one step priced alone (servelab step, the page's demo 1).
	Probe Probe
}

// Probe is one iteration: Batch decodes at Context each, plus a Prefill-token prompt.
type Probe struct{ Batch, Context, Prefill int }

// Default is the experiment every knob's default describes: the lecture's
// colocated H100 with Llama-3.1-8B.
func Default() Experiment {
	var x Experiment
	for i := range Knobs {
		Knobs[i].reset(&x)
	}
	return x
}

// Lengths are the prompt and output length distributions of the Poisson
// workload.
func (x *Experiment) Lengths() (prompt, output sim.Lengths, err error) {
	mk := func(n int, spec, flag string) (sim.Lengths, error) {
		if spec != "" {
			l, err := sim.ParseLengths(spec)
			if err != nil {
				return l, fmt.Errorf("%s: %w", flag, err)
			}
			return l, nil
		}
		sp := x.Spread
		switch x.LengthDist {
		case "uniform":
			sp = math.Min(sp, 0.95)
			return sim.Lengths{Kind: "uniform", Min: max(1, int(math.Round(float64(n)*(1-sp)))), Max: max(1, int(math.Round(float64(n)*(1+sp))))}, nil
		case "lognormal":
			return sim.Lengths{Kind: "lognormal", Mu: math.Log(float64(n)), Sigma: sp, Min: 1, Max: 4 * n}, nil
		}
		return sim.Fixed(n), nil
	}
	if prompt, err = mk(x.Prompt, x.PromptDist, "--prompt-dist"); err != nil {
		return
	}
	output, err = mk(x.Output, x.OutputDist, "--output-dist")
	return
}

// RequestsAt builds the open-loop workload at rate: Poisson arrivals, or a
// copy of the trace's requests.
func (x *Experiment) RequestsAt(rate float64) ([]sim.Request, error) {
	if x.Workload == Step {
		return x.probeRequests()
	}
	if x.Workload == Trace {
		if x.TraceReqs == nil {
			return nil, errors.New("the trace workload needs a trace file (CSV or JSONL: arrival, prompt, output)")
		}
		return append([]sim.Request(nil), x.TraceReqs...), nil
	}
	p, o, err := x.Lengths()
	if err != nil {
		return nil, err
	}
	if x.SharesPrefixes() {
		return x.Conversations(rate, p, o).Build()
	}
	return sim.PoissonLengths(x.Requests, rate, p, o, x.Seed)
}

// SharesPrefixes reports whether the Poisson workload's prompts share
// prefixes (a system prompt, or sessions of several turns): its requests
// then come from Conversations, not PoissonLengths (nor a search's
// sim.PoissonSearch).
func (x *Experiment) SharesPrefixes() bool {
	return x.Workload == Poisson && (x.SystemPrompt > 0 || x.Turns > 1)
}

// Conversations is the Poisson workload with its shared prefixes at rate,
// message and answer lengths drawn from prompt and output.
func (x *Experiment) Conversations(rate float64, prompt, output sim.Lengths) sim.Conversations {
	return sim.Conversations{Requests: x.Requests, Rate: rate, System: x.SystemPrompt, Message: prompt, Output: output,
		Turns: max(x.Turns, 1), Think: x.ThinkTime, Seed: x.Seed}
}

// probeRequests is the Step workload: the batch at time 0, the prompt at ProbeAt.
func (x *Experiment) probeRequests() ([]sim.Request, error) {
	p := x.Probe
	if p.Batch < 1 || p.Batch > sim.MaxRequests || p.Context < 1 || p.Context > sim.MaxTokens || p.Prefill < 0 || p.Prefill > sim.MaxTokens {
		return nil, fmt.Errorf("--batch must be in 1..%d and --context in 1..%d, --prefill in 0..%d, got %d, %d, %d", sim.MaxRequests, sim.MaxTokens, sim.MaxTokens, p.Batch, p.Context, p.Prefill)
	}
	reqs := make([]sim.Request, 0, p.Batch+1)
	for i := range p.Batch {
		reqs = append(reqs, sim.Request{ID: i, Prompt: p.Context, Output: probeOutput})
	}
	if p.Prefill > 0 {
		reqs = append(reqs, sim.Request{ID: p.Batch, Arrival: ProbeAt, Prompt: p.Prefill, Output: 16})
	}
	return reqs, nil
}

// profile is the experiment's profile before typed assumptions.
func (x *Experiment) profile() (*sim.Profile, error) {
	if x.Loaded != nil && (x.Profile == "" || strings.EqualFold(x.Profile, x.Loaded.Name)) {
		return x.Loaded, nil
	}
	name := x.Profile
	if name == "" {
		name = sim.DefaultProfile
	}
	return sim.BuiltinProfile(name)
}

// ActiveProfile is the profile the experiment simulates with, before the
// typed assumptions are laid over it.
func (x *Experiment) ActiveProfile() (*sim.Profile, error) { return x.profile() }

// model is the experiment's model shape.
func (x *Experiment) model() (modelspecs.Model, error) {
	if x.Custom != nil {
		return *x.Custom, nil
	}
	return modelspecs.Get(x.Model)
}

// StepModel builds the step model: the profile's physics and constants for
// the GPU, with the typed assumptions over them. A typed overhead also
// scales the profile's per-sequence and per-request CPU costs (so overhead
// 0 is the GPU alone). It returns the profile it applied too.
func (x *Experiment) StepModel() (sim.StepModel, *sim.Profile, error) {
	m, err := x.model()
	if err != nil {
		return sim.StepModel{}, nil, err
	}
	g, err := hwspecs.Get(x.GPU)
	if err != nil {
		return sim.StepModel{}, nil, err
	}
	if !(x.EffCompute > 0 && x.EffMem > 0 && x.DtypeBytes > 0 && x.TP > 0) {
		return sim.StepModel{}, nil, fmt.Errorf("--eff-compute, --eff-mem, --dtype-bytes and --tp must be positive, got %g, %g, %g, %d", x.EffCompute, x.EffMem, x.DtypeBytes, x.TP)
	}
	own, err := x.profile()
	if err != nil {
		return sim.StepModel{}, nil, err
	}
	prof := own
	for _, k := range assumptionKnobs {
		if x.Typed&k.bit == 0 {
			continue
		}
		if prof, err = prof.With(g.Name, k.constant, k.get(x), k.source()); err != nil {
			return sim.StepModel{}, nil, fmt.Errorf("%s: %w", k.source(), err)
		}
	}
	if x.Typed&TypedOverhead != 0 {
		if prof, err = scaleCPU(prof, own, g.Name, x.Overhead); err != nil {
			return sim.StepModel{}, nil, err
		}
	}
	dtype := x.DtypeBytes
	if x.Typed&TypedDtype == 0 && m.DtypeBytes > 0 {
		dtype = m.DtypeBytes // the checkpoint says (an FP8 config)
	}
	step, err := prof.Apply(sim.StepModel{Model: m, GPU: g, DtypeBytes: dtype, TP: x.TP})
	return step, prof, err
}

// assumption ties a typed bit to its profile constant and flag.
type assumption struct {
	bit      Assumption
	constant string
	flag     string
	get      func(*Experiment) float64
}

// source is how a typed assumption is named in a profile's sources.
func (a assumption) source() string { return "--" + a.flag }

// assumptionKnobs are the assumptions a profile holds as constants.
var assumptionKnobs = []assumption{
	{TypedEffCompute, "eff_compute", "eff-compute", func(x *Experiment) float64 { return x.EffCompute }},
	{TypedEffMem, "eff_mem", "eff-mem", func(x *Experiment) float64 { return x.EffMem }},
	{TypedOverhead, "overhead", "overhead", func(x *Experiment) float64 { return x.Overhead }},
}

// scaleCPU scales the profile's per-sequence and per-request costs for gpu
// by the ratio of a typed overhead to the profile's own (to zero when the
// typed overhead is zero); own is the profile before any typed assumption.
func scaleCPU(prof, own *sim.Profile, gpu string, typed float64) (*sim.Profile, error) {
	var ownOverhead float64
	var costs []sim.ResolvedConstant
	for _, c := range own.Resolve(gpu) {
		switch c.Name {
		case "overhead":
			ownOverhead = c.Value
		case "seq_cost", "req_cost":
			costs = append(costs, c)
		}
	}
	var err error
	for _, c := range costs {
		v := 0.0
		if typed > 0 && ownOverhead > 0 {
			v = c.Value * typed / ownOverhead
		} else if typed > 0 {
			v = c.Value
		}
		if prof, err = prof.With(gpu, c.Name, v, fmt.Sprintf("%s x --overhead/profile overhead (%g/%g)", c.Source, typed, ownOverhead)); err != nil {
			return nil, err
		}
	}
	return prof, nil
}

// policy builds the scheduler the experiment names for one colocated
// engine (disaggregated: its instances' limits are built with prefill-only).
func (x *Experiment) policy() (sim.Policy, error) {
	name := x.Policy
	if name == Disaggregated {
		name = PrefillOnly
	}
	if x.Budget < 0 || x.Budget > sim.MaxTokens {
		return nil, fmt.Errorf("--budget must be in 1..%d tokens, got %d", sim.MaxTokens, x.Budget)
	}
	p, err := sim.NewPolicy(name, x.Budget)
	if err != nil {
		return nil, err
	}
	if c, ok := p.(sim.Chunked); ok {
		c.ExcludeDecodes = x.ExcludeDecodes
		p = c
	}
	return p, nil
}

// Config builds the colocated engine: step model, policy and limits. The
// weights must fit even in the ideal engine (a 70B model never runs
// silently on one GPU).
func (x *Experiment) Config() (sim.Config, error) {
	step, _, err := x.StepModel()
	if err != nil {
		return sim.Config{}, err
	}
	return x.ConfigFor(step)
}

// ConfigFor is Config on a step model already built.
func (x *Experiment) ConfigFor(step sim.StepModel) (sim.Config, error) {
	if !(x.Utilization > 0 && x.Utilization <= 1) {
		return sim.Config{}, fmt.Errorf("--gpu-memory-utilization must be in (0, 1], got %g", x.Utilization)
	}
	if x.BlockSize < 1 || x.BlockSize > 1<<16 {
		return sim.Config{}, fmt.Errorf("--block-size must be in 1..65536 tokens, got %d", x.BlockSize)
	}
	p, err := x.policy()
	if err != nil {
		return sim.Config{}, err
	}
	cfg := sim.Config{Step: step, Policy: p, Pause: x.Pause}
	if cfg.Spec, err = x.Speculation(); err != nil {
		return cfg, err
	}
	blocks, err := sim.MemorySplit{Utilization: x.Utilization, BlockSize: x.BlockSize}.KVBlocks(step)
	if err != nil {
		return cfg, err
	}
	if x.Ideal {
		cfg.Limits.PrefixCaching = x.PrefixCaching
		return cfg, nil
	}
	if x.MaxSeqs < 1 || x.MaxSeqs > sim.MaxRequests {
		return cfg, fmt.Errorf("--max-seqs must be in 1..%d, got %d", sim.MaxRequests, x.MaxSeqs)
	}
	cfg.Limits = sim.Limits{MaxSeqs: x.MaxSeqs, KVBlocks: blocks, BlockSize: x.BlockSize, Preempt: x.Preempt, PrefixCaching: x.PrefixCaching}
	return cfg, nil
}

// MTP names multi-token-prediction heads as the speculative drafter.
const MTP = "mtp"

// Speculation is the experiment's speculative decoding (the zero value
// when SpecTokens is 0), its draft model priced with the experiment's
// profile on its GPU.
func (x *Experiment) Speculation() (sim.Speculation, error) {
	if x.SpecTokens == 0 {
		return sim.Speculation{}, nil
	}
	if x.SpecTokens < 0 || x.SpecTokens > sim.MaxSpecTokens {
		return sim.Speculation{}, fmt.Errorf("--spec-tokens must be in 0..%d, got %d", sim.MaxSpecTokens, x.SpecTokens)
	}
	sp := sim.Speculation{K: x.SpecTokens, Accept: []float64{x.SpecAccept}, DraftCost: x.SpecDraftCost, Seed: x.Seed}
	if list := strings.TrimSpace(x.SpecAcceptList); list != "" {
		sp.Accept = nil
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return sp, fmt.Errorf("--spec-accept-list %q: %q is not a number", list, f)
			}
			sp.Accept = append(sp.Accept, v)
		}
	}
	if d := x.SpecDraft; d != "" && !strings.EqualFold(d, MTP) {
		y := *x
		y.Model, y.Custom, y.SpecTokens = d, nil, 0
		step, _, err := y.StepModel()
		if err != nil {
			return sp, fmt.Errorf("--spec-draft: %w", err)
		}
		sp.Draft = &step
	}
	if err := sp.Validate(); err != nil {
		return sp, fmt.Errorf("speculative decoding: %w", err)
	}
	return sp, nil
}

// ClusterFor builds the disaggregated deployment on step: each instance
// has the experiment's limits; prefill instances take Budget as their most
// prefill tokens per step.
func (x *Experiment) ClusterFor(step sim.StepModel) (sim.Cluster, error) {
	if x.SpecTokens > 0 {
		return sim.Cluster{}, errors.New("--spec-tokens runs on colocated engines; --policy disaggregated does not speculate")
	}
	cfg, err := x.ConfigFor(step)
	if err != nil {
		return sim.Cluster{}, err
	}
	router, err := sim.ParseRouter(x.Router)
	if err != nil {
		return sim.Cluster{}, err
	}
	// Below 10 MB/s a KV transfer takes longer than any serving question cares about.
	if !(x.LinkGBs == 0 || x.LinkGBs >= 0.01 && x.LinkGBs <= 1e6) {
		return sim.Cluster{}, fmt.Errorf("--link-gbs must be 0 (the GPU's link) or in [0.01, 1e6] GB/s, got %g", x.LinkGBs)
	}
	return sim.Cluster{Step: step, Prefill: x.PrefillGPUs, Decode: x.DecodeGPUs, LinkBW: x.LinkGBs * 1e9,
		Router: router, Limits: cfg.Limits, PrefillMaxTokens: x.Budget}, nil
}

// Validate checks the experiment's names and how its settings combine;
// Build reports the errors that need the step model (weights that do not
// fit, limits out of range).
func (x *Experiment) Validate() error {
	if !contains(Policies, x.Policy) {
		return fmt.Errorf("unknown policy %q; valid: %s", x.Policy, strings.Join(Policies, ", "))
	}
	if !contains(Workloads, x.Workload) {
		return fmt.Errorf("unknown workload %q; valid: %s", x.Workload, strings.Join(Workloads, ", "))
	}
	if x.Workload == Lab {
		if x.Policy == Disaggregated {
			return errors.New("the lab workload runs on one engine; --policy disaggregated takes Poisson arrivals or a --trace")
		}
		if err := x.Lab.Validate(); err != nil {
			return err
		}
	}
	if x.SpecTokens > 0 && x.Policy == Disaggregated {
		return errors.New("--spec-tokens runs on colocated engines; --policy disaggregated does not speculate")
	}
	if x.Replicas > 1 {
		switch {
		case x.Policy == Disaggregated:
			return errors.New("--replicas runs colocated engines behind a router; --policy disaggregated has its own --prefill-gpus and --decode-gpus")
		case x.Workload == Lab:
			return errors.New("the lab workload runs on one engine; --replicas takes Poisson arrivals or a --trace")
		case x.Policy == PrefillOnly || x.Policy == DecodeOnly:
			return fmt.Errorf("--replicas runs colocated engines: pick prefill-first or chunked, not %s", x.Policy)
		}
	}
	switch x.LengthDist {
	case "fixed", "uniform", "lognormal":
	default:
		return fmt.Errorf("unknown length distribution %q; valid: fixed, uniform, lognormal", x.LengthDist)
	}
	return nil
}

// Built is what sim runs for an experiment.
type Built struct {
	Step    sim.StepModel
	Profile *sim.Profile // the profile applied, typed assumptions included
	// Config is the colocated engine (for a disaggregated experiment: one
	// instance's limits, as Cluster has them).
	Config sim.Config
	// Cluster is the disaggregated deployment; nil when colocated.
	Cluster *sim.Cluster
	// Replicas is the colocated engines behind a router (Config is each
	// one's); nil for one engine.
	Replicas *sim.Replicas
}

// Build validates the experiment and builds its step model, engine and
// (when disaggregated) cluster. Workloads are built apart, at a rate
// (RequestsAt) or as the lab's closed loop (Lab).
func (x *Experiment) Build() (*Built, error) {
	if err := x.Validate(); err != nil {
		return nil, err
	}
	step, prof, err := x.StepModel()
	if err != nil {
		return nil, err
	}
	b := &Built{Step: step, Profile: prof}
	if x.Policy == Disaggregated {
		c, err := x.ClusterFor(step)
		if err != nil {
			return nil, err
		}
		b.Cluster = &c
		b.Config = sim.Config{Step: step, Limits: c.Limits}
		return b, nil
	}
	if b.Config, err = x.ConfigFor(step); err != nil {
		return nil, err
	}
	if x.Replicas > 1 {
		if b.Replicas, err = x.ReplicasFor(b.Config); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ReplicasFor is the experiment's replicas, each running cfg.
func (x *Experiment) ReplicasFor(cfg sim.Config) (*sim.Replicas, error) {
	if x.Replicas < 1 || x.Replicas > sim.MaxInstances {
		return nil, fmt.Errorf("--replicas must be in 1..%d, got %d", sim.MaxInstances, x.Replicas)
	}
	route, err := sim.ParseRoute(x.Route)
	if err != nil {
		return nil, err
	}
	if !(x.RouteStale >= 0 && x.RouteStale <= sim.MaxStale) {
		return nil, fmt.Errorf("--route-stale must be in [0, %d] s, got %g", sim.MaxStale, x.RouteStale)
	}
	if x.RouteThreshold < 0 || x.RouteThreshold > sim.MaxRequests {
		return nil, fmt.Errorf("--route-threshold must be in 0..%d requests, got %d", sim.MaxRequests, x.RouteThreshold)
	}
	return &sim.Replicas{Config: cfg, N: x.Replicas, Route: route, Stale: x.RouteStale, Threshold: x.RouteThreshold}, nil
}

// EffectiveBudget is the budget the policy runs with: Budget, or the
// policy's default when it is 0.
func (x *Experiment) EffectiveBudget() int {
	if x.Budget > 0 {
		return x.Budget
	}
	if x.Policy == Chunked {
		return sim.DefaultBudget
	}
	return sim.DefaultMaxPrefillTokens
}

// PolicyName is how the experiment's scheduler reads in a summary.
func (b *Built) PolicyName() string {
	if b.Cluster != nil {
		return "disaggregated " + b.Cluster.String()
	}
	if r := b.Replicas; r != nil {
		s := fmt.Sprintf("%s x%d replicas, %s router", b.Config.Policy.Name(), r.N, r.Route)
		if r.Stale > 0 {
			s += fmt.Sprintf(" (load %g ms old)", r.Stale*1e3)
		}
		return s
	}
	return b.Config.Policy.Name()
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
