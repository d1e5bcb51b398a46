//go:build js && wasm

package main

import "servelab/wasm/play"

// kvFigures are a run's KV-cache and KV-transfer figures for figures():
// read from the run, never recomputed.
type kvFigures struct {
	capacity, block, peak int // blocks per GPU (0: ideal engine), tokens per block, most held in a step
	preemptions, rejected int
	nXfer                 int // completed requests whose KV cache moved to a decode GPU
	meanXfer, longestXfer float64
	gpus                  int
	firstHeld             int // global index of the first step memory held the queue back (-1: none)
}

func kvOf(r *play.SimRun) kvFigures {
	if r == nil {
		return kvFigures{firstHeld: -1}
	}
	if k, ok := kvMemo[r]; ok {
		return k
	}
	k := kvFigures{capacity: r.KVCapacity, block: r.BlockSize, peak: r.PeakKV(), preemptions: r.Preemptions,
		rejected: r.Rejected, gpus: len(r.Rows), firstHeld: r.FirstHeld()}
	k.nXfer, k.meanXfer, k.longestXfer = r.Transfers()
	if len(kvMemo) >= 4 {
		clear(kvMemo) // the runs shown are two at most
	}
	kvMemo[r] = k
	return k
}

// kvMemo keeps the figures of the runs last asked for: the page publishes
// its figures on every render, and they read every step of a run. A run is
// never changed once made (a new one is a new *SimRun), so it is the key.
var kvMemo = map[*play.SimRun]kvFigures{}

func (k kvFigures) cache() map[string]any {
	return map[string]any{"capacity_blocks": k.capacity, "block_size": k.block, "peak_blocks": k.peak,
		"preemptions": k.preemptions, "rejected": k.rejected, "first_held_step": k.firstHeld}
}

func (k kvFigures) transfers() map[string]any {
	return map[string]any{"count": k.nXfer, "mean_s": k.meanXfer, "max_s": k.longestXfer}
}
