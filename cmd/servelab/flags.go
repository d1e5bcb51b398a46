package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
)

// stepFlags are the step model's knobs, shared by every subcommand that simulates.
type stepFlags struct {
	model, gpu, modelConfig string
	effCompute, effMem      float64
	overhead, dtypeBytes    float64
	tp                      int
	profile                 string        // --profile: lecture, vllm or a profile JSON file
	fs                      *flag.FlagSet // to tell typed flags from defaults
	resolved                *sim.Profile  // the profile stepModel applied, with typed flags as overrides
}

func addStepFlags(fs *flag.FlagSet) *stepFlags {
	f := &stepFlags{fs: fs}
	fs.StringVar(&f.profile, "profile", sim.DefaultProfile, "step-model profile: "+strings.Join(sim.ProfileNames(), ", ")+", or a profile JSON file (e.g. from servelab calibrate); typed --eff-* and --overhead override it")
	fs.StringVar(&f.model, "model", modelspecs.Default, "model name (list: servelab models)")
	fs.StringVar(&f.gpu, "gpu", hwspecs.Default, "GPU name (list: servelab models)")
	fs.StringVar(&f.modelConfig, "model-config", "", "Hugging Face config.json to use instead of --model")
	fs.Float64Var(&f.effCompute, "eff-compute", sim.DefaultEffCompute, "fraction of peak FLOP/s reached (typed: overrides --profile; the default is the lecture's)")
	fs.Float64Var(&f.effMem, "eff-mem", sim.DefaultEffMem, "fraction of peak memory bandwidth reached (typed: overrides --profile)")
	fs.Float64Var(&f.overhead, "overhead", sim.DefaultOverhead, "fixed seconds per iteration (typed: overrides --profile and scales its per-sequence and per-request CPU costs)")
	fs.Float64Var(&f.dtypeBytes, "dtype-bytes", sim.DefaultDtypeBytes, "bytes per weight and KV element (2 = bf16)")
	fs.IntVar(&f.tp, "tp", 1, "tensor-parallel degree")
	return f
}

// stepModel resolves the names and builds a validated step model.
func (f *stepFlags) stepModel() (sim.StepModel, error) {
	var m modelspecs.Model
	var err error
	if f.modelConfig != "" {
		data, rerr := os.ReadFile(f.modelConfig)
		if rerr != nil {
			return sim.StepModel{}, fmt.Errorf("--model-config: %w", rerr)
		}
		m, err = modelspecs.FromHFConfig(data, f.modelConfig)
	} else {
		m, err = modelspecs.Get(f.model)
	}
	if err != nil {
		return sim.StepModel{}, err
	}
	g, err := hwspecs.Get(f.gpu)
	if err != nil {
		return sim.StepModel{}, err
	}
	// Prepare reads zero as "default"; on the command line zero was typed, so refuse it.
	if !(f.effCompute > 0 && f.effMem > 0 && f.dtypeBytes > 0 && f.tp > 0) {
		return sim.StepModel{}, fmt.Errorf("--eff-compute, --eff-mem, --dtype-bytes and --tp must be positive, got %g, %g, %g, %d", f.effCompute, f.effMem, f.dtypeBytes, f.tp)
	}
	prof, err := loadProfile(f.profile)
	if err != nil {
		return sim.StepModel{}, err
	}
	own := prof
	// Constants typed on the command line override the profile's.
	for _, o := range []struct {
		flag, name string
		v          float64
	}{{"eff-compute", "eff_compute", f.effCompute}, {"eff-mem", "eff_mem", f.effMem}, {"overhead", "overhead", f.overhead}} {
		if flagSet(f.fs, o.flag) {
			if prof, err = prof.With(g.Name, o.name, o.v, "--"+o.flag); err != nil {
				return sim.StepModel{}, fmt.Errorf("--%s: %w", o.flag, err)
			}
		}
	}
	// A typed --overhead states the host's CPU cost per iteration: the
	// profile's per-sequence and per-request CPU costs scale with it (so
	// --overhead 0 is the GPU alone).
	if flagSet(f.fs, "overhead") {
		if prof, err = scaleCPU(prof, own, g.Name, f.overhead); err != nil {
			return sim.StepModel{}, err
		}
	}
	f.resolved = prof
	dtype := f.dtypeBytes
	if !flagSet(f.fs, "dtype-bytes") && m.DtypeBytes > 0 {
		dtype = m.DtypeBytes // the checkpoint says (an FP8 config)
	}
	return prof.Apply(sim.StepModel{Model: m, GPU: g, DtypeBytes: dtype, TP: f.tp})
}

// engineFlags choose the policy and the engine's real-world limits.
type engineFlags struct {
	policy         string
	budget         int
	excludeDecodes bool
	ideal          bool
	maxSeqs        int
	blockSize      int
	utilization    float64
	onFull         string
	fs             *flag.FlagSet // to tell a typed --budget 0 from the default
}

func addEngineFlags(fs *flag.FlagSet) *engineFlags {
	f := &engineFlags{fs: fs}
	fs.StringVar(&f.policy, "policy", "prefill-first", "scheduler: prefill-first, chunked, prefill-only, decode-only, or disaggregated (with --prefill-gpus, --decode-gpus)")
	fs.IntVar(&f.budget, "budget", 0, "chunked: per-step token budget (counts decodes, default 2048); prefill-first: max prefill tokens per step (default 32768)")
	fs.BoolVar(&f.excludeDecodes, "budget-excludes-decodes", false, "chunked: the budget limits only prefill tokens (the lecture's reading)")
	fs.BoolVar(&f.ideal, "ideal", false, "no memory or sequence limits (the lecture's idealised engine)")
	fs.IntVar(&f.maxSeqs, "max-seqs", 256, "most sequences holding KV at once (vLLM max_num_seqs)")
	fs.IntVar(&f.blockSize, "block-size", 16, "tokens per KV-cache block")
	fs.Float64Var(&f.utilization, "gpu-memory-utilization", sim.DefaultUtilization, "fraction of GPU memory for weights + KV cache")
	fs.StringVar(&f.onFull, "on-full", "preempt", "when the KV cache is full: preempt (recompute the newest sequence) or wait (reserve whole requests up front)")
	return f
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// clusterFlags describe a disaggregated deployment (--policy disaggregated).
type clusterFlags struct {
	prefillGPUs, decodeGPUs int
	linkGBs                 float64
	router                  string
}

func addClusterFlags(fs *flag.FlagSet) *clusterFlags {
	f := &clusterFlags{}
	fs.IntVar(&f.prefillGPUs, "prefill-gpus", 2, "disaggregated: prefill instances")
	fs.IntVar(&f.decodeGPUs, "decode-gpus", 1, "disaggregated: decode instances")
	fs.Float64Var(&f.linkGBs, "link-gbs", 0, "disaggregated: KV transfer bandwidth in GB/s (default: the GPU's scale-up link)")
	fs.StringVar(&f.router, "router", "least-loaded", "disaggregated: least-loaded or round-robin")
	return f
}

// cluster builds the disaggregated deployment; each instance gets ef's limits.
func (f *clusterFlags) cluster(ef *engineFlags, step sim.StepModel) (sim.Cluster, error) {
	one := *ef
	one.policy = "prefill-only" // the limits are per instance; each instance's policy follows its role
	cfg, err := one.config(step)
	if err != nil {
		return sim.Cluster{}, err
	}
	router, err := sim.ParseRouter(f.router)
	if err != nil {
		return sim.Cluster{}, err
	}
	// Below 10 MB/s a KV transfer takes longer than any serving question cares about (1e-300 gave 1e298 s).
	if !(f.linkGBs == 0 || f.linkGBs >= 0.01 && f.linkGBs <= 1e6) {
		return sim.Cluster{}, fmt.Errorf("--link-gbs must be 0 (the GPU's link) or in [0.01, 1e6] GB/s, got %g", f.linkGBs)
	}
	return sim.Cluster{Step: step, Prefill: f.prefillGPUs, Decode: f.decodeGPUs, LinkBW: f.linkGBs * 1e9,
		Router: router, Limits: cfg.Limits, PrefillMaxTokens: ef.budget}, nil
}

// config builds the engine configuration for the step model.
func (f *engineFlags) config(step sim.StepModel) (sim.Config, error) {
	// sim reads 0 as "the default"; typed on the command line it is out of range.
	if f.budget == 0 && f.fs != nil && isSet(f.fs, "budget") {
		return sim.Config{}, fmt.Errorf("--budget must be in 1..%d tokens, got 0 (leave it out for the policy's default)", sim.MaxTokens)
	}
	if !(f.utilization > 0 && f.utilization <= 1) {
		return sim.Config{}, fmt.Errorf("--gpu-memory-utilization must be in (0, 1], got %g", f.utilization)
	}
	if f.blockSize < 1 || f.blockSize > 1<<16 {
		return sim.Config{}, fmt.Errorf("--block-size must be in 1..65536 tokens, got %d", f.blockSize)
	}
	p, err := sim.NewPolicy(f.policy, f.budget)
	if err != nil {
		return sim.Config{}, err
	}
	if c, ok := p.(sim.Chunked); ok {
		c.ExcludeDecodes = f.excludeDecodes
		p = c
	}
	cfg := sim.Config{Step: step, Policy: p}
	// The weights must fit even in the idealised engine: a 70B model never runs silently on one GPU.
	blocks, err := sim.MemorySplit{Utilization: f.utilization, BlockSize: f.blockSize}.KVBlocks(step)
	if err != nil {
		return cfg, err
	}
	if f.ideal {
		return cfg, nil
	}
	if f.onFull != "preempt" && f.onFull != "wait" {
		return cfg, fmt.Errorf("--on-full must be preempt or wait, got %q", f.onFull)
	}
	if f.maxSeqs < 1 || f.maxSeqs > sim.MaxRequests {
		return cfg, fmt.Errorf("--max-seqs must be in 1..%d, got %d", sim.MaxRequests, f.maxSeqs)
	}
	cfg.Limits = sim.Limits{MaxSeqs: f.maxSeqs, KVBlocks: blocks, BlockSize: f.blockSize, Preempt: f.onFull == "preempt"}
	return cfg, nil
}
