package gguf

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
)

// reader parses just enough GGUF to check what Write wrote.
type reader struct {
	b   *bytes.Reader
	err error
}

func (r *reader) u32() uint32 {
	var v uint32
	if r.err == nil {
		r.err = binary.Read(r.b, binary.LittleEndian, &v)
	}
	return v
}

func (r *reader) u64() uint64 {
	var v uint64
	if r.err == nil {
		r.err = binary.Read(r.b, binary.LittleEndian, &v)
	}
	return v
}

func (r *reader) str() string {
	n := r.u64()
	if r.err != nil || n > 1<<20 {
		return ""
	}
	b := make([]byte, n)
	_, r.err = io.ReadFull(r.b, b)
	return string(b)
}

// value reads one value of type t; it returns scalars and strings, and the
// element count of an array.
func (r *reader) value(t uint32) any {
	switch t {
	case typeUint32, typeInt32:
		return r.u32()
	case typeFloat32:
		return r.u32()
	case typeBool:
		b, err := r.b.ReadByte()
		r.err = err
		return b == 1
	case typeString:
		return r.str()
	case typeArray:
		et, n := r.u32(), r.u64()
		for i := uint64(0); i < n; i++ {
			r.value(et)
		}
		return n
	}
	r.err = io.ErrUnexpectedEOF
	return nil
}

type tensorInfo struct {
	dims []uint64
	typ  uint32
	off  uint64
}

func parse(t *testing.T, data []byte) (map[string]any, map[string]tensorInfo, int64) {
	t.Helper()
	r := &reader{b: bytes.NewReader(data)}
	magic := make([]byte, 4)
	io.ReadFull(r.b, magic)
	if string(magic) != "GGUF" || r.u32() != 3 {
		t.Fatalf("not a GGUF v3 file")
	}
	nt, nkv := r.u64(), r.u64()
	kvs := map[string]any{}
	for i := uint64(0); i < nkv; i++ {
		k := r.str()
		kvs[k] = r.value(r.u32())
	}
	ts := map[string]tensorInfo{}
	for i := uint64(0); i < nt; i++ {
		name := r.str()
		nd := r.u32()
		var ti tensorInfo
		for j := uint32(0); j < nd; j++ {
			ti.dims = append(ti.dims, r.u64())
		}
		ti.typ, ti.off = r.u32(), r.u64()
		ts[name] = ti
	}
	if r.err != nil {
		t.Fatalf("parsing: %v", r.err)
	}
	pos := int64(len(data)) - int64(r.b.Len())
	start := (pos + alignment - 1) / alignment * alignment
	return kvs, ts, start
}

func TestWriteLlamaShape(t *testing.T) {
	c := Config{Hidden: 32, Layers: 2, FFN: 48, Heads: 4, KVHeads: 2, ContextLen: 1024, Seed: 7, Name: "t"}
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	kvs, ts, start := parse(t, buf.Bytes())
	for k, want := range map[string]any{
		"general.architecture": "llama", "llama.embedding_length": uint32(32), "llama.block_count": uint32(2),
		"llama.feed_forward_length": uint32(48), "llama.attention.head_count": uint32(4),
		"llama.attention.head_count_kv": uint32(2), "llama.rope.dimension_count": uint32(8),
		"llama.context_length": uint32(1024), "tokenizer.ggml.model": "llama", "general.alignment": uint32(32),
	} {
		if kvs[k] != want {
			t.Errorf("%s = %v, want %v", k, kvs[k], want)
		}
	}
	vocab, _, types := Vocab()
	if kvs["tokenizer.ggml.tokens"] != uint64(len(vocab)) || kvs["tokenizer.ggml.token_type"] != uint64(len(types)) {
		t.Errorf("vocab arrays: %v tokens, %v types, want %d", kvs["tokenizer.ggml.tokens"], kvs["tokenizer.ggml.token_type"], len(vocab))
	}
	bytesTokens := 0
	for i, s := range vocab {
		if types[i] == tokByte {
			bytesTokens++
			if !strings.HasPrefix(s, "<0x") {
				t.Errorf("byte token %d is %q", i, s)
			}
		}
	}
	if bytesTokens != 256 {
		t.Errorf("%d byte tokens, want 256 (byte fallback)", bytesTokens)
	}
	if len(ts) != 3+9*c.Layers {
		t.Errorf("%d tensors, want %d", len(ts), 3+9*c.Layers)
	}
	k := ts["blk.1.attn_k.weight"]
	if len(k.dims) != 2 || k.dims[0] != 32 || k.dims[1] != 16 {
		t.Errorf("attn_k dims %v, want [32 16] (GQA: 2 of 4 heads of 8)", k.dims)
	}
	// Every tensor is aligned and lies inside the file.
	end := uint64(0)
	for name, ti := range ts {
		n := uint64(4)
		for _, d := range ti.dims {
			n *= d
		}
		if ti.off%alignment != 0 || ti.typ != ggmlF32 {
			t.Errorf("%s: offset %d, type %d", name, ti.off, ti.typ)
		}
		end = max(end, ti.off+n)
	}
	if int64(end)+start > int64(buf.Len()) {
		t.Errorf("tensor data ends at %d, the file at %d", int64(end)+start, buf.Len())
	}
	if got, want := int64(buf.Len())-start, int64(4*c.Params()); got < want {
		t.Errorf("data section %d bytes, want at least %d", got, want)
	}
}

func TestWriteIsSeeded(t *testing.T) {
	c := Config{Hidden: 16, Layers: 1, FFN: 16, Heads: 2, KVHeads: 2, ContextLen: 64, Seed: 1}
	var a, b, d bytes.Buffer
	Write(&a, c)
	Write(&b, c)
	c.Seed = 2
	Write(&d, c)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same seed wrote different files")
	}
	if bytes.Equal(a.Bytes(), d.Bytes()) {
		t.Error("two seeds wrote the same file")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Hidden: 30, Layers: 1, FFN: 8, Heads: 4, KVHeads: 4, ContextLen: 64}, "heads 4"},
		{Config{Hidden: 24, Layers: 1, FFN: 8, Heads: 8, KVHeads: 8, ContextLen: 64}, "even head size"},
		{Config{Hidden: 32, Layers: 1, FFN: 8, Heads: 4, KVHeads: 3, ContextLen: 64}, "kv heads 3"},
		{Config{Hidden: 32, Layers: 0, FFN: 8, Heads: 4, KVHeads: 4, ContextLen: 64}, "layers 0"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.c, err, tc.want)
		}
		if Write(io.Discard, tc.c) == nil {
			t.Errorf("%+v: Write accepted it", tc.c)
		}
	}
	if err := Default.Validate(); err != nil {
		t.Errorf("Default: %v", err)
	}
}
