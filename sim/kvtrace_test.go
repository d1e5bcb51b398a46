package sim

import "testing"

// TestTraceShowsTheKVCache checks the traced KV fields: blocks held stay
// within capacity, preemptions listed by step match the results' counts,
// and a run without the trace fills none of them.
func TestTraceShowsTheKVCache(t *testing.T) {
	step, err := DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := Poisson(300, 40, 1024, 256, 3)
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 2000 // blocks of 16 tokens: about 30 requests' worth
	run := func(trace, preempt bool) *Outcome {
		cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Trace: trace,
			Limits: Limits{KVBlocks: capacity, BlockSize: 16, Preempt: preempt, MaxSeqs: 256}}
		out, err := Run(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := run(true, true)
	listed, peak, heldKV := 0, 0, 0
	for _, it := range out.Iterations {
		listed += len(it.Preempted)
		peak = max(peak, it.KVBlocks)
		if it.KVBlocks > capacity {
			t.Fatalf("step %d holds %d blocks, over the capacity %d", it.Index, it.KVBlocks, capacity)
		}
		if it.Held == "kv" {
			heldKV++
		}
	}
	counted := 0
	for _, r := range out.Results {
		counted += r.Preemptions
	}
	if counted == 0 || listed != counted {
		t.Fatalf("steps list %d preemptions, results count %d (want equal and > 0)", listed, counted)
	}
	if peak < capacity*9/10 || heldKV == 0 {
		t.Fatalf("peak %d of %d blocks, %d steps held back by KV: the cache never filled", peak, capacity, heldKV)
	}
	for _, it := range run(false, true).Iterations {
		t.Fatalf("untraced run kept iteration %d", it.Index)
	}
	// Waiting (reserve up front) never preempts but is held back by memory.
	held := 0
	for _, it := range run(true, false).Iterations {
		if len(it.Preempted) > 0 {
			t.Fatalf("on-full wait preempted at step %d", it.Index)
		}
		if it.Held == "kv" {
			held++
		}
	}
	if held == 0 {
		t.Fatal("on-full wait: no step says KV held the queue back")
	}
}
