package sim

import (
	"fmt"
	"math"
	"slices"
)

// Speculative decoding (Leviathan et al. 2023; Chen et al. 2023): at each
// decode step a cheap drafter proposes K tokens for every running sequence
// and the target model verifies them in one pass over K+1 positions per
// sequence. Draft i is accepted with probability Accept[i] once every
// draft before it was; the verify pass also gives one token of its own
// (the correction after the first rejection, or a bonus after K
// acceptances), so a step emits accepted+1 tokens. With a constant rate α
// that is (1 - α^(K+1)) / (1 - α) tokens per step on average
// (ExpectedTokens).
//
// The verify pass is priced as K+1 tokens per sequence (their FLOPs,
// their attention over the context and each other, the KV they write):
// nearly free while a step is memory-bound (one sequence, small batches),
// paid in full once the batch makes it compute-bound — speculation is a
// bet on idle compute. The drafter costs K decode steps of a small model
// (Draft) on the same GPU, or, for MTP heads, DraftCost of a plain decode
// step per draft token.
//
// The draws are deterministic: draft i of a sequence's step is accepted
// when a hash of (Seed, the request's ID, its tokens so far, i) falls
// below its rate, so a run is the same however its batches form.

// MaxSpecTokens bounds the draft tokens per step.
const MaxSpecTokens = 16

// Speculation configures speculative decoding; the zero value is off.
type Speculation struct {
	K int // draft tokens per sequence per step (0: off)
	// Accept is the acceptance rate of each draft position given the ones
	// before were accepted: one value for all K, or K values.
	Accept []float64
	// Draft is the draft model's step model, on the target's GPU (nil:
	// MTP heads, costing DraftCost of the step per draft token).
	Draft *StepModel
	// DraftCost is an MTP head's time per draft token, as a fraction of a
	// plain decode step of the same batch (Draft nil).
	DraftCost float64
	Seed      uint64
}

// On reports whether speculation is configured.
func (p *Speculation) On() bool { return p.K > 0 }

// rate is the acceptance rate of draft position i.
func (p *Speculation) rate(i int) float64 {
	if len(p.Accept) == 1 {
		return p.Accept[0]
	}
	return p.Accept[i]
}

// ExpectedTokens is the mean tokens a step emits per sequence: the sum
// over j = 0..K of the chance that the first j drafts are all accepted
// ((1 - α^(K+1)) / (1 - α) for a constant α), 1 when off.
func (p *Speculation) ExpectedTokens() float64 {
	e, all := 1.0, 1.0
	for i := range p.K {
		all *= p.rate(i)
		e += all
	}
	return e
}

// Validate reports what in p is out of range (nil: an engine accepts it).
func (p Speculation) Validate() error { return p.check() }

// check validates p, preparing its draft model.
func (p *Speculation) check() error {
	if !p.On() {
		if p.K < 0 {
			return fmt.Errorf("draft tokens must be in 0..%d, got %d", MaxSpecTokens, p.K)
		}
		return nil
	}
	if p.K > MaxSpecTokens {
		return fmt.Errorf("draft tokens must be in 0..%d, got %d", MaxSpecTokens, p.K)
	}
	if len(p.Accept) != 1 && len(p.Accept) != p.K {
		return fmt.Errorf("acceptance: want one rate or one per draft position (%d), got %d", p.K, len(p.Accept))
	}
	for i, a := range p.Accept {
		if !(a >= 0 && a <= 1) {
			return fmt.Errorf("acceptance rate of position %d must be in [0, 1], got %g", i+1, a)
		}
	}
	if p.Draft != nil {
		d, err := p.Draft.Prepare()
		if err != nil {
			return fmt.Errorf("draft model: %w", err)
		}
		p.Draft = &d
	} else if !(p.DraftCost >= 0 && p.DraftCost <= 1) {
		return fmt.Errorf("an MTP head's cost must be in [0, 1] of a decode step, got %g", p.DraftCost)
	}
	return nil
}

// SpecStats are a run's speculative-decoding figures, in tokens.
type SpecStats struct {
	Steps    int `json:"seq_steps"` // sequence-steps that speculated
	Drafted  int `json:"drafted"`
	Accepted int `json:"accepted"`
	Emitted  int `json:"emitted"` // tokens those steps gave (accepted + one each, capped at the output)
}

// AcceptRate is Accepted/Drafted (0 when nothing was drafted).
func (s SpecStats) AcceptRate() float64 {
	if s.Drafted == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.Drafted)
}

// TokensPerStep is Emitted/Steps, the measured tokens per sequence-step.
func (s SpecStats) TokensPerStep() float64 {
	if s.Steps == 0 {
		return 0
	}
	return float64(s.Emitted) / float64(s.Steps)
}

// AddVerify adds one sequence's verify pass: n tokens (its last token and
// n-1 drafts) after context cached tokens, each attending the context and
// the tokens before it, each sampled; the context's KV is read once and n
// tokens' written. With n = 1 it is AddDecode.
func (w *Work) AddVerify(context, n int) {
	for j := range n {
		c := context + j
		if w.Window > 0 {
			c = min(c, w.Window)
		}
		w.Pairs += float64(c)
	}
	if w.Window > 0 {
		context = min(context, w.Window)
	}
	nf := float64(n)
	w.KVTokens += float64(context) + nf
	w.Tokens += nf
	w.Seqs++
	w.Sampled += nf
}

// accepted is how many of s's drafts this step are accepted.
func (e *Engine) accepted(s *Seq) int {
	p := &e.cfg.Spec
	base := mix(p.Seed, uint64(s.Req.ID))
	for i := range p.K {
		u := float64(mix(base, uint64(s.generated)<<5|uint64(i))>>11) / (1 << 53)
		if u >= p.rate(i) {
			return i
		}
	}
	return p.K
}

// draftSeconds is the drafter's time for a step whose decodes are w (a
// decode of n sequences over kv cached tokens).
func (e *Engine) draftSeconds(n int, kv float64, plain *Work) float64 {
	p := &e.cfg.Spec
	if p.Draft == nil {
		return float64(p.K) * p.DraftCost * e.cfg.Step.Seconds(plain)
	}
	t, nf := 0.0, float64(n)
	for j := range p.K {
		c := kv + float64(j)*nf
		t += p.Draft.Seconds(&Work{Tokens: nf, Pairs: c, KVTokens: c + nf, Seqs: nf, Sampled: nf})
	}
	return t
}

// specDecodeAll is decodeAll for a speculating step: each of decodes gets
// its accepted drafts and one more token at end (capped at its output).
func (e *Engine) specDecodeAll(decodes []*Seq, end float64, it *Iteration) {
	keepItems := !e.noItems
	items := it.Items
	n := len(items)
	if keepItems {
		items = slices.Grow(items, len(decodes)+len(e.plan.Chunks))[:n+len(decodes)]
	}
	st := &e.specStats
	top, done := 0.0, 0
	for k, s := range decodes {
		a := e.accepted(s)
		emit := min(a+1, s.Req.Output-s.generated)
		if s.generated > 0 && (s.generated > 1 || e.role != DecodeOnly) {
			top = math.Max(top, end-s.last)
		}
		st.Steps++
		st.Drafted += e.cfg.Spec.K
		st.Accepted += a
		st.Emitted += emit
		fin := false
		for range emit {
			s.kv++
			fin = e.emit(s, end)
		}
		e.runKV += emit - 1 // (execute counted one token each)
		if fin {
			done++
		}
		if keepItems {
			items[n+k] = Item{ID: s.Req.ID, Tokens: e.cfg.Spec.K + 1, Emit: true, Done: fin, Accepted: uint8(a)}
		}
	}
	e.done += done
	it.Items, it.MaxGap = items, top
}

// SpecStats returns the run's speculation figures so far (nil when off).
func (e *Engine) SpecStats() *SpecStats {
	if !e.cfg.Spec.On() {
		return nil
	}
	s := e.specStats
	return &s
}
