// Package hwspecs is the GPU catalogue the step model prices iterations with:
// dense bf16 FLOP/s, HBM bandwidth, memory size and scale-up link bandwidth.
//
// Figures are the vendors' datasheet numbers for dense (not 2:4 sparse) bf16
// tensor throughput; each entry says where its numbers come from.
package hwspecs

import (
	"fmt"
	"sort"
	"strings"
)

// GPU is one accelerator's peak figures.
type GPU struct {
	Name     string  // catalogue key, e.g. "H100-SXM"
	Label    string  // human name, e.g. "NVIDIA H100 SXM5 80GB"
	FLOPS    float64 // dense bf16 tensor FLOP/s
	MemBW    float64 // HBM/GDDR bandwidth, bytes/s
	MemBytes float64 // device memory, bytes
	LinkBW   float64 // scale-up link bandwidth per GPU (NVLink/Infinity Fabric, else PCIe), bytes/s
	Source   string  // where the figures come from
	FP8FLOPS float64 // dense FP8 tensor FLOP/s; 0 where the GPU has no FP8 tensor cores
}

// Default is the GPU the lecture uses.
const Default = "H100-SXM"

const (
	tera = 1e12
	giga = 1e9
)

var catalogue = []GPU{
	{"H100-SXM", "NVIDIA H100 SXM5 80GB", 989.4 * tera, 3.35 * tera, 80 * giga, 900 * giga,
		"NVIDIA H100 datasheet: BF16 1979 TFLOPS with sparsity (989 dense), 3.35 TB/s HBM3, NVLink 900 GB/s; FP8 3958 with sparsity (1979 dense)", 1978.9 * tera},
	{"H100-PCIe", "NVIDIA H100 PCIe 80GB", 756 * tera, 2.0 * tera, 80 * giga, 600 * giga,
		"NVIDIA H100 datasheet: BF16 1513 TFLOPS with sparsity (756 dense), 2.0 TB/s HBM2e, NVLink bridge 600 GB/s; FP8 3026 with sparsity (1513 dense)", 1513 * tera},
	{"H200", "NVIDIA H200 SXM 141GB", 989.4 * tera, 4.8 * tera, 141 * giga, 900 * giga,
		"NVIDIA H200 datasheet: BF16 1979 TFLOPS with sparsity (989 dense), 4.8 TB/s HBM3e, NVLink 900 GB/s; FP8 3958 with sparsity (1979 dense)", 1978.9 * tera},
	{"A100-40GB", "NVIDIA A100 SXM4 40GB", 312 * tera, 1.555 * tera, 40 * giga, 600 * giga,
		"NVIDIA A100 datasheet: BF16 312 TFLOPS dense, 1555 GB/s HBM2, NVLink 600 GB/s; no FP8 tensor cores", 0},
	{"A100-80GB", "NVIDIA A100 SXM4 80GB", 312 * tera, 2.039 * tera, 80 * giga, 600 * giga,
		"NVIDIA A100 datasheet: BF16 312 TFLOPS dense, 2039 GB/s HBM2e, NVLink 600 GB/s; no FP8 tensor cores", 0},
	{"B200", "NVIDIA B200 180GB (HGX)", 2250 * tera, 8.0 * tera, 180 * giga, 1800 * giga,
		"NVIDIA HGX B200 datasheet: FP16/BF16 4.5 PFLOPS with sparsity (2.25 dense) per GPU, 8 TB/s HBM3e, NVLink 1.8 TB/s; FP8 9 PFLOPS with sparsity (4.5 dense)", 4500 * tera},
	{"L40S", "NVIDIA L40S 48GB", 362.05 * tera, 0.864 * tera, 48 * giga, 64 * giga,
		"NVIDIA L40S datasheet: BF16 733 TFLOPS with sparsity (362 dense), 864 GB/s GDDR6, PCIe Gen4 x16 64 GB/s; FP8 1466 TFLOPS with sparsity (733 dense)", 733 * tera},
	{"MI300X", "AMD Instinct MI300X 192GB", 1307.4 * tera, 5.3 * tera, 192 * giga, 896 * giga,
		"AMD MI300X datasheet: BF16 1307.4 TFLOPS dense, 5.3 TB/s HBM3, Infinity Fabric 896 GB/s peer; FP8 2614.9 TFLOPS dense", 2614.9 * tera},
	{"RTX-4090", "NVIDIA GeForce RTX 4090 24GB", 165.2 * tera, 1.008 * tera, 24 * giga, 64 * giga,
		"NVIDIA Ada whitepaper: BF16 tensor 165.2 TFLOPS dense (FP32 accumulate), 1008 GB/s GDDR6X, PCIe Gen4 x16 64 GB/s; FP8 tensor 330.3 TFLOPS dense with FP32 accumulate", 330.3 * tera},
	{"CPU-core", "One x86 core with AVX-512 at 2.1 GHz (the tiny lab's llama.cpp thread)", 134.4 * giga, 20 * giga, 16 * giga, 10 * giga,
		"computed, not a datasheet: FP32 peak = 2 FMA units x 16 lanes x 2 FLOP x 2.1 GHz (llama.cpp computes in FP32 on a CPU); 20 GB/s is one core's streaming read bandwidth, an order of magnitude (calibrate fits eff_mem); 16 GB of the machine's RAM for weights + KV; link unused", 0},
}

// All returns a copy of the catalogue in its display order.
func All() []GPU { return append([]GPU(nil), catalogue...) }

// Names lists the catalogue keys, sorted.
func Names() []string {
	out := make([]string, len(catalogue))
	for i, g := range catalogue {
		out[i] = g.Name
	}
	sort.Strings(out)
	return out
}

// Get looks a GPU up by name, case-insensitively and ignoring '-', '_' and
// spaces; the error lists the valid names.
func Get(name string) (GPU, error) {
	key := normalize(name)
	for _, g := range catalogue {
		if normalize(g.Name) == key {
			return g, nil
		}
	}
	return GPU{}, fmt.Errorf("unknown GPU %q; valid: %s", name, strings.Join(Names(), ", "))
}

func normalize(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)
}

// Validate reports whether the figures are usable by the step model.
func (g GPU) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"FLOPS", g.FLOPS}, {"MemBW", g.MemBW}, {"MemBytes", g.MemBytes}, {"LinkBW", g.LinkBW}} {
		if !(f.v > 0) || f.v > 1e20 {
			return fmt.Errorf("gpu %s: %s must be positive and finite, got %g", g.Name, f.name, f.v)
		}
	}
	return nil
}

// String reads like the catalogue entry.
func (g GPU) String() string {
	return fmt.Sprintf("%s: %.0f TFLOP/s bf16 dense, %.2f TB/s, %.0f GB, link %.0f GB/s",
		g.Name, g.FLOPS/tera, g.MemBW/tera, g.MemBytes/giga, g.LinkBW/giga)
}
