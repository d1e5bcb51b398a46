// Package modelspecs holds transformer shapes and what the step model needs
// from them: parameter counts, weight bytes, linear FLOPs per token,
// attention FLOPs per (query, key) pair and KV-cache bytes per token.
package modelspecs

import (
	"fmt"
	"sort"
	"strings"
)

// Model is a decoder-only transformer's shape.
type Model struct {
	Name         string
	Layers       int
	Hidden       int
	Heads        int // query heads
	KVHeads      int // key/value heads (GQA); equals Heads for MHA
	HeadDim      int
	Intermediate int  // MLP (per expert for MoE) inner size
	Vocab        int  // vocabulary size
	Tied         bool // lm_head shares the embedding matrix
	Gated        bool // SwiGLU-style MLP with three matrices (else two)
	Experts      int  // MoE experts per layer; 0 or 1 for dense
	ActiveExpert int  // experts each token is routed to
	QKVBias      bool // attention projections carry biases (Qwen2)
	MaxContext   int  // max_position_embeddings
	// SlidingWindow is the attention window (Mistral v0.1, Qwen2 when
	// enabled): a query attends at most this many keys; 0: full attention.
	SlidingWindow int
	// DtypeBytes is the checkpoint's bytes per weight when its config says
	// (1 for FP8); 0: not stated (the step model's default applies).
	DtypeBytes float64
}

// Attended is how many of context keys a query attends: all of them, or
// the sliding window's worth.
func (m Model) Attended(context int) int {
	if m.SlidingWindow > 0 && context > m.SlidingWindow {
		return m.SlidingWindow
	}
	return context
}

// Default is the model the lecture uses.
const Default = "Llama-3.1-8B"

var catalogue = []Model{
	{Name: "Llama-3.1-8B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 128256, Gated: true, MaxContext: 131072},
	{Name: "Llama-3.1-70B", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, Gated: true, MaxContext: 131072},
	{Name: "Llama-3.2-1B", Layers: 16, Hidden: 2048, Heads: 32, KVHeads: 8, HeadDim: 64, Intermediate: 8192, Vocab: 128256, Tied: true, Gated: true, MaxContext: 131072},
	{Name: "Llama-3.2-3B", Layers: 28, Hidden: 3072, Heads: 24, KVHeads: 8, HeadDim: 128, Intermediate: 8192, Vocab: 128256, Tied: true, Gated: true, MaxContext: 131072},
	{Name: "Qwen2.5-7B", Layers: 28, Hidden: 3584, Heads: 28, KVHeads: 4, HeadDim: 128, Intermediate: 18944, Vocab: 152064, Gated: true, QKVBias: true, MaxContext: 32768},
	{Name: "Qwen2.5-32B", Layers: 64, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 27648, Vocab: 152064, Gated: true, QKVBias: true, MaxContext: 32768},
	{Name: "Mistral-7B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 32768, Gated: true, MaxContext: 32768},
	{Name: "Mixtral-8x7B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 32000, Gated: true, Experts: 8, ActiveExpert: 2, MaxContext: 32768},
	{Name: "OPT-13B", Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 40, HeadDim: 128, Intermediate: 20480, Vocab: 50272, Tied: true, MaxContext: 2048},
}

// All returns a copy of the catalogue.
func All() []Model { return append([]Model(nil), catalogue...) }

// Names lists the catalogue keys, sorted.
func Names() []string {
	out := make([]string, len(catalogue))
	for i, m := range catalogue {
		out[i] = m.Name
	}
	sort.Strings(out)
	return out
}

// Get looks a model up by name, case-insensitively; the error lists the valid names.
func Get(name string) (Model, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, m := range catalogue {
		if strings.ToLower(m.Name) == key {
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("unknown model %q; valid: %s (or import a Hugging Face config.json)", name, strings.Join(Names(), ", "))
}

func (m Model) experts() (all, active float64) {
	if m.Experts <= 1 {
		return 1, 1
	}
	a := m.ActiveExpert
	if a <= 0 {
		a = 1
	}
	return float64(m.Experts), float64(a)
}

// attnParams is one layer's attention projections (q, k, v, o) with biases.
func (m Model) attnParams() float64 {
	h, q, kv := float64(m.Hidden), float64(m.Heads*m.HeadDim), float64(m.KVHeads*m.HeadDim)
	p := h*q + 2*h*kv + q*h
	if m.QKVBias {
		p += q + 2*kv
	}
	return p
}

// expertParams is one MLP (one expert's) weight count.
func (m Model) expertParams() float64 {
	mats := 2.0
	if m.Gated {
		mats = 3
	}
	return mats * float64(m.Hidden) * float64(m.Intermediate)
}

func (m Model) layerParams(experts float64) float64 {
	p := m.attnParams() + experts*m.expertParams() + 2*float64(m.Hidden) // two norms
	if m.Experts > 1 {
		p += float64(m.Hidden * m.Experts) // router
	}
	return p
}

func (m Model) embedParams() float64 { return float64(m.Vocab) * float64(m.Hidden) }

// EmbedParams is the embedding table's parameters (vocab x hidden); an
// untied lm_head has as many again.
func (m Model) EmbedParams() float64 { return m.embedParams() }

// ExpertCounts is the MLP experts per layer and how many each token is
// routed to: 1 and 1 for a dense model, whose MLP is its one expert.
func (m Model) ExpertCounts() (all, active float64) { return m.experts() }

// ExpertParamsAllLayers is one expert's MLP parameters summed over the
// layers (the dense MLP for a dense model): what a step reads per expert it
// routes to.
func (m Model) ExpertParamsAllLayers() float64 { return float64(m.Layers) * m.expertParams() }

// Params is every stored parameter: embeddings, layers, final norm, and the
// lm_head when it is not tied to the embedding.
func (m Model) Params() float64 {
	all, _ := m.experts()
	p := m.embedParams() + float64(m.Layers)*m.layerParams(all) + float64(m.Hidden)
	if !m.Tied {
		p += m.embedParams()
	}
	return p
}

// ActiveParams is the parameters one token's forward pass multiplies by:
// non-embedding layers with only the routed experts, plus the lm_head
// (which is computed even when it is tied to the embedding).
func (m Model) ActiveParams() float64 {
	_, active := m.experts()
	return float64(m.Layers)*m.layerParams(active) + float64(m.Hidden) + m.embedParams()
}

// LinearFLOPsPerToken is F: 2 FLOPs per active weight per token.
func (m Model) LinearFLOPsPerToken() float64 { return 2 * m.ActiveParams() }

// AttnFLOPsPerPair is A: FLOPs for one (query, key) pair across all layers
// (QK^T and PV, 2 FLOPs per multiply-add each).
func (m Model) AttnFLOPsPerPair() float64 {
	return 4 * float64(m.Layers) * float64(m.Heads) * float64(m.HeadDim)
}

// KVBytesPerToken is K: the K and V vectors of one token in every layer.
func (m Model) KVBytesPerToken(dtypeBytes float64) float64 {
	return 2 * float64(m.Layers) * float64(m.KVHeads) * float64(m.HeadDim) * dtypeBytes
}

// WeightBytes is W: every stored parameter at dtypeBytes each.
func (m Model) WeightBytes(dtypeBytes float64) float64 { return m.Params() * dtypeBytes }

// Validate checks that the shape is usable.
func (m Model) Validate() error {
	checks := []struct {
		name string
		v    int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"kv_heads", m.KVHeads},
		{"head_dim", m.HeadDim}, {"intermediate", m.Intermediate}, {"vocab", m.Vocab}}
	for _, c := range checks {
		if c.v <= 0 || c.v > 1<<24 {
			return fmt.Errorf("model %q: %s must be in 1..%d, got %d", m.Name, c.name, 1<<24, c.v)
		}
	}
	if m.Heads%m.KVHeads != 0 {
		return fmt.Errorf("model %q: heads (%d) must be a multiple of kv_heads (%d)", m.Name, m.Heads, m.KVHeads)
	}
	if m.Experts > 1 && (m.ActiveExpert < 1 || m.ActiveExpert > m.Experts) {
		return fmt.Errorf("model %q: active experts must be in 1..%d, got %d", m.Name, m.Experts, m.ActiveExpert)
	}
	return nil
}

// String summarises the shape and what follows from it.
func (m Model) String() string {
	return fmt.Sprintf("%s: %.2fB params (%.2fB active), %d layers, hidden %d, %d/%d heads x %d, KV %.0f KiB/token (bf16)",
		m.Name, m.Params()/1e9, m.ActiveParams()/1e9, m.Layers, m.Hidden, m.Heads, m.KVHeads, m.HeadDim, m.KVBytesPerToken(2)/1024)
}
