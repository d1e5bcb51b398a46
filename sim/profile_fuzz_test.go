package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseProfile: any bytes give a profile or an error, never a panic;
// a profile it accepts writes itself out and reads back as accepted.
func FuzzParseProfile(f *testing.F) {
	files, _ := filepath.Glob("profiles/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"name": "x", "constants": {"eff_compute": {"value": 2}}}`))
	f.Add([]byte(`{"name": "x"} trailing`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			return
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatalf("an accepted profile does not write out: %v", err)
		}
		if _, err := ParseProfile(out); err != nil {
			t.Fatalf("an accepted profile written out is refused: %v\n%s", err, out)
		}
	})
}
