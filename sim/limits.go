package sim

import (
	"fmt"
	"math"
)

// MemorySplit describes how an engine splits GPU memory, as vLLM's
// gpu_memory_utilization does: a fraction is reserved (activations, CUDA
// graphs, fragmentation), the weights take their share, the KV cache gets the rest.
type MemorySplit struct {
	Utilization float64 // fraction of GPU memory the engine may use (default 0.9)
	BlockSize   int     // tokens per KV block (default 16)
}

// DefaultUtilization is vLLM's default gpu_memory_utilization.
const DefaultUtilization = 0.9

// KVBlocks is the KV-cache capacity in blocks across the TP group, or an
// error naming the shortfall and the smallest TP degree that fits when the
// weights leave no room.
func (m MemorySplit) KVBlocks(s StepModel) (int, error) {
	util, bs := m.Utilization, m.BlockSize
	if util == 0 {
		util = DefaultUtilization
	}
	if bs == 0 {
		bs = 16
	}
	if !(util > 0 && util <= 1) || bs < 1 || bs > 1<<16 {
		return 0, fmt.Errorf("memory utilization must be in (0, 1] and block size in 1..65536, got %g and %d", util, bs)
	}
	tp := max(s.TP, 1)
	free := func(tp int) float64 { return float64(tp)*s.GPU.MemBytes*util - s.WeightBytes() }
	// Room for at least one full-context sequence, or the engine is useless.
	minKV := s.KVBytesPerToken() * float64(max(s.Model.MaxContext, 1))
	if minKV > 0 && free(tp) < math.Min(minKV, 4<<30) {
		need := tp
		for need < 64 && free(need) < math.Min(minKV, 4<<30) {
			need *= 2
		}
		return 0, fmt.Errorf("%s needs %.1f GB of weights plus at least %.1f GB of KV cache but %d x %s gives %.1f GB usable (%.0f%% of %.0f GB each): it does not fit; try --tp %d",
			s.Model.Name, s.WeightBytes()/1e9, math.Min(minKV, 4<<30)/1e9, tp, s.GPU.Name, float64(tp)*s.GPU.MemBytes*util/1e9, util*100, s.GPU.MemBytes/1e9, need)
	}
	return int(free(tp) / (s.KVBytesPerToken() * float64(bs))), nil
}
