package modelspecs

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

func TestPublishedParameterCounts(t *testing.T) {
	// Parameter counts from the model cards, to 1.5%.
	for name, want := range map[string]float64{
		"Llama-3.1-8B": 8.03e9, "Llama-3.1-70B": 70.6e9, "Llama-3.2-1B": 1.24e9, "Llama-3.2-3B": 3.21e9,
		"Qwen2.5-7B": 7.61e9, "Qwen2.5-32B": 32.8e9, "Mistral-7B": 7.25e9, "Mixtral-8x7B": 46.7e9, "OPT-13B": 12.9e9,
	} {
		m, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !near(m.Params(), want, 0.015) {
			t.Errorf("%s: %.3gB params, want about %.3gB", name, m.Params()/1e9, want/1e9)
		}
	}
}

func TestStepModelConstantsForLlama8B(t *testing.T) {
	m, _ := Get(Default)
	// F = 2 x (non-embedding params + lm_head), A = 4 L H d, K = 2 L kv d x 2 bytes.
	if f := m.LinearFLOPsPerToken(); !near(f, 15.01e9, 0.003) {
		t.Errorf("F = %g", f)
	}
	if a := m.AttnFLOPsPerPair(); a != 4*32*32*128 {
		t.Errorf("A = %g", a)
	}
	if k := m.KVBytesPerToken(2); k != 2*32*8*128*2 {
		t.Errorf("K = %g", k)
	}
	if w := m.WeightBytes(2); !near(w, 16.06e9, 0.003) {
		t.Errorf("W = %g", w)
	}
}

func TestMoECountsActiveExpertsForFLOPsAndAllForBytes(t *testing.T) {
	m, _ := Get("Mixtral-8x7B")
	if m.ActiveParams() > 0.3*m.Params() || !near(m.ActiveParams(), 12.9e9, 0.03) {
		t.Errorf("Mixtral active %.3gB of %.3gB", m.ActiveParams()/1e9, m.Params()/1e9)
	}
}

func TestHFConfigImport(t *testing.T) {
	dir := filepath.Join("testdata")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"llama31_8b.json": "Llama-3.1-8B", "mixtral.json": "Mixtral-8x7B", "opt13b.json": "OPT-13B", "qwen25_7b.json": "Qwen2.5-7B"}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			continue // tested on its own below
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		got, err := FromHFConfig(data, "")
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		ref, _ := Get(want[e.Name()])
		if !near(got.Params(), ref.Params(), 0.001) || !near(got.LinearFLOPsPerToken(), ref.LinearFLOPsPerToken(), 0.001) ||
			got.KVBytesPerToken(2) != ref.KVBytesPerToken(2) {
			t.Errorf("%s: imported %v, catalogue %v", e.Name(), got, ref)
		}
	}
}

func TestHFConfigErrorsNameTheProblem(t *testing.T) {
	for in, want := range map[string]string{
		`{`:                     "config.json",
		`{"hidden_size": 4096}`: "num_hidden_layers",
		`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 3, "num_key_value_heads": 2, "intermediate_size": 8, "vocab_size": 10}`: "multiple",
		`{"num_hidden_layers": -2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10}`:                          "layers",
	} {
		_, err := FromHFConfig([]byte(in), "x")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FromHFConfig(%s) = %v, want an error mentioning %q", in, err, want)
		}
	}
}

func TestUnknownModelListsNames(t *testing.T) {
	_, err := Get("gpt-5")
	if err == nil || !strings.Contains(err.Error(), "Llama-3.1-8B") {
		t.Fatalf("got %v", err)
	}
}

// A real Falcon config names its KV heads num_kv_heads, has no
// intermediate_size (4 x hidden) and no tie key (tied): it imports.
func TestHFConfigImportsFalcon(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "falcon180b.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromHFConfig(data, "Falcon-180B")
	if err != nil {
		t.Fatal(err)
	}
	if m.KVHeads != 8 || m.Intermediate != 4*14848 || m.Gated || !m.Tied || !near(m.Params(), 179.5e9, 0.015) {
		t.Errorf("Falcon-180B imported as %+v (%.4gB params)", m, m.Params()/1e9)
	}
	// Falcon-7B: multi_query without the new decoder architecture is one KV head.
	m, err = FromHFConfig([]byte(`{"model_type":"falcon","hidden_size":4544,"num_attention_heads":71,"num_hidden_layers":32,"multi_query":true,"vocab_size":65024}`), "")
	if err != nil || m.KVHeads != 1 || !near(m.Params(), 6.92e9, 0.015) {
		t.Errorf("Falcon-7B: %v, %+v", err, m)
	}
}

func TestHFConfigSlidingWindowAndFP8(t *testing.T) {
	base := `"model_type":"mistral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000`
	m, err := FromHFConfig([]byte(`{`+base+`,"sliding_window":4096}`), "")
	if err != nil || m.SlidingWindow != 4096 || m.Attended(10000) != 4096 || m.Attended(100) != 100 {
		t.Errorf("sliding window: %v %+v", err, m)
	}
	m, _ = FromHFConfig([]byte(`{`+base+`,"sliding_window":4096,"use_sliding_window":false}`), "")
	if m.SlidingWindow != 0 {
		t.Errorf("use_sliding_window false: window %d", m.SlidingWindow)
	}
	m, _ = FromHFConfig([]byte(`{`+base+`,"sliding_window":null,"quantization_config":{"quant_method":"fp8"}}`), "")
	if m.SlidingWindow != 0 || m.DtypeBytes != 1 {
		t.Errorf("fp8 checkpoint: window %d, dtype bytes %g", m.SlidingWindow, m.DtypeBytes)
	}
}
