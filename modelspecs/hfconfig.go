package modelspecs

import (
	"encoding/json"
	"fmt"
	"strings"
)

// hfConfig is the subset of a Hugging Face config.json that fixes the shape.
// Field names differ between families (OPT says ffn_dim, Mixtral
// num_local_experts), so each alternative is read.
type hfConfig struct {
	ModelType         string `json:"model_type"`
	NameOrPath        string `json:"_name_or_path"`
	Layers            int    `json:"num_hidden_layers"`
	Hidden            int    `json:"hidden_size"`
	Heads             int    `json:"num_attention_heads"`
	KVHeads           *int   `json:"num_key_value_heads"`
	HeadDim           int    `json:"head_dim"`
	Intermediate      int    `json:"intermediate_size"`
	FFNDim            int    `json:"ffn_dim"`
	Vocab             int    `json:"vocab_size"`
	Tie               *bool  `json:"tie_word_embeddings"`
	LocalExperts      int    `json:"num_local_experts"`
	Experts           int    `json:"num_experts"`
	ExpertsPerTok     int    `json:"num_experts_per_tok"`
	MoEIntermediate   int    `json:"moe_intermediate_size"`
	MaxPos            int    `json:"max_position_embeddings"`
	AttentionBias     bool   `json:"attention_bias"`
	HiddenAct         string `json:"hidden_act"`
	ActivationFunctio string `json:"activation_function"`
}

// FromHFConfig builds a Model from the bytes of a Hugging Face config.json.
// name is used when the file does not carry one.
func FromHFConfig(data []byte, name string) (Model, error) {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return Model{}, fmt.Errorf("config.json: %w", err)
	}
	if c.Layers == 0 || c.Hidden == 0 || c.Heads == 0 {
		return Model{}, fmt.Errorf("config.json: needs num_hidden_layers, hidden_size and num_attention_heads (got %d, %d, %d)", c.Layers, c.Hidden, c.Heads)
	}
	if c.MaxPos < 0 { // absent (0) means unknown; a negative length is no "unlimited"
		return Model{}, fmt.Errorf("config.json: max_position_embeddings must be positive, got %d", c.MaxPos)
	}
	m := Model{Name: name, Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, KVHeads: c.Heads,
		HeadDim: c.HeadDim, Intermediate: c.Intermediate, Vocab: c.Vocab, MaxContext: c.MaxPos}
	if m.Name == "" {
		m.Name = c.NameOrPath
	}
	if m.Name == "" {
		m.Name = "custom-" + c.ModelType
	}
	if c.KVHeads != nil {
		m.KVHeads = *c.KVHeads
	}
	if m.HeadDim == 0 {
		m.HeadDim = c.Hidden / c.Heads
	}
	if m.Intermediate == 0 {
		m.Intermediate = c.FFNDim
	}
	switch mt := strings.ToLower(c.ModelType); mt {
	case "opt", "gpt2", "gpt_neox", "gptj", "bloom", "falcon":
		m.Gated = false
	default:
		m.Gated = true
	}
	m.Tied = c.Tie != nil && *c.Tie
	if c.Tie == nil && strings.EqualFold(c.ModelType, "opt") {
		m.Tied = true // OPT's config omits the key; its head is tied
	}
	m.Experts = c.LocalExperts
	if m.Experts == 0 {
		m.Experts = c.Experts
	}
	if m.Experts > 1 {
		m.ActiveExpert = c.ExpertsPerTok
		if c.MoEIntermediate > 0 {
			m.Intermediate = c.MoEIntermediate
		}
	}
	m.QKVBias = c.AttentionBias || strings.HasPrefix(strings.ToLower(c.ModelType), "qwen2")
	if err := m.Validate(); err != nil {
		return Model{}, fmt.Errorf("config.json: %w", err)
	}
	return m, nil
}
