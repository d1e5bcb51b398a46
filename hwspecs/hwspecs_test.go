package hwspecs

import (
	"strings"
	"testing"
)

func TestCatalogueIsComplete(t *testing.T) {
	want := []string{"H100-SXM", "H100-PCIe", "H200", "A100-40GB", "A100-80GB", "B200", "L40S", "MI300X", "RTX-4090"}
	for _, n := range want {
		g, err := Get(n)
		if err != nil {
			t.Fatalf("Get(%q): %v", n, err)
		}
		if err := g.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if g.Source == "" {
			t.Errorf("%s has no source line", n)
		}
		// Dense bf16 is at most a few PFLOP/s; a sparse figure would be about double.
		if g.FLOPS > 2.5e15 || g.FLOPS < 1e14 {
			t.Errorf("%s: %g FLOP/s is not a plausible dense bf16 figure", n, g.FLOPS)
		}
	}
	if Default != "H100-SXM" {
		t.Errorf("default GPU = %s", Default)
	}
	h, _ := Get(Default)
	if h.FLOPS != 989.4e12 || h.MemBW != 3.35e12 {
		t.Errorf("H100 SXM figures changed: %v", h)
	}
}

func TestGetForgivesSpellingAndListsNames(t *testing.T) {
	if g, err := Get("h100 sxm"); err != nil || g.Name != "H100-SXM" {
		t.Fatalf("Get(h100 sxm) = %v, %v", g.Name, err)
	}
	_, err := Get("TPUv5")
	if err == nil || !strings.Contains(err.Error(), "H100-SXM") || !strings.Contains(err.Error(), "MI300X") {
		t.Fatalf("unknown GPU error should list the valid names, got %v", err)
	}
}

func TestValidateRejectsNonsense(t *testing.T) {
	g, _ := Get(Default)
	g.MemBW = 0
	if g.Validate() == nil {
		t.Fatal("zero bandwidth accepted")
	}
}

// FP8 peaks: twice the dense bf16 rate where the GPU has FP8 tensor cores,
// none on the A100s nor on the tiny lab's CPU core.
func TestFP8Peaks(t *testing.T) {
	for _, g := range All() {
		switch {
		case strings.HasPrefix(g.Name, "A100"), strings.HasPrefix(g.Name, "CPU"):
			if g.FP8FLOPS != 0 {
				t.Errorf("%s: FP8 %g, but it has no FP8 tensor cores", g.Name, g.FP8FLOPS)
			}
		case g.FP8FLOPS < 1.99*g.FLOPS || g.FP8FLOPS > 2.03*g.FLOPS:
			t.Errorf("%s: FP8 %.0f TFLOP/s against bf16 %.0f", g.Name, g.FP8FLOPS/1e12, g.FLOPS/1e12)
		}
	}
}
