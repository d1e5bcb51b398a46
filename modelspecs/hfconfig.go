package modelspecs

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// hfConfig is the subset of a Hugging Face config.json that fixes the shape.
// Field names differ between families (OPT says ffn_dim, Mixtral
// num_local_experts), so each alternative is read.
type hfConfig struct {
	ModelType        string `json:"model_type"`
	NameOrPath       string `json:"_name_or_path"`
	Layers           int    `json:"num_hidden_layers"`
	Hidden           int    `json:"hidden_size"`
	Heads            int    `json:"num_attention_heads"`
	KVHeads          *int   `json:"num_key_value_heads"`
	FalconKVHeads    *int   `json:"num_kv_heads"` // Falcon's name for it
	MultiQuery       *bool  `json:"multi_query"`  // Falcon-7B: one KV head
	NewDecoderArch   bool   `json:"new_decoder_architecture"`
	FFNHidden        int    `json:"ffn_hidden_size"` // Falcon
	NLayer           int    `json:"n_layer"`         // Falcon (RefinedWeb) spellings
	NHead            int    `json:"n_head"`
	NEmbed           int    `json:"n_embed"`
	SlidingWindow    *int   `json:"sliding_window"`
	UseSlidingWindow *bool  `json:"use_sliding_window"` // Qwen2: false turns it off
	TorchDtype       string `json:"torch_dtype"`
	Quantization     *struct {
		QuantMethod string `json:"quant_method"`
	} `json:"quantization_config"`
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
// Keys match exactly, as transformers reads them: encoding/json alone would
// take "Num_Hidden_Layers" (or a second spelling after the first) for
// num_hidden_layers.
func FromHFConfig(data []byte, name string) (Model, error) {
	exact, err := exactKeys(data, reflect.TypeFor[hfConfig]())
	if err != nil {
		return Model{}, fmt.Errorf("config.json: %w", err)
	}
	var c hfConfig
	if err := json.Unmarshal(exact, &c); err != nil {
		return Model{}, fmt.Errorf("config.json: %w", err)
	}
	if c.Layers == 0 {
		c.Layers = c.NLayer
	}
	if c.Hidden == 0 {
		c.Hidden = c.NEmbed
	}
	if c.Heads == 0 {
		c.Heads = c.NHead
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
	switch {
	case c.KVHeads != nil:
		m.KVHeads = *c.KVHeads
	case c.FalconKVHeads != nil:
		m.KVHeads = *c.FalconKVHeads
	case c.MultiQuery != nil && *c.MultiQuery && !c.NewDecoderArch:
		m.KVHeads = 1
	}
	if m.HeadDim == 0 {
		m.HeadDim = c.Hidden / c.Heads
	}
	if m.Intermediate == 0 {
		m.Intermediate = c.FFNDim
	}
	if m.Intermediate == 0 {
		m.Intermediate = c.FFNHidden
	}
	mt := strings.ToLower(c.ModelType)
	if m.Intermediate == 0 && (mt == "falcon" || mt == "refinedweb" || mt == "refinedwebmodel") {
		m.Intermediate = 4 * c.Hidden // Falcon's MLP is 4 x hidden unless ffn_hidden_size says otherwise
	}
	if c.SlidingWindow != nil && *c.SlidingWindow > 0 && (c.UseSlidingWindow == nil || *c.UseSlidingWindow) {
		m.SlidingWindow = *c.SlidingWindow
	}
	if c.Quantization != nil && strings.EqualFold(c.Quantization.QuantMethod, "fp8") || strings.HasPrefix(strings.ToLower(c.TorchDtype), "float8") {
		m.DtypeBytes = 1
	}
	switch mt {
	case "opt", "gpt2", "gpt_neox", "gptj", "bloom", "falcon", "refinedweb", "refinedwebmodel":
		m.Gated = false
	default:
		m.Gated = true
	}
	m.Tied = c.Tie != nil && *c.Tie
	if c.Tie == nil && (mt == "opt" || mt == "falcon") {
		m.Tied = true // OPT's and Falcon's configs omit the key; their heads are tied
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

// exactKeys returns the JSON object data with only the keys that are, in
// exactly that spelling, a json tag of struct type t, nested objects of
// struct fields filtered the same way, or an error when data is not a
// JSON object.
func exactKeys(data []byte, t reflect.Type) ([]byte, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("want a JSON object, got null")
	}
	out := map[string]json.RawMessage{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		v, ok := raw[key]
		if key == "" || !ok {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && string(v) != "null" {
			nested, err := exactKeys(v, ft)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			v = nested
		}
		out[key] = v
	}
	return json.Marshal(out)
}
