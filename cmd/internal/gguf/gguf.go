// Package gguf writes the tiny lab's model: a small Llama-shaped GGUF (version 3)
// with seeded random weights and a SentencePiece-style vocabulary whose 256 byte
// tokens make any text tokenizable. llama.cpp loads it like any Llama; the output
// is noise, but every step costs what a real model of that shape costs, which is
// all the lab measures. The model is made here, never downloaded.
package gguf

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Config is the model's shape and the seed of its weights.
type Config struct {
	Hidden     int    // embedding length
	Layers     int    // transformer blocks
	FFN        int    // feed-forward length (SwiGLU)
	Heads      int    // attention heads
	KVHeads    int    // key/value heads (grouped-query attention when fewer than Heads)
	ContextLen int    // llama.context_length: the longest context the model claims
	Seed       uint64 // weights are a function of the seed alone
	Name       string // general.name
}

// Default is the lab's model (1 M parameters): on one core of this machine kind
// a decode step of 16 sequences takes about 7 ms and an 8k-token prompt about 3 s.
var Default = Config{Hidden: 128, Layers: 4, FFN: 384, Heads: 2, KVHeads: 2, ContextLen: 32768, Seed: 1, Name: "tinylab"}

// Validate says which field is out of range, if any.
func (c Config) Validate() error {
	switch {
	case c.Hidden < 8 || c.Hidden > 8192:
		return fmt.Errorf("hidden size %d: want 8..8192", c.Hidden)
	case c.Layers < 1 || c.Layers > 128:
		return fmt.Errorf("layers %d: want 1..128", c.Layers)
	case c.FFN < 1 || c.FFN > 65536:
		return fmt.Errorf("ffn size %d: want 1..65536", c.FFN)
	case c.Heads < 1 || c.Hidden%c.Heads != 0:
		return fmt.Errorf("heads %d: want a divisor of the hidden size %d", c.Heads, c.Hidden)
	case (c.Hidden/c.Heads)%2 != 0:
		return fmt.Errorf("head size %d (hidden %d / heads %d): RoPE needs an even head size", c.Hidden/c.Heads, c.Hidden, c.Heads)
	case c.KVHeads < 1 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("kv heads %d: want a divisor of the heads %d", c.KVHeads, c.Heads)
	case c.ContextLen < 16 || c.ContextLen > 1<<20:
		return fmt.Errorf("context length %d: want 16..%d", c.ContextLen, 1<<20)
	}
	return nil
}

// Params is the number of weights the model has (embedding and output included).
func (c Config) Params() int64 {
	var n int64
	for _, t := range c.tensors() {
		n += t.size()
	}
	return n
}

// Token kinds as llama.cpp reads tokenizer.ggml.token_type.
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokByte    = 6
)

// Special token ids.
const (
	UnknownID = 0
	BOSID     = 1
	EOSID     = 2
)

// Vocab is the tokenizer: <unk>, <s>, </s>, the 256 byte tokens, "▁" (SentencePiece's
// space), the printable ASCII characters, "▁" + each of them, and every two-digit
// pair, so a random five-digit number (the lab script's filler) is about three
// tokens. Longer pieces score higher, so they merge first.
func Vocab() (tokens []string, scores []float32, types []int32) {
	add := func(s string, score float32, t int32) {
		tokens = append(tokens, s)
		scores = append(scores, score)
		types = append(types, t)
	}
	add("<unk>", 0, tokUnknown)
	add("<s>", 0, tokControl)
	add("</s>", 0, tokControl)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, tokByte)
	}
	add("▁", -1, tokNormal)
	for c := byte('!'); c <= '~'; c++ {
		add(string(c), -1, tokNormal)
	}
	for c := byte('!'); c <= '~'; c++ {
		add("▁"+string(c), -0.5, tokNormal)
	}
	for a := byte('0'); a <= '9'; a++ {
		for b := byte('0'); b <= '9'; b++ {
			add(string([]byte{a, b}), -0.25, tokNormal)
		}
	}
	return tokens, scores, types
}

// tensor is one weight matrix; dims are innermost first, as GGUF stores them.
type tensor struct {
	name string
	dims []int
	fill float32 // 0: random normal; otherwise every element is this value (the norms)
}

func (t tensor) size() int64 {
	n := int64(1)
	for _, d := range t.dims {
		n *= int64(d)
	}
	return n
}

func (c Config) tensors() []tensor {
	vocab, _, _ := Vocab()
	nv := len(vocab)
	kv := c.Hidden / c.Heads * c.KVHeads
	ts := []tensor{
		{name: "token_embd.weight", dims: []int{c.Hidden, nv}},
		{name: "output_norm.weight", dims: []int{c.Hidden}, fill: 1},
		{name: "output.weight", dims: []int{c.Hidden, nv}},
	}
	for i := 0; i < c.Layers; i++ {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			tensor{name: b + "attn_norm.weight", dims: []int{c.Hidden}, fill: 1},
			tensor{name: b + "attn_q.weight", dims: []int{c.Hidden, c.Hidden}},
			tensor{name: b + "attn_k.weight", dims: []int{c.Hidden, kv}},
			tensor{name: b + "attn_v.weight", dims: []int{c.Hidden, kv}},
			tensor{name: b + "attn_output.weight", dims: []int{c.Hidden, c.Hidden}},
			tensor{name: b + "ffn_norm.weight", dims: []int{c.Hidden}, fill: 1},
			tensor{name: b + "ffn_gate.weight", dims: []int{c.Hidden, c.FFN}},
			tensor{name: b + "ffn_up.weight", dims: []int{c.Hidden, c.FFN}},
			tensor{name: b + "ffn_down.weight", dims: []int{c.FFN, c.Hidden}},
		)
	}
	return ts
}

// GGUF value types used here.
const (
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
)

const (
	alignment = 32
	ggmlF32   = 0
)

// enc writes little-endian GGUF primitives and remembers the first error.
type enc struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (e *enc) bytes(b []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(b)
	e.n += int64(k)
}

func (e *enc) u32(v uint32) { e.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *enc) u64(v uint64) { e.bytes(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *enc) f32(v float32) {
	e.u32(math.Float32bits(v))
}
func (e *enc) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }

func (e *enc) kvString(k, v string)  { e.str(k); e.u32(typeString); e.str(v) }
func (e *enc) kvU32(k string, v int) { e.str(k); e.u32(typeUint32); e.u32(uint32(v)) }
func (e *enc) kvF32(k string, v float32) {
	e.str(k)
	e.u32(typeFloat32)
	e.f32(v)
}
func (e *enc) kvBool(k string, v bool) {
	e.str(k)
	e.u32(typeBool)
	if v {
		e.bytes([]byte{1})
	} else {
		e.bytes([]byte{0})
	}
}

func (e *enc) pad() {
	if r := e.n % alignment; r != 0 {
		e.bytes(make([]byte, alignment-r))
	}
}

// Write writes the model to w.
func Write(w io.Writer, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	e := &enc{w: bufio.NewWriterSize(w, 1<<20)}
	tokens, scores, types := Vocab()
	ts := c.tensors()

	const kvCount = 19
	e.bytes([]byte("GGUF"))
	e.u32(3)
	e.u64(uint64(len(ts)))
	e.u64(kvCount)
	e.kvString("general.architecture", "llama")
	e.kvString("general.name", c.Name)
	e.kvU32("general.alignment", alignment)
	e.kvU32("llama.context_length", c.ContextLen)
	e.kvU32("llama.embedding_length", c.Hidden)
	e.kvU32("llama.block_count", c.Layers)
	e.kvU32("llama.feed_forward_length", c.FFN)
	e.kvU32("llama.attention.head_count", c.Heads)
	e.kvU32("llama.attention.head_count_kv", c.KVHeads)
	e.kvU32("llama.rope.dimension_count", c.Hidden/c.Heads)
	e.kvF32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	e.kvString("tokenizer.ggml.model", "llama")
	e.str("tokenizer.ggml.tokens")
	e.u32(typeArray)
	e.u32(typeString)
	e.u64(uint64(len(tokens)))
	for _, t := range tokens {
		e.str(t)
	}
	e.str("tokenizer.ggml.scores")
	e.u32(typeArray)
	e.u32(typeFloat32)
	e.u64(uint64(len(scores)))
	for _, s := range scores {
		e.f32(s)
	}
	e.str("tokenizer.ggml.token_type")
	e.u32(typeArray)
	e.u32(typeInt32)
	e.u64(uint64(len(types)))
	for _, t := range types {
		e.u32(uint32(t))
	}
	e.kvU32("tokenizer.ggml.bos_token_id", BOSID)
	e.kvU32("tokenizer.ggml.eos_token_id", EOSID)
	e.kvU32("tokenizer.ggml.unknown_token_id", UnknownID)
	e.kvBool("tokenizer.ggml.add_bos_token", true)

	var off uint64
	for _, t := range ts {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(uint64(d))
		}
		e.u32(ggmlF32)
		e.u64(off)
		off += uint64(t.size()*4+alignment-1) / alignment * alignment
	}
	e.pad()

	rng := rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15))
	buf := make([]byte, 0, 1<<16)
	for _, t := range ts {
		// Scale by 1/sqrt(fan-in) so activations neither vanish nor blow up.
		std := 1 / math.Sqrt(float64(t.dims[0]))
		for i := int64(0); i < t.size(); i++ {
			v := t.fill
			if v == 0 {
				v = float32(rng.NormFloat64() * std)
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				e.bytes(buf)
				buf = buf[:0]
			}
		}
		e.bytes(buf)
		buf = buf[:0]
		e.pad()
	}
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// HFConfig is the model's shape as a Hugging Face config.json, so the
// simulator can price its steps (servelab sim --model-config FILE).
func HFConfig(c Config) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	vocab, _, _ := Vocab()
	m := map[string]any{
		"_name_or_path": c.Name, "model_type": "llama", "architectures": []string{"LlamaForCausalLM"},
		"hidden_size": c.Hidden, "num_hidden_layers": c.Layers, "intermediate_size": c.FFN,
		"num_attention_heads": c.Heads, "num_key_value_heads": c.KVHeads, "head_dim": c.Hidden / c.Heads,
		"vocab_size": len(vocab), "max_position_embeddings": c.ContextLen, "tie_word_embeddings": false,
		"hidden_act": "silu", "rms_norm_eps": 1e-5, "torch_dtype": "float32",
	}
	b, err := json.MarshalIndent(m, "", "  ")
	return append(b, '\n'), err
}
