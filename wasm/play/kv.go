package play

import (
	"fmt"
	"sort"
	"strings"

	"servelab/sim"
	"servelab/sim/scenario"
)

// StepAt is the index of row's step running at time t, else the last one
// that started before t, else -1.
func (r *SimRun) StepAt(row int, t float64) int {
	if row < 0 || row >= len(r.Rows) {
		return -1
	}
	its := r.Rows[row].Iters
	i := sort.Search(len(its), func(i int) bool { return its[i].Start > t })
	return i - 1
}

// Held is one request's tokens in a GPU's KV cache at a step.
type Held struct{ ID, Tokens int }

// HeldAt lists the requests whose KV row's GPU holds while step k runs and
// how many tokens each has there, largest first: the tokens the trace gave
// them before k (a preemption empties theirs). It reads the trace only, and
// returns nil when the run before k is too long to read on a hover.
func (r *SimRun) HeldAt(row, k int) []Held {
	if row < 0 || row >= len(r.Rows) || k < 0 || k >= len(r.Rows[row].Iters) {
		return nil
	}
	its := r.Rows[row].Iters
	if n := 0; k > 0 {
		// The walk is over every item before k: skip it where it would hold
		// up a hover (about maxHeldWalk items, a few ms).
		for j := max(0, k-64); j < k; j++ {
			n += len(its[j].Items)
		}
		if float64(n)/float64(min(k, 64))*float64(k) > maxHeldWalk {
			return nil
		}
	}
	tokens := map[int]int{}
	// A decode GPU receives a request's KV cache whole: its prompt is there
	// from its first step on.
	decode := strings.HasPrefix(r.Rows[row].Name, "decode")
	for j := 0; j < k; j++ {
		for _, item := range its[j].Items {
			if _, seen := tokens[item.ID]; !seen && decode {
				if i, ok := r.byID.get(item.ID); ok {
					tokens[item.ID] = r.Results[i].Prompt
				}
			}
			tokens[item.ID] += item.Tokens
			if item.Done {
				delete(tokens, item.ID)
			}
		}
		for _, id := range its[j+1].Preempted {
			delete(tokens, id)
		}
	}
	out := make([]Held, 0, len(tokens))
	for id, n := range tokens {
		out = append(out, Held{id, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tokens != out[j].Tokens {
			return out[i].Tokens > out[j].Tokens
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// maxHeldWalk bounds the trace items HeldAt reads for one step.
const maxHeldWalk = 1_000_000

// Transfers summarises a disaggregated run's KV transfers: how many
// completed requests moved their KV cache from a prefill to a decode GPU, and the
// mean and longest transfer (seconds).
func (r *SimRun) Transfers() (n int, mean, longest float64) {
	for i, p := range r.Placements {
		if p.Decode < 0 || i >= len(r.Results) || !r.Results[i].Completed() {
			continue
		}
		n++
		mean += p.Transfer
		longest = max(longest, p.Transfer)
	}
	if n > 0 {
		mean /= float64(n)
	}
	return n, mean, longest
}

// PeakKV is the most KV blocks any GPU held in one step.
func (r *SimRun) PeakKV() int {
	peak := 0
	for _, row := range r.Rows {
		for k := range row.Iters {
			peak = max(peak, row.Iters[k].KVBlocks)
		}
	}
	return peak
}

// ResultIndex is the index in Results of the request with this trace ID.
func (r *SimRun) ResultIndex(id int) (int, bool) { return r.byID.get(id) }

// FirstHeld is the global step index (rows in order) of the first step at
// which the KV cache held the queue back, or -1.
func (r *SimRun) FirstHeld() int {
	n := 0
	for _, row := range r.Rows {
		for k := range row.Iters {
			if row.Iters[k].Held == "kv" {
				return n + k
			}
		}
		n += len(row.Iters)
	}
	return -1
}

// SplitResult is the best prefill:decode split for a GPU count, found as
// the lecture's demo 3 does: each phase's goodput on one instance under its
// own SLO, then the x:y with the most goodput per GPU.
type SplitResult struct {
	GPUs       int
	Best       sim.Split
	GPre, GDec float64 // one prefill-only, one decode-only instance, req/s
}

// BestSplit searches the state's workload, model, GPU, limits and SLOs;
// yield runs between simulations (the page lets the browser breathe there).
func BestSplit(s State, gpus int, yield func() error) (SplitResult, error) {
	if gpus < 2 || gpus > 16 {
		return SplitResult{}, fmt.Errorf("the split search needs 2..16 GPUs, got %d", gpus)
	}
	if s.Workload != scenario.Poisson {
		return SplitResult{}, fmt.Errorf("the split search needs Poisson arrivals (a rate to search)")
	}
	x := s
	x.Policy = scenario.Disaggregated
	b, err := build(x)
	if err != nil {
		return SplitResult{}, err
	}
	wl := func(rate float64) ([]sim.Request, error) {
		if err := yield(); err != nil {
			return nil, err
		}
		return requests(s, rate)
	}
	c := *b.Cluster
	c.Prefill, c.Decode = 1, 1
	gPre, gDec, err := sim.PhaseGoodputs(c, wl, s.SLO, 0.9, 400, 400)
	if err != nil {
		return SplitResult{}, err
	}
	return SplitResult{GPUs: gpus, Best: sim.BestSplitWithin(gPre, gDec, gpus), GPre: gPre, GDec: gDec}, nil
}
