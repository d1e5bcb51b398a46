package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
)

// Kind is how a knob's value is written.
type Kind int

const (
	Float  Kind = iota // a number
	Int                // a whole number
	Bool               // 0 or 1 in a URL; a bool flag, or FlagWords
	Choice             // one of Choices (Text when Choices is nil)
)

// Group says which commands bind a knob's flag.
type Group uint16

const (
	StepGroup     Group = 1 << iota // the step model: every simulating command
	EngineGroup                     // policy, budget, limits
	ClusterGroup                    // disaggregation
	PoissonGroup                    // the open-loop workload
	LabGroup                        // run.py's closed loop
	SLOGroup                        // objectives (goodput, the page)
	ProbeGroup                      // one step priced alone (servelab step)
	WorkloadGroup                   // the workload's name
)

// Knob is one setting of an experiment, defined once: its JSON key (Name),
// CLI flag, URL key (also the page control's id), older URL keys still
// read, kind, range and step (the page's sliders; values outside are
// clamped with a note), default, the page's unit and scale, catalogue
// label key and CLI help. Its accessors read and write the Experiment's
// field; a knob without a Flag is the page's alone, one without a URL the
// CLI's alone.
type Knob struct {
	Name    string
	Flag    string
	URL     string
	Aliases []string
	Kind    Kind
	Group   Group
	// Min, Max, Step and Def are in the field's unit (seconds, tokens, req/s).
	Min, Max, Step, Def float64
	// DefS is a Choice knob's default.
	DefS string
	// PageScale is the page's unit per field unit (1e3: the page shows ms);
	// 0 means 1. The URL writes the page's unit.
	PageScale float64
	Unit      string // the page's unit
	// Slider is the page's slider: min, max and step in the page's unit,
	// narrower than the range a link may give (zero: the range).
	Slider [3]float64
	Usage  string // the CLI's help
	// Bit marks an assumption: setting it marks the experiment's Typed.
	Bit Assumption
	// FlagWords are a Bool knob's flag values for false and true (on-full:
	// wait|preempt); FlagNegates says a bool flag states the opposite
	// (--budget-excludes-decodes is "budget counts decodes" = false).
	FlagWords   [2]string
	FlagNegates bool
	// Choices lists a Choice knob's values (nil: free text); Older maps
	// older spellings, still read, to them.
	Choices func() []string
	Older   map[string]string

	get  func(*Experiment) float64
	set  func(*Experiment, float64)
	getS func(*Experiment) string
	setS func(*Experiment, string)
}

// Label is the knob's catalogue key.
func (k *Knob) Label() string {
	if k.URL != "" {
		return "param." + k.URL
	}
	return "knob." + k.Name
}

// SliderRange is the page's slider for the knob: min, max and step in the
// page's unit.
func (k *Knob) SliderRange() (lo, hi, step float64) {
	if k.Slider != [3]float64{} {
		return k.Slider[0], k.Slider[1], k.Slider[2]
	}
	s := k.Scale()
	return round9(k.Min * s), round9(k.Max * s), round9(k.Step * s)
}

// Scale is the page's unit per field unit.
func (k *Knob) Scale() float64 {
	if k.PageScale == 0 {
		return 1
	}
	return k.PageScale
}

// Get is the knob's value in the field's unit (Choice knobs: NaN).
func (k *Knob) Get(x *Experiment) float64 {
	if k.get == nil {
		return math.NaN()
	}
	return k.get(x)
}

// Text is the knob's value as the CLI and the URL write it (the URL's
// numbers are in the page's unit: see URLText).
func (k *Knob) Text(x *Experiment) string {
	if k.Kind == Choice {
		return k.getS(x)
	}
	return formatNum(k.get(x))
}

// URLText is the knob's value as a URL writes it.
func (k *Knob) URLText(x *Experiment) string {
	if k.Kind == Choice {
		return k.getS(x)
	}
	return formatNum(round9(k.get(x) * k.Scale()))
}

// SetValue stores v (in the field's unit) as it is; the CLI's checks and
// Build's say what is out of range. Assumptions are marked typed.
func (k *Knob) SetValue(x *Experiment, v float64) {
	if k.Kind == Int || k.Kind == Bool {
		v = math.Round(v)
	}
	k.set(x, v)
	x.Typed |= k.Bit
}

// reset sets the knob's default (not typed).
func (k *Knob) reset(x *Experiment) {
	if k.Kind == Choice {
		k.setS(x, k.DefS)
		return
	}
	k.set(x, k.Def)
}

// IsDefault reports whether the knob holds its default.
func (k *Knob) IsDefault(x *Experiment) bool {
	if k.Kind == Choice {
		return k.getS(x) == k.DefS
	}
	return k.get(x) == k.Def
}

// Pick resolves a Choice value, case-insensitively, to its spelling in
// Choices (aliases included); ok is false when it is not one of them.
func (k *Knob) Pick(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if k.Choices == nil {
		return v, true
	}
	if a, ok := k.Older[strings.ToLower(v)]; ok {
		v = a
	}
	for _, c := range k.Choices() {
		if strings.EqualFold(c, v) {
			return c, true
		}
	}
	return v, false
}

// SetChoice stores a Choice knob's value as given (Pick first to check it).
func (k *Knob) SetChoice(x *Experiment, v string) { k.setS(x, v) }

func formatNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// round9 drops the float noise a unit's scale leaves (0.001*1e3).
func round9(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// numAcc and textAcc read and write one field of an Experiment.
type numAcc struct {
	get func(*Experiment) float64
	set func(*Experiment, float64)
}

type textAcc struct {
	get func(*Experiment) string
	set func(*Experiment, string)
}

func f64(p func(*Experiment) *float64) numAcc {
	return numAcc{func(x *Experiment) float64 { return *p(x) }, func(x *Experiment, v float64) { *p(x) = v }}
}

func integer(p func(*Experiment) *int) numAcc {
	return numAcc{func(x *Experiment) float64 { return float64(*p(x)) }, func(x *Experiment, v float64) { *p(x) = int(v) }}
}

func boolean(p func(*Experiment) *bool) numAcc {
	return numAcc{func(x *Experiment) float64 { return b2f(*p(x)) }, func(x *Experiment, v float64) { *p(x) = v != 0 }}
}

func text(p func(*Experiment) *string) textAcc {
	return textAcc{func(x *Experiment) string { return *p(x) }, func(x *Experiment, v string) { *p(x) = v }}
}

func num(k Knob, a numAcc) Knob {
	k.get, k.set = a.get, a.set
	return k
}

func choice(k Knob, a textAcc) Knob {
	k.Kind, k.getS, k.setS = Choice, a.get, a.set
	return k
}

var lab = sim.DefaultLab()

// Knobs is every setting of an experiment, once. The URL keys of links
// already in slides stay valid (old spellings are Aliases).
var Knobs = []Knob{
	// The workload's name and the scheduler.
	choice(Knob{Name: "workload", Flag: "workload", URL: "workload", Group: WorkloadGroup, DefS: Poisson,
		Usage:   "poisson (open loop, --rate), lab (run.py's closed loop with an injected long prompt), trace (--trace FILE) or step (demo 1 as a run: --batch decodes at --context, a --prefill prompt arriving among them)",
		Choices: func() []string { return Workloads }},
		text(func(x *Experiment) *string { return &x.Workload })),
	choice(Knob{Name: "policy", Flag: "policy", URL: "policy", Group: EngineGroup, DefS: PrefillFirst,
		Usage:   "scheduler: prefill-first, chunked, prefill-only, decode-only, or disaggregated (with --prefill-gpus, --decode-gpus)",
		Choices: func() []string { return Policies }, Older: map[string]string{"disagg": Disaggregated, "colocated": PrefillFirst}},
		text(func(x *Experiment) *string { return &x.Policy })),
	// The hardware and the step model.
	choice(Knob{Name: "model", Flag: "model", URL: "model", Group: StepGroup, DefS: modelspecs.Default,
		Usage: "model name (list: servelab models)", Choices: modelspecs.Names},
		text(func(x *Experiment) *string { return &x.Model })),
	choice(Knob{Name: "gpu", Flag: "gpu", URL: "gpu", Group: StepGroup, DefS: hwspecs.Default,
		Usage: "GPU name (list: servelab models)", Choices: hwspecs.Names},
		text(func(x *Experiment) *string { return &x.GPU })),
	choice(Knob{Name: "profile", Flag: "profile", URL: "profile", Group: StepGroup, DefS: sim.DefaultProfile,
		Usage: "step-model profile: " + strings.Join(sim.ProfileNames(), ", ") + ", or a profile JSON file (e.g. from servelab calibrate); typed --eff-* and --overhead override it"},
		text(func(x *Experiment) *string { return &x.Profile })),
	num(Knob{Name: "eff_compute", Flag: "eff-compute", URL: "effc", Group: StepGroup, Min: 0.05, Max: 1, Step: 0.01, Def: sim.DefaultEffCompute, Bit: TypedEffCompute,
		Usage: "fraction of peak FLOP/s reached (typed: overrides --profile; the default is the lecture's)"},
		f64(func(x *Experiment) *float64 { return &x.EffCompute })),
	num(Knob{Name: "eff_mem", Flag: "eff-mem", URL: "effm", Group: StepGroup, Min: 0.05, Max: 1, Step: 0.01, Def: sim.DefaultEffMem, Bit: TypedEffMem,
		Usage: "fraction of peak memory bandwidth reached (typed: overrides --profile)"},
		f64(func(x *Experiment) *float64 { return &x.EffMem })),
	num(Knob{Name: "overhead", Flag: "overhead", URL: "ovh", Group: StepGroup, Min: 0, Max: 0.05, Step: 0.0001, Def: sim.DefaultOverhead, PageScale: 1e3, Unit: "ms", Bit: TypedOverhead, Slider: [3]float64{0, 10, 0.1},
		Usage: "fixed seconds per iteration (typed: overrides --profile and scales its per-sequence and per-request CPU costs)"},
		f64(func(x *Experiment) *float64 { return &x.Overhead })),
	num(Knob{Name: "dtype_bytes", Flag: "dtype-bytes", URL: "dtype", Group: StepGroup, Min: 0.5, Max: 4, Step: 0.5, Def: sim.DefaultDtypeBytes, Unit: "bytes", Bit: TypedDtype,
		Usage: "bytes per weight and KV element (2 = bf16; default: the checkpoint's, 1 for an FP8 config.json)"},
		f64(func(x *Experiment) *float64 { return &x.DtypeBytes })),
	num(Knob{Name: "tp", Flag: "tp", URL: "tp", Kind: Int, Group: StepGroup, Min: 1, Max: 8, Step: 1, Def: 1,
		Usage: "tensor-parallel degree"},
		integer(func(x *Experiment) *int { return &x.TP })),
	// The scheduler's budget and the engine's limits.
	num(Knob{Name: "budget", Flag: "budget", URL: "budget", Kind: Int, Group: EngineGroup, Min: 0, Max: 16384, Step: 16, Def: 0, Unit: "tokens/step", Slider: [3]float64{64, 32768, 64},
		Usage: "per-step token budget (vLLM's max_num_batched_tokens): chunked's, counting decodes (default 2048); prefill-first's and prefill instances' most prefill tokens per step (default 32768)"},
		integer(func(x *Experiment) *int { return &x.Budget })),
	num(Knob{Name: "budget_counts_decodes", Flag: "budget-excludes-decodes", FlagNegates: true, URL: "bdec", Kind: Bool, Group: EngineGroup, Min: 0, Max: 1, Step: 1, Def: 1,
		Usage: "chunked: the budget limits only prefill tokens (the lecture's reading)"},
		numAcc{func(x *Experiment) float64 { return b2f(!x.ExcludeDecodes) }, func(x *Experiment, v float64) { x.ExcludeDecodes = v == 0 }}),
	num(Knob{Name: "ideal", Flag: "ideal", URL: "ideal", Kind: Bool, Group: EngineGroup, Min: 0, Max: 1, Step: 1, Def: 0,
		Usage: "no memory or sequence limits (the lecture's idealised engine)"},
		boolean(func(x *Experiment) *bool { return &x.Ideal })),
	num(Knob{Name: "max_seqs", Flag: "max-seqs", URL: "maxseqs", Kind: Int, Group: EngineGroup, Min: 1, Max: 4096, Step: 1, Def: 256,
		Usage: "most sequences holding KV at once (vLLM max_num_seqs)"},
		integer(func(x *Experiment) *int { return &x.MaxSeqs })),
	num(Knob{Name: "gpu_memory_utilization", Flag: "gpu-memory-utilization", URL: "gpumem", Group: EngineGroup, Min: 0.05, Max: 1, Step: 0.01, Def: sim.DefaultUtilization,
		Usage: "fraction of GPU memory for weights + KV cache"},
		f64(func(x *Experiment) *float64 { return &x.Utilization })),
	num(Knob{Name: "block_size", Flag: "block-size", URL: "block", Kind: Int, Group: EngineGroup, Min: 1, Max: 1024, Step: 1, Def: 16, Unit: "tokens",
		Usage: "tokens per KV-cache block"},
		integer(func(x *Experiment) *int { return &x.BlockSize })),
	num(Knob{Name: "preempt", Flag: "on-full", FlagWords: [2]string{"wait", "preempt"}, URL: "preempt", Kind: Bool, Group: EngineGroup, Min: 0, Max: 1, Step: 1, Def: 1,
		Usage: "when the KV cache is full: preempt (recompute the newest sequence) or wait (reserve whole requests up front)"},
		boolean(func(x *Experiment) *bool { return &x.Preempt })),
	num(Knob{Name: "prefix_caching", Flag: "prefix-caching", URL: "pcache", Kind: Bool, Group: EngineGroup, Min: 0, Max: 1, Step: 1, Def: 0,
		Usage: "keep KV blocks by content: a prompt reuses its longest cached prefix of full blocks and prefills the rest; freed blocks stay cached until evicted, least recently used first (vLLM's automatic prefix caching)"},
		boolean(func(x *Experiment) *bool { return &x.PrefixCaching })),
	// Speculative decoding.
	num(Knob{Name: "spec_tokens", Flag: "spec-tokens", URL: "spk", Kind: Int, Group: EngineGroup, Min: 0, Max: sim.MaxSpecTokens, Step: 1, Def: 0, Unit: "tokens",
		Usage: "speculative decoding: draft tokens per sequence per step, verified in one pass of k+1 tokens (0: off)"},
		integer(func(x *Experiment) *int { return &x.SpecTokens })),
	num(Knob{Name: "spec_accept", Flag: "spec-accept", URL: "spa", Group: EngineGroup, Min: 0, Max: 1, Step: 0.01, Def: 0.7,
		Usage: "speculative decoding: the chance each draft is accepted once the ones before it were"},
		f64(func(x *Experiment) *float64 { return &x.SpecAccept })),
	choice(Knob{Name: "spec_accept_list", Flag: "spec-accept-list", URL: "spal", Group: EngineGroup,
		Usage: "speculative decoding: an acceptance rate per draft position, e.g. 0.9,0.8,0.6 (instead of --spec-accept)"},
		text(func(x *Experiment) *string { return &x.SpecAcceptList })),
	choice(Knob{Name: "spec_draft", Flag: "spec-draft", URL: "spd", Group: EngineGroup, DefS: MTP,
		Usage:   "speculative decoding: the drafter: mtp (heads on the model, --spec-draft-cost of a step per draft) or a catalogue model run on the same GPU",
		Choices: func() []string { return append([]string{MTP}, modelspecs.Names()...) }},
		text(func(x *Experiment) *string { return &x.SpecDraft })),
	num(Knob{Name: "spec_draft_cost", Flag: "spec-draft-cost", URL: "spdc", Group: EngineGroup, Min: 0, Max: 1, Step: 0.01, Def: 0.05,
		Usage: "speculative decoding with mtp: each draft token's cost as a fraction of a plain decode step"},
		f64(func(x *Experiment) *float64 { return &x.SpecDraftCost })),
	// The open-loop workload.
	num(Knob{Name: "rate", Flag: "rate", URL: "rate", Group: PoissonGroup, Min: 0.1, Max: 200, Step: 0.1, Def: 10, Unit: "req/s", Slider: [3]float64{0.5, 100, 0.5},
		Usage: "Poisson arrival rate, requests/s"},
		f64(func(x *Experiment) *float64 { return &x.Rate })),
	num(Knob{Name: "requests", Flag: "requests", URL: "n", Kind: Int, Group: PoissonGroup, Min: 1, Max: 20000, Step: 1, Def: 1500,
		Usage: "requests to simulate"},
		integer(func(x *Experiment) *int { return &x.Requests })),
	num(Knob{Name: "prompt", Flag: "prompt", URL: "prompt", Kind: Int, Group: PoissonGroup, Min: 1, Max: 32768, Step: 1, Def: 512, Unit: "tokens", Slider: [3]float64{16, 8192, 16},
		Usage: "prompt tokens (fixed)"},
		integer(func(x *Experiment) *int { return &x.Prompt })),
	num(Knob{Name: "output", Flag: "output", URL: "output", Kind: Int, Group: PoissonGroup, Min: 1, Max: 4096, Step: 1, Def: 64, Unit: "tokens", Slider: [3]float64{2, 1024, 1},
		Usage: "output tokens (fixed)"},
		integer(func(x *Experiment) *int { return &x.Output })),
	choice(Knob{Name: "length_dist", Flag: "length-dist", URL: "lendist", Group: PoissonGroup, DefS: "fixed",
		Usage:   "prompt and output lengths: fixed, uniform (within ±--length-spread of --prompt and --output) or lognormal (sigma --length-spread, clamped to [1, 4x])",
		Choices: func() []string { return []string{"fixed", "uniform", "lognormal"} }, Older: map[string]string{"0": "fixed", "1": "uniform", "2": "lognormal"}},
		text(func(x *Experiment) *string { return &x.LengthDist })),
	num(Knob{Name: "length_spread", Flag: "length-spread", URL: "spread", Group: PoissonGroup, Min: 0, Max: 2, Step: 0.05, Def: 0.5,
		Usage: "uniform: the fraction either side of the length; lognormal: sigma"},
		f64(func(x *Experiment) *float64 { return &x.Spread })),
	choice(Knob{Name: "prompt_dist", Flag: "prompt-dist", URL: "pdist", Group: PoissonGroup,
		Usage: "prompt length distribution instead of --prompt: N, uniform:LO,HI or lognormal:MU,SIGMA,LO,HI"},
		text(func(x *Experiment) *string { return &x.PromptDist })),
	choice(Knob{Name: "output_dist", Flag: "output-dist", URL: "odist", Group: PoissonGroup,
		Usage: "output length distribution instead of --output (same forms)"},
		text(func(x *Experiment) *string { return &x.OutputDist })),
	num(Knob{Name: "system_prompt", Flag: "system-prompt", URL: "sys", Kind: Int, Group: PoissonGroup, Min: 0, Max: 32768, Step: 1, Def: 0, Unit: "tokens", Slider: [3]float64{0, 8192, 16},
		Usage: "tokens of a system prompt every prompt starts with, the same for all (0: none); --prompt is then the question after it"},
		integer(func(x *Experiment) *int { return &x.SystemPrompt })),
	num(Knob{Name: "turns", Flag: "turns", URL: "turns", Kind: Int, Group: PoissonGroup, Min: 1, Max: 64, Step: 1, Def: 1,
		Usage: "turns per session: each turn's prompt is the history so far (system prompt, earlier messages and answers) plus a new --prompt-token message; --rate stays requests/s"},
		integer(func(x *Experiment) *int { return &x.Turns })),
	num(Knob{Name: "think_time", Flag: "think-time", URL: "think", Group: PoissonGroup, Min: 0, Max: 600, Step: 0.5, Def: 10, Unit: "s",
		Usage: "sessions: mean seconds from one turn's arrival to the next's (exponential)"},
		f64(func(x *Experiment) *float64 { return &x.ThinkTime })),
	num(Knob{Name: "seed", Flag: "seed", URL: "seed", Kind: Int, Group: PoissonGroup, Min: 0, Max: 1e9, Step: 1, Def: 0,
		Usage: "workload seed"},
		numAcc{func(x *Experiment) float64 { return float64(x.Seed) }, func(x *Experiment, v float64) { x.Seed = uint64(max(v, 0)) }}),
	// The lab's closed loop: run.py's flags, names and defaults.
	num(Knob{Name: "short_concurrency", Flag: "short-concurrency", URL: "streams", Kind: Int, Group: LabGroup, Min: 1, Max: 256, Step: 1, Def: float64(lab.ShortConcurrency), Slider: [3]float64{1, 128, 1},
		Usage: "lab: short requests kept in flight"},
		integer(func(x *Experiment) *int { return &x.Lab.ShortConcurrency })),
	num(Knob{Name: "short_input_len", Flag: "short-input-len", URL: "sin", Kind: Int, Group: LabGroup, Min: 1, Max: 32768, Step: 1, Def: float64(lab.ShortInputLen), Unit: "tokens", Slider: [3]float64{16, 8192, 16},
		Usage: "lab: prompt tokens of the short requests"},
		integer(func(x *Experiment) *int { return &x.Lab.ShortInputLen })),
	num(Knob{Name: "short_output_len", Flag: "short-output-len", URL: "sout", Kind: Int, Group: LabGroup, Min: 1, Max: 4096, Step: 1, Def: float64(lab.ShortOutputLen), Unit: "tokens", Slider: [3]float64{2, 1024, 1},
		Usage: "lab: output tokens of the short requests"},
		integer(func(x *Experiment) *int { return &x.Lab.ShortOutputLen })),
	num(Knob{Name: "long_input_len", Flag: "long-input-len", URL: "long", Kind: Int, Group: LabGroup, Min: 1, Max: 131072, Step: 1, Def: float64(lab.LongInputLen), Unit: "tokens", Slider: [3]float64{512, 131072, 512},
		Usage: "lab: prompt tokens of the injected long request"},
		integer(func(x *Experiment) *int { return &x.Lab.LongInputLen })),
	num(Knob{Name: "long_output_len", Flag: "long-output-len", URL: "longout", Kind: Int, Group: LabGroup, Min: 1, Max: 4096, Step: 1, Def: float64(lab.LongOutputLen), Unit: "tokens",
		Usage: "lab: output tokens of the long request"},
		integer(func(x *Experiment) *int { return &x.Lab.LongOutputLen })),
	num(Knob{Name: "long_count", Flag: "long-count", URL: "longn", Kind: Int, Group: LabGroup, Min: 1, Max: 64, Step: 1, Def: float64(lab.LongCount),
		Usage: "lab: long prompts injected at once"},
		integer(func(x *Experiment) *int { return &x.Lab.LongCount })),
	num(Knob{Name: "duration", Flag: "duration", URL: "duration", Group: LabGroup, Min: 1, Max: 600, Step: 1, Def: lab.Duration, Unit: "s",
		Usage: "lab: seconds of short-request load"},
		f64(func(x *Experiment) *float64 { return &x.Lab.Duration })),
	num(Knob{Name: "inject_after", Flag: "inject-after", URL: "inject", Group: LabGroup, Min: 0, Max: 600, Step: 0.5, Def: lab.InjectAfter, Unit: "s",
		Usage: "lab: seconds into the run at which the long prompt arrives"},
		f64(func(x *Experiment) *float64 { return &x.Lab.InjectAfter })),
	// Disaggregation.
	num(Knob{Name: "prefill_gpus", Flag: "prefill-gpus", URL: "xp", Kind: Int, Group: ClusterGroup, Min: 1, Max: 8, Step: 1, Def: 2,
		Usage: "disaggregated: prefill instances"},
		integer(func(x *Experiment) *int { return &x.PrefillGPUs })),
	num(Knob{Name: "decode_gpus", Flag: "decode-gpus", URL: "yd", Kind: Int, Group: ClusterGroup, Min: 1, Max: 8, Step: 1, Def: 1,
		Usage: "disaggregated: decode instances"},
		integer(func(x *Experiment) *int { return &x.DecodeGPUs })),
	num(Knob{Name: "link_gbs", Flag: "link-gbs", URL: "link", Group: ClusterGroup, Min: 0, Max: 1e4, Step: 1, Def: 0, Unit: "GB/s",
		Usage: "disaggregated: KV transfer bandwidth in GB/s (default: the GPU's scale-up link)"},
		f64(func(x *Experiment) *float64 { return &x.LinkGBs })),
	choice(Knob{Name: "router", Flag: "router", URL: "router", Group: ClusterGroup, DefS: string(sim.LeastLoaded),
		Usage: "disaggregated: least-loaded or round-robin", Choices: sim.RouterNames},
		text(func(x *Experiment) *string { return &x.Router })),
	// Replicas behind a router.
	num(Knob{Name: "replicas", Flag: "replicas", URL: "reps", Kind: Int, Group: ClusterGroup, Min: 1, Max: 16, Step: 1, Def: 1,
		Usage: "colocated engines (each a whole copy of the model on its own GPUs) behind a router (1: one engine)"},
		integer(func(x *Experiment) *int { return &x.Replicas })),
	choice(Knob{Name: "route", Flag: "route", URL: "route", Group: ClusterGroup, DefS: string(sim.RouteLeastOutstanding),
		Usage: "replicas: how the router picks one: round-robin, least-outstanding (fewest requests in flight) or prefix-aware (the longest cached prefix, unless loaded past --route-threshold)", Choices: sim.RouteNames},
		text(func(x *Experiment) *string { return &x.Route })),
	num(Knob{Name: "route_stale", Flag: "route-stale", URL: "stale", Group: ClusterGroup, Min: 0, Max: 5, Step: 0.01, Def: 0, PageScale: 1e3, Unit: "ms", Slider: [3]float64{0, 2000, 10},
		Usage: "replicas: seconds old the load figures the router acts on are (0: fresh; its own later sends unseen too)"},
		f64(func(x *Experiment) *float64 { return &x.RouteStale })),
	num(Knob{Name: "route_threshold", Flag: "route-threshold", URL: "rthresh", Kind: Int, Group: ClusterGroup, Min: 0, Max: 256, Step: 1, Def: 8,
		Usage: "replicas, prefix-aware: a replica with more than this many requests in flight over the least loaded is passed over"},
		integer(func(x *Experiment) *int { return &x.RouteThreshold })),
	// Objectives.
	num(Knob{Name: "ttft_slo", Flag: "ttft-slo", URL: "slottft", Group: SLOGroup, Min: 0.001, Max: 100, Step: 0.001, Def: 0.1, PageScale: 1e3, Unit: "ms", Slider: [3]float64{10, 1000, 1},
		Usage: "TTFT objective, seconds (0: not checked)"},
		f64(func(x *Experiment) *float64 { return &x.SLO.TTFT })),
	num(Knob{Name: "tpot_slo", Flag: "tpot-slo", URL: "slotpot", Group: SLOGroup, Min: 0.0001, Max: 10, Step: 0.0001, Def: 0.015, PageScale: 1e3, Unit: "ms", Slider: [3]float64{1, 100, 0.1},
		Usage: "TPOT objective, seconds (0: not checked)"},
		f64(func(x *Experiment) *float64 { return &x.SLO.TPOT })),
	num(Knob{Name: "attainment", Flag: "attainment", URL: "attain", Group: SLOGroup, Min: 0.5, Max: 1, Step: 0.01, Def: 0.9,
		Usage: "fraction of requests that must meet the objectives"},
		f64(func(x *Experiment) *float64 { return &x.Attainment })),
	// One step priced alone.
	num(Knob{Name: "batch", Flag: "batch", URL: "batch", Kind: Int, Group: ProbeGroup, Min: 1, Max: 512, Step: 1, Def: 32, Slider: [3]float64{1, 256, 1},
		Usage: "sequences decoding in the step"},
		integer(func(x *Experiment) *int { return &x.Probe.Batch })),
	num(Knob{Name: "context", Flag: "context", URL: "ctx", Kind: Int, Group: ProbeGroup, Min: 1, Max: 32768, Step: 1, Def: 700, Unit: "tokens", Slider: [3]float64{1, 8192, 1},
		Usage: "context tokens of each decoding sequence"},
		integer(func(x *Experiment) *int { return &x.Probe.Context })),
	num(Knob{Name: "prefill", Flag: "prefill", URL: "pre", Kind: Int, Group: ProbeGroup, Min: 0, Max: 32768, Step: 1, Def: 0, Unit: "tokens",
		Usage: "tokens of one new prompt prefilled in the same step (0: none)"},
		integer(func(x *Experiment) *int { return &x.Probe.Prefill })),
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// knobByURL and knobByFlag index the table.
var knobByURL, knobByFlag = func() (map[string]*Knob, map[string]*Knob) {
	u, f := map[string]*Knob{}, map[string]*Knob{}
	for i := range Knobs {
		k := &Knobs[i]
		if k.URL != "" {
			u[k.URL] = k
		}
		for _, a := range k.Aliases {
			u[a] = k
		}
		if k.Flag != "" {
			f[k.Flag] = k
		}
	}
	return u, f
}()

// KnobByURL finds a knob by its URL key (or an older spelling).
func KnobByURL(key string) (*Knob, bool) { k, ok := knobByURL[key]; return k, ok }

// KnobByFlag finds a knob by its CLI flag.
func KnobByFlag(flag string) (*Knob, bool) { k, ok := knobByFlag[flag]; return k, ok }

// KnobByName finds a knob by its JSON key.
func KnobByName(name string) (*Knob, bool) {
	for i := range Knobs {
		if Knobs[i].Name == name {
			return &Knobs[i], true
		}
	}
	return nil, false
}

// String names a knob for messages: its flag, or its URL key.
func (k *Knob) String() string {
	if k.Flag != "" {
		return "--" + k.Flag
	}
	return fmt.Sprintf("%q", k.URL)
}
