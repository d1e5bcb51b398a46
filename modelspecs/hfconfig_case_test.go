package modelspecs

import (
	"strings"
	"testing"
)

// config.json's keys match as transformers reads them, exactly: another
// spelling of a key is not that key, wherever it stands in the file.
func TestHFConfigKeysMatchExactly(t *testing.T) {
	const base = `"model_type":"llama","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256`
	for _, c := range []struct {
		json   string
		layers int
		want   string
	}{
		{`{` + base + `,"Num_Hidden_Layers":2}`, 32, ""},
		{`{"NUM_HIDDEN_LAYERS":2,` + base + `}`, 32, ""},
		{`{"num_hidden_layers":32,"Hidden_Size":4096,"num_attention_heads":32}`, 0, "needs num_hidden_layers, hidden_size"},
		{`{` + base + `,"quantization_config":{"Quant_Method":"fp8"}}`, 32, ""},
		{`[1]`, 0, "cannot unmarshal"},
		{`null`, 0, "want a JSON object"},
	} {
		m, err := FromHFConfig([]byte(c.json), "m")
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v; want %q", c.json, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if m.Layers != c.layers || m.DtypeBytes == 1 {
			t.Errorf("%s: %d layers, dtype bytes %g", c.json, m.Layers, m.DtypeBytes)
		}
	}
}
