package sim

import (
	"fmt"
	"math"

	"servelab/hwspecs"
	"servelab/modelspecs"
)

// StepModel prices one iteration with a roofline. The lecture's model (every
// refinement off, the zero value of Physics) is
//
//	flops = n*F + A*pairs
//	bytes = W + K*kvTokens
//	t     = max(flops/(peak*EffCompute), bytes/(bw*EffMem)) + Overhead
//
// where n is the tokens processed, pairs the (query, key) pairs attended and
// kvTokens the KV-cache tokens read or written. The refinements a profile can
// switch on (Physics) and their constants are described on Physics. Every
// constant is a field the user can see and change.
type StepModel struct {
	Model      modelspecs.Model
	GPU        hwspecs.GPU
	EffCompute float64 // fraction of peak FLOP/s reached (default 0.60)
	EffMem     float64 // fraction of peak bandwidth reached (default 0.85)
	Overhead   float64 // fixed seconds per iteration: scheduling, launches (default 1 ms)
	DtypeBytes float64 // bytes per weight and KV element (default 2, bf16)
	TP         int     // tensor-parallel degree (default 1): FLOPs and bytes split across TP GPUs
	// AllReduceEff is the fraction of the link bandwidth an all-reduce reaches (default 0.7).
	AllReduceEff float64

	// Physics holds the refinements over the lecture's model; zero is the lecture's.
	Physics Physics
	// Profile names the profile whose constants these are ("" when set by hand).
	Profile string

	// Derived once by Prepare so the hot loop multiplies only.
	f, a, w, k float64
	// The refined model's pieces (Physics): per-token FLOPs of the layers and
	// of lm_head, bytes of the dense layer weights, of one expert in every
	// layer, of the embedding table and of lm_head.
	fLayers, fHead, wDense, wExpert, wEmbed, wHead float64
	experts, active                                float64
}

// Physics are the step model's refinements over the lecture's (all off in
// the zero value). With them on, one iteration costs
//
//	linear  = roof(n*F_layers + s*F_head, W_read(n, s)/(bw*EffMem))
//	attn    = roof(A*pairs, K*kvTokens/(bw*EffKV))          (SplitAttention; else one roofline over both)
//	t       = (linear + attn)/TP + comm + Overhead + SeqCost*seqs + ReqCost*newPrompts
//
// with roof(c, m) = (c^p + m^p)^(1/p) for p = RooflineP (a hard max for 0),
// s the positions whose logits are sampled and W_read the weights actually
// read. ReqLatency is outside the iterations: it adds to each request's TTFT
// and E2E (Engine.Results).
type Physics struct {
	// MoEUnion reads only the experts the step's n tokens select: per layer
	// the expected union E*(1-(1-k/E)^n) of k-of-E routing, not all E.
	MoEUnion bool `json:"moe_expert_union"`
	// EmbedGather reads the embedding rows of the step's tokens, not the table.
	EmbedGather bool `json:"embedding_gather"`
	// SampledLogits computes lm_head only where a token is sampled (a decode,
	// the last chunk of a prompt), not for every prompt token.
	SampledLogits bool `json:"logits_sampled_only"`
	// SplitAttention prices attention (KV reads, its FLOPs) as its own
	// kernels beside the linear layers, each on its own roofline.
	SplitAttention bool `json:"split_attention"`
	// FP8Compute uses the GPU's FP8 tensor peak when weights are 1 byte (W8A8).
	FP8Compute bool `json:"fp8_compute"`

	RooflineP         float64 `json:"-"` // p of the smooth roofline; 0: hard max
	EffKV             float64 `json:"-"` // fraction of bandwidth attention's KV reads reach; 0: EffMem
	CollectiveLatency float64 `json:"-"` // fixed seconds per all-reduce (TP > 1), two per layer
	SeqCost           float64 `json:"-"` // CPU seconds per sequence in the step (scheduling, sampling, detokenising)
	ReqCost           float64 `json:"-"` // engine CPU seconds per prompt starting its prefill (admission, input preparation)
	// ReqLatency is the seconds a request spends outside the engine (HTTP,
	// tokenising, detokenising, process hops): it adds to TTFT and E2E
	// but occupies no iteration. Engine.Results reports each arrival this
	// much earlier (the client's send time); with open-loop arrivals a
	// constant delay before the engine is exactly that shift.
	ReqLatency float64 `json:"-"`
}

// refined reports whether any refinement is on (else the lecture's formula runs, bit for bit).
func (p Physics) refined() bool { return p != Physics{} }

// Defaults used by NewStepModel for zero fields.
const (
	DefaultEffCompute   = 0.60
	DefaultEffMem       = 0.85
	DefaultOverhead     = 1e-3
	DefaultDtypeBytes   = 2.0
	DefaultAllReduceEff = 0.7
)

// DefaultStepModel is the lecture's step model: the default model
// (modelspecs.Default) on the default GPU (hwspecs.Default) with the
// default efficiencies.
func DefaultStepModel() (StepModel, error) {
	m, err := modelspecs.Get(modelspecs.Default)
	if err != nil {
		return StepModel{}, err
	}
	g, err := hwspecs.Get(hwspecs.Default)
	if err != nil {
		return StepModel{}, err
	}
	return NewStepModel(m, g)
}

// NewStepModel fills zero fields with the defaults, validates and derives F, A, W, K.
func NewStepModel(m modelspecs.Model, g hwspecs.GPU) (StepModel, error) {
	s := StepModel{Model: m, GPU: g, Overhead: DefaultOverhead}
	return s.Prepare()
}

// Prepare fills zero fields (but Overhead, where zero is meaningful) with defaults, checks every value and derives the
// per-token constants. Call it after editing a field.
func (s StepModel) Prepare() (StepModel, error) {
	if s.EffCompute == 0 {
		s.EffCompute = DefaultEffCompute
	}
	if s.EffMem == 0 {
		s.EffMem = DefaultEffMem
	}
	if s.DtypeBytes == 0 {
		s.DtypeBytes = DefaultDtypeBytes
	}
	if s.TP == 0 {
		s.TP = 1
	}
	if s.AllReduceEff == 0 {
		s.AllReduceEff = DefaultAllReduceEff
	}
	if err := s.Model.Validate(); err != nil {
		return s, err
	}
	if err := s.GPU.Validate(); err != nil {
		return s, err
	}
	ph := s.Physics
	for _, c := range []struct {
		name      string
		v, lo, hi float64
	}{
		{"compute efficiency", s.EffCompute, 0.01, 1},
		{"memory efficiency", s.EffMem, 0.01, 1},
		{"all-reduce efficiency", s.AllReduceEff, 0.01, 1},
		{"overhead (s)", s.Overhead, 0, 1},
		{"dtype bytes", s.DtypeBytes, 0.25, 8},
		{"KV-read efficiency", ph.EffKV, 0, 1},
		{"roofline p", ph.RooflineP, 0, 64},
		{"collective latency (s)", ph.CollectiveLatency, 0, 0.1},
		{"per-sequence cost (s)", ph.SeqCost, 0, 0.1},
		{"per-request cost (s)", ph.ReqCost, 0, 1},
		{"per-request latency (s)", ph.ReqLatency, 0, 10},
	} {
		if !(c.v >= c.lo && c.v <= c.hi) {
			return s, fmt.Errorf("%s must be in [%g, %g], got %g", c.name, c.lo, c.hi, c.v)
		}
	}
	if ph.EffKV != 0 && ph.EffKV < 0.01 {
		return s, fmt.Errorf("KV-read efficiency must be 0 (same as memory efficiency) or in [0.01, 1], got %g", ph.EffKV)
	}
	if ph.RooflineP != 0 && ph.RooflineP < 1 {
		return s, fmt.Errorf("roofline p must be 0 (hard max) or in [1, 64], got %g", ph.RooflineP)
	}
	if s.TP < 1 || s.TP > 64 {
		return s, fmt.Errorf("tensor-parallel degree must be in 1..64, got %d", s.TP)
	}
	m := s.Model
	s.f = m.LinearFLOPsPerToken()
	s.a = m.AttnFLOPsPerPair()
	s.w = m.WeightBytes(s.DtypeBytes)
	s.k = m.KVBytesPerToken(s.DtypeBytes)
	s.fHead = 2 * m.EmbedParams()
	s.fLayers = s.f - s.fHead
	s.experts, s.active = m.ExpertCounts()
	s.wExpert = m.ExpertParamsAllLayers() * s.DtypeBytes
	s.wEmbed = m.EmbedParams() * s.DtypeBytes
	s.wHead = s.wEmbed // lm_head is vocab x hidden, tied or not
	s.wDense = s.w - s.wEmbed - s.experts*s.wExpert
	if !m.Tied {
		s.wDense -= s.wHead
	}
	return s, nil
}

// Work is what one iteration computes, summed over the requests in it.
type Work struct {
	Tokens   float64 // new tokens processed (decode tokens + prefill chunk tokens)
	Pairs    float64 // (query, key) pairs attended
	KVTokens float64 // KV-cache tokens read or written
	// Seqs is the sequences in the step, Sampled the positions whose logits
	// are computed (decodes and last prefill chunks) and NewPrompts the
	// prompts whose prefill starts. Only the refined physics reads them.
	Seqs, Sampled, NewPrompts float64
	// Window is the model's sliding attention window (0: full attention):
	// the Add methods clip what a query attends and reads to it.
	Window int
}

// AddDecode adds one decode token whose query attends context keys.
func (w *Work) AddDecode(context int) {
	if w.Window > 0 {
		context = min(context, w.Window)
	}
	w.Tokens++
	w.Pairs += float64(context)
	w.KVTokens += float64(context) + 1
	w.Seqs++
	w.Sampled++
}

// AddPrefill adds a prompt's last (or only) prefill chunk of c tokens after
// done already-prefilled tokens: it attends c*done + c*(c+1)/2 pairs, reads
// done KV tokens and writes c, and samples the prompt's first token.
func (w *Work) AddPrefill(done, c int) { w.AddChunk(done, c, true) }

// AddChunk adds a prefill chunk of c tokens after done; last says whether it
// completes the prompt (so a token is sampled).
func (w *Work) AddChunk(done, c int, last bool) {
	cf, df := float64(c), float64(done)
	w.Tokens += cf
	if win := w.Window; win > 0 && done+c > win {
		// Queries done+1 .. win attend all before them, the rest win keys each.
		a := float64(max(0, win-done))
		w.Pairs += a*df + a*(a+1)/2 + (cf-a)*float64(win)
		w.KVTokens += float64(min(done, win)) + cf
	} else {
		w.Pairs += cf*df + cf*(cf+1)/2
		w.KVTokens += df + cf
	}
	w.Seqs++
	if last {
		w.Sampled++
	}
	if done == 0 {
		w.NewPrompts++
	}
}

// Bound names the roofline side that set an iteration's time.
type Bound string

// The two sides of the roofline.
const (
	Compute Bound = "compute"
	Memory  Bound = "memory"
)

// Cost is the priced iteration: the time and why.
type Cost struct {
	Seconds     float64 `json:"seconds"`
	Bound       Bound   `json:"bound"`
	FLOPs       float64 `json:"flops"`        // whole model, all TP ranks
	Bytes       float64 `json:"bytes"`        // whole model, all TP ranks
	ComputeTime float64 `json:"compute_time"` // flops / (TP * peak * eff)
	MemoryTime  float64 `json:"memory_time"`  // bytes / (TP * bw * eff)
	CommTime    float64 `json:"comm_time"`    // all-reduce time (TP > 1)
	Overhead    float64 `json:"overhead"`
	// GPUTime is the kernels' time: the roofline's combination of
	// ComputeTime and MemoryTime (their max for the lecture's model).
	GPUTime float64 `json:"gpu_time"`
	// CPUTime is the per-sequence and per-request costs (refined physics only).
	CPUTime float64 `json:"cpu_time,omitempty"`
	// Draft is the speculative drafter's time, included in Seconds.
	Draft float64 `json:"draft,omitempty"`
}

// Price returns the cost of one iteration doing w.
func (s *StepModel) Price(w Work) Cost {
	if s.Physics.refined() {
		return s.priceRefined(w)
	}
	return s.priceLecture(w)
}

// priceLecture is Price for the lecture's physics (no refinement).
func (s *StepModel) priceLecture(w Work) Cost {
	// (The conversions round each product: no fused multiply-add, so every
	// platform prices alike and Seconds and decodePricer match bit for bit.)
	flops := float64(w.Tokens*s.f) + float64(s.a*w.Pairs)
	bytes := s.w + float64(s.k*w.KVTokens)
	tp := float64(s.TP)
	c := Cost{FLOPs: flops, Bytes: bytes, Overhead: s.Overhead,
		ComputeTime: flops / (tp * s.GPU.FLOPS * s.EffCompute),
		MemoryTime:  bytes / (tp * s.GPU.MemBW * s.EffMem)}
	if s.TP > 1 {
		c.CommTime = s.allReduceBW(w.Tokens)
	}
	c.Bound = Compute
	t := c.ComputeTime
	if c.MemoryTime > t {
		t, c.Bound = c.MemoryTime, Memory
	}
	c.GPUTime = t
	c.Seconds = t + c.CommTime + s.Overhead
	return c
}

// Seconds is Price(w).Seconds alone, for loops that read only the time
// (the rest of a Cost is most of a lecture step's price).
func (s *StepModel) Seconds(w *Work) float64 {
	if s.Physics.refined() {
		return s.priceRefined(*w).Seconds
	}
	return s.lectureSeconds(w.Tokens, w.Pairs, w.KVTokens)
}

// lectureSeconds is the lecture model's Price(w).Seconds: the same
// operations in the same order.
func (s *StepModel) lectureSeconds(tokens, pairs, kvTokens float64) float64 {
	tp := float64(s.TP)
	t := (float64(tokens*s.f) + float64(s.a*pairs)) / (tp * s.GPU.FLOPS * s.EffCompute)
	if m := (s.w + float64(s.k*kvTokens)) / (tp * s.GPU.MemBW * s.EffMem); m > t {
		t = m
	}
	comm := 0.0
	if s.TP > 1 {
		comm = s.allReduceBW(tokens)
	}
	return t + comm + s.Overhead
}

// decodePricer prices the decode steps of one batch as its context grows:
// Seconds of a step decoding all n running sequences over kv cached tokens
// (the Work execute sums for it), with what is the same at every step
// computed once.
type decodePricer struct {
	s          *StepModel
	lecture    bool    // the lecture's formula (else Seconds prices each step)
	n          float64 // the batch
	flopsN     float64 // n*F
	cDen, mDen float64 // the roofline's divisors
	comm       float64 // the all-reduces' time (TP > 1)
}

func (s *StepModel) decodePricer(n int) decodePricer {
	return s.decodePricerOf(n, !s.Physics.refined())
}

// decodePricerOf is decodePricer for a caller that knows whether the model is the lecture's.
func (s *StepModel) decodePricerOf(n int, lecture bool) decodePricer {
	nf, tp := float64(n), float64(s.TP)
	p := decodePricer{s: s, lecture: lecture, n: nf, flopsN: float64(nf * s.f),
		cDen: tp * s.GPU.FLOPS * s.EffCompute, mDen: tp * s.GPU.MemBW * s.EffMem}
	if s.TP > 1 {
		p.comm = s.allReduceBW(nf)
	}
	return p
}

// at is the step's seconds with kv tokens cached before it.
func (p *decodePricer) at(kv float64) float64 {
	if !p.lecture {
		return p.s.Seconds(&Work{Tokens: p.n, Pairs: kv, KVTokens: kv + p.n, Seqs: p.n, Sampled: p.n})
	}
	t := (p.flopsN + float64(p.s.a*kv)) / p.cDen
	if m := (p.s.w + float64(p.s.k*(kv+p.n))) / p.mDen; m > t {
		t = m
	}
	return t + p.comm + p.s.Overhead
}

// allReduceBW is the bandwidth part of the all-reduces: two ring
// all-reduces of the activations per layer, each moving 2(TP-1)/TP of the
// hidden state per token over the link.
func (s *StepModel) allReduceBW(tokens float64) float64 {
	tp := float64(s.TP)
	msg := tokens * float64(s.Model.Hidden) * s.DtypeBytes
	return 2 * float64(s.Model.Layers) * 2 * (tp - 1) / tp * msg / (s.GPU.LinkBW * s.AllReduceEff)
}

// Collectives is the all-reduces one iteration does: two per layer under TP.
func (s *StepModel) Collectives() float64 {
	if s.TP <= 1 {
		return 0
	}
	return 2 * float64(s.Model.Layers)
}

// ExpectedExperts is the experts per layer a step of n tokens reads: the
// expected union of k-of-E routing, E*(1-(1-k/E)^n), assuming uniform,
// independent routing (all E with MoEUnion off).
func (s *StepModel) ExpectedExperts(n float64) float64 {
	if s.experts <= 1 || !s.Physics.MoEUnion {
		return s.experts
	}
	return s.experts * (1 - math.Pow(1-s.active/s.experts, n))
}

// WeightBytesRead is the weight bytes one step reads (whole model, all ranks).
func (s *StepModel) WeightBytesRead(w Work) float64 {
	if !s.Physics.refined() {
		return s.w
	}
	b := s.wDense + s.ExpectedExperts(w.Tokens)*s.wExpert
	if s.Physics.EmbedGather {
		b += math.Min(w.Tokens, float64(s.Model.Vocab)) * float64(s.Model.Hidden) * s.DtypeBytes
	} else {
		b += s.wEmbed
	}
	sampled := w.Tokens
	if s.Physics.SampledLogits {
		sampled = w.Sampled
	}
	// lm_head is read when any logits are computed; a tied head is the
	// embedding table, counted above only when the whole table is read.
	if sampled > 0 && (!s.Model.Tied || s.Physics.EmbedGather) {
		b += s.wHead
	}
	return b
}

func (s *StepModel) priceRefined(w Work) Cost {
	ph := &s.Physics
	sampled := w.Tokens
	if ph.SampledLogits {
		sampled = w.Sampled
	}
	peak := s.GPU.FLOPS
	if ph.FP8Compute && s.DtypeBytes <= 1 && s.GPU.FP8FLOPS > 0 {
		peak = s.GPU.FP8FLOPS
	}
	tp := float64(s.TP)
	effKV := ph.EffKV
	if effKV == 0 {
		effKV = s.EffMem
	}
	linF := w.Tokens*s.fLayers + sampled*s.fHead
	attF := s.a * w.Pairs
	linB := s.WeightBytesRead(w)
	kvB := s.k * w.KVTokens
	cl := linF / (tp * peak * s.EffCompute)
	ca := attF / (tp * peak * s.EffCompute)
	ml := linB / (tp * s.GPU.MemBW * s.EffMem)
	ma := kvB / (tp * s.GPU.MemBW * effKV)
	c := Cost{FLOPs: linF + attF, Bytes: linB + kvB, Overhead: s.Overhead,
		ComputeTime: cl + ca, MemoryTime: ml + ma}
	if ph.SplitAttention {
		c.GPUTime = roof(cl, ml, ph.RooflineP) + roof(ca, ma, ph.RooflineP)
	} else {
		c.GPUTime = roof(c.ComputeTime, c.MemoryTime, ph.RooflineP)
	}
	c.Bound = Compute
	if c.MemoryTime > c.ComputeTime {
		c.Bound = Memory
	}
	if s.TP > 1 {
		c.CommTime = s.allReduceBW(w.Tokens) + s.Collectives()*ph.CollectiveLatency
	}
	c.CPUTime = ph.SeqCost*w.Seqs + ph.ReqCost*w.NewPrompts
	c.Seconds = c.GPUTime + c.CommTime + s.Overhead + c.CPUTime
	return c
}

// roof combines a kernel's compute and memory times: the p-norm
// (c^p + m^p)^(1/p), which approaches max(c, m) far from the ridge and
// exceeds it near it, as real kernels do; p = 0 is the hard max.
func roof(c, m, p float64) float64 {
	if p == 0 {
		return math.Max(c, m)
	}
	hi := math.Max(c, m)
	if hi == 0 {
		return 0
	}
	// Scaled by the larger term so large p cannot overflow.
	return hi * math.Pow(math.Pow(c/hi, p)+math.Pow(m/hi, p), 1/p)
}

// Decode prices a decode-only step of batch sequences with the given total context.
func (s *StepModel) Decode(batch, totalContext int) Cost {
	b := float64(batch)
	return s.Price(Work{Tokens: b, Pairs: float64(totalContext), KVTokens: float64(totalContext + batch), Seqs: b, Sampled: b})
}

// Prefill prices a prefill-only step of whole prompts of the given lengths.
func (s *StepModel) Prefill(lengths ...int) Cost {
	var w Work
	for _, l := range lengths {
		w.AddPrefill(0, l)
	}
	return s.Price(w)
}

// Mixed prices a decode batch plus one whole prompt of length prefill in the same step.
func (s *StepModel) Mixed(batch, totalContext, prefill int) Cost {
	b := float64(batch)
	w := Work{Tokens: b, Pairs: float64(totalContext), KVTokens: float64(totalContext + batch), Seqs: b, Sampled: b}
	w.AddPrefill(0, prefill)
	return s.Price(w)
}

// KVBytesPerToken is the KV-cache bytes of one token (whole model, all ranks).
func (s *StepModel) KVBytesPerToken() float64 { return s.k }

// WeightBytes is the weights' bytes (whole model, all ranks).
func (s *StepModel) WeightBytes() float64 { return s.w }

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
