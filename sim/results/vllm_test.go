package results

import (
	"bytes"
	"testing"
)

// FuzzReadVLLMBench: no input panics, and an accepted file's gaps are all non-negative.
func FuzzReadVLLMBench(f *testing.F) {
	f.Add([]byte(`{"itls": [[0.01, 0.02]], "ttfts": [0.1], "errors": [""]}`))
	f.Add([]byte(`{"itls": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadVLLM(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, x := range b.AllITLs() {
			if !(x >= 0) {
				t.Fatalf("accepted gap %g", x)
			}
		}
	})
}
