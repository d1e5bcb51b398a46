// Package sim is servelab's simulator: a roofline step model, scheduler
// policies, workloads, a steppable engine, metrics and goodput search.
//
// It is pure and deterministic: no clock, no I/O, no goroutines, no globals.
// The same code runs natively, under wasm in the browser, and behind the lab
// server, which drives the engine in real time.
package sim

import (
	"fmt"
	"math"

	"servelab/hwspecs"
	"servelab/modelspecs"
)

// StepModel prices one iteration with a roofline:
//
//	flops = n*F + A*pairs
//	bytes = W + K*kvTokens
//	t     = max(flops/(peak*EffCompute), bytes/(bw*EffMem)) + Overhead
//
// where n is the tokens processed, pairs the (query, key) pairs attended and
// kvTokens the KV-cache tokens read or written. Every constant is a field the
// user can see and change.
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

	// Derived once by NewStepModel so the hot loop multiplies only.
	f, a, w, k float64
}

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
	for _, c := range []struct {
		name      string
		v, lo, hi float64
	}{
		{"compute efficiency", s.EffCompute, 0.01, 1},
		{"memory efficiency", s.EffMem, 0.01, 1},
		{"all-reduce efficiency", s.AllReduceEff, 0.01, 1},
		{"overhead (s)", s.Overhead, 0, 1},
		{"dtype bytes", s.DtypeBytes, 0.25, 8},
	} {
		if !(c.v >= c.lo && c.v <= c.hi) {
			return s, fmt.Errorf("%s must be in [%g, %g], got %g", c.name, c.lo, c.hi, c.v)
		}
	}
	if s.TP < 1 || s.TP > 64 {
		return s, fmt.Errorf("tensor-parallel degree must be in 1..64, got %d", s.TP)
	}
	s.f = s.Model.LinearFLOPsPerToken()
	s.a = s.Model.AttnFLOPsPerPair()
	s.w = s.Model.WeightBytes(s.DtypeBytes)
	s.k = s.Model.KVBytesPerToken(s.DtypeBytes)
	return s, nil
}

// Work is what one iteration computes, summed over the requests in it.
type Work struct {
	Tokens   float64 // new tokens processed (decode tokens + prefill chunk tokens)
	Pairs    float64 // (query, key) pairs attended
	KVTokens float64 // KV-cache tokens read or written
}

// AddDecode adds one decode token whose query attends context keys.
func (w *Work) AddDecode(context int) {
	w.Tokens++
	w.Pairs += float64(context)
	w.KVTokens += float64(context) + 1
}

// AddPrefill adds a prefill chunk of c tokens after done already-prefilled tokens:
// it attends c*done + c*(c+1)/2 pairs, reads done KV tokens and writes c.
func (w *Work) AddPrefill(done, c int) {
	cf, df := float64(c), float64(done)
	w.Tokens += cf
	w.Pairs += cf*df + cf*(cf+1)/2
	w.KVTokens += df + cf
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
}

// Price returns the cost of one iteration doing w.
func (s *StepModel) Price(w Work) Cost {
	flops := w.Tokens*s.f + s.a*w.Pairs
	bytes := s.w + s.k*w.KVTokens
	tp := float64(s.TP)
	c := Cost{FLOPs: flops, Bytes: bytes, Overhead: s.Overhead,
		ComputeTime: flops / (tp * s.GPU.FLOPS * s.EffCompute),
		MemoryTime:  bytes / (tp * s.GPU.MemBW * s.EffMem)}
	if s.TP > 1 {
		// Two ring all-reduces of the activations per layer, each moving
		// 2(TP-1)/TP of the hidden state per token over the link.
		msg := w.Tokens * float64(s.Model.Hidden) * s.DtypeBytes
		c.CommTime = 2 * float64(s.Model.Layers) * 2 * (tp - 1) / tp * msg / (s.GPU.LinkBW * s.AllReduceEff)
	}
	c.Bound = Compute
	t := c.ComputeTime
	if c.MemoryTime > t {
		t, c.Bound = c.MemoryTime, Memory
	}
	c.Seconds = t + c.CommTime + s.Overhead
	return c
}

// Decode prices a decode-only step of batch sequences with the given total context.
func (s *StepModel) Decode(batch, totalContext int) Cost {
	return s.Price(Work{Tokens: float64(batch), Pairs: float64(totalContext), KVTokens: float64(totalContext + batch)})
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
	w := Work{Tokens: float64(batch), Pairs: float64(totalContext), KVTokens: float64(totalContext + batch)}
	w.AddPrefill(0, prefill)
	return s.Price(w)
}

// KVBytesPerToken is the KV-cache bytes of one token (whole model, all ranks).
func (s *StepModel) KVBytesPerToken() float64 { return s.k }

// WeightBytes is the weights' bytes (whole model, all ranks).
func (s *StepModel) WeightBytes() float64 { return s.w }

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
