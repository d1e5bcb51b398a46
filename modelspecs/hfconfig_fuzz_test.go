package modelspecs

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzFromHFConfig: any bytes give a model or an error, never a panic; a
// model it accepts is one the simulator can price (it validates).
func FuzzFromHFConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"num_hidden_layers": 1e308, "hidden_size": -1}`))
	f.Add([]byte(`{"Num_Hidden_Layers": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := FromHFConfig(data, "fuzz.json")
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted a model that does not validate: %v (%+v)", err, m)
		}
	})
}
