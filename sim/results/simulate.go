package results

// Repeating a benchmark tool's run in the simulator: the file's own request
// lengths, offered as the tool offered them.

import (
	"fmt"
	"math"

	"servelab/sim"
)

// Workload is a benchmark run as a simulation input.
type Workload struct {
	// Kind is "replay" (the file's start times), "poisson" (its rate),
	// "burst" (all sent at once) or "closed" (Concurrency requests kept in
	// flight, the next sent when one ends).
	Kind     string
	Requests []sim.Request // the file's lengths in its order; arrivals except for "closed"
	// Blocks are each request's prefix blocks, index for index with
	// Requests (nil when the file gives none: only traces with hash_ids do).
	Blocks      []BlockHashes
	Concurrency int
	Notes       []string
}

// Workload builds the simulation input from b's successful requests. A
// length the file does not state is taken from prompt and output, and said.
// Concurrency-bound runs become a closed loop; rate-bound ones replay the
// file's start times when it has them, else Poisson arrivals (seeded) at its
// rate, or at the rate achieved when it states none.
func (b *Run) Workload(prompt, output int, seed uint64) (Workload, error) {
	var w Workload
	guessedP, guessedO := 0, 0
	var starts []float64
	for _, r := range b.Requests {
		if r.Error != "" {
			continue
		}
		q := sim.Request{ID: len(w.Requests), Prompt: r.Prompt, Output: r.Output}
		if q.Prompt <= 0 {
			q.Prompt, guessedP = prompt, guessedP+1
		}
		if q.Output <= 0 {
			q.Output, guessedO = output, guessedO+1
		}
		if b.BlockTokens > 0 && len(r.Blocks) > 0 {
			q.Blocks, q.BlockTokens = r.Blocks.Names(), b.BlockTokens // the engine's prefix cache reads them
		}
		w.Requests = append(w.Requests, q)
		w.Blocks = append(w.Blocks, r.Blocks)
		starts = append(starts, r.Start)
	}
	if b.BlockTokens == 0 {
		w.Blocks = nil
	}
	if len(w.Requests) == 0 {
		// A summary-only file: its mean lengths, as many requests as it says or 100.
		p, o := b.MeanLengths()
		if p <= 0 {
			p, guessedP = float64(prompt), 1
		}
		if o <= 0 {
			o, guessedO = float64(output), 1
		}
		n := 100
		switch {
		case b.Duration > 0 && b.Throughput > 0:
			n = max(1, min(sim.MaxRequests, int(math.Round(b.Throughput*b.Duration))))
		case b.Duration > 0 && b.Rate > 0 && !math.IsInf(b.Rate, 0):
			n = max(1, min(sim.MaxRequests, int(b.Rate*b.Duration)))
		}
		for i := range n {
			w.Requests = append(w.Requests, sim.Request{ID: i, Prompt: int(math.Round(p)), Output: int(math.Round(o))})
		}
		w.Notes = append(w.Notes, fmt.Sprintf("the file has no per-request data: %d requests of its mean lengths", n))
		starts = nil
	}
	if guessedP > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d requests state no prompt length: %d tokens assumed", guessedP, prompt))
	}
	if guessedO > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d requests state no output length: %d tokens assumed", guessedO, output))
	}
	switch {
	case b.Concurrency > 0:
		w.Kind, w.Concurrency = "closed", b.Concurrency
	case starts != nil && b.HasStarts():
		w.Kind = "replay"
		first := math.Inf(1)
		for _, s := range starts {
			first = math.Min(first, s)
		}
		for i := range w.Requests {
			w.Requests[i].Arrival = starts[i] - first
		}
	case math.IsInf(b.Rate, 1):
		w.Kind = "burst"
	default:
		rate := b.Rate
		if rate <= 0 {
			rate = b.AchievedRate()
			if rate <= 0 {
				return w, fmt.Errorf("the file states no rate, concurrency, start times or duration: nothing says how the requests arrived")
			}
			w.Notes = append(w.Notes, fmt.Sprintf("the file states no rate: Poisson at the %.3g req/s it achieved", rate))
		}
		arr, err := sim.Poisson(len(w.Requests), rate, 1, 1, seed)
		if err != nil {
			return w, err
		}
		w.Kind = "poisson"
		for i := range w.Requests {
			w.Requests[i].Arrival = arr[i].Arrival
		}
	}
	return w, nil
}

// Simulate runs a benchmark workload to completion: a closed loop with
// [sim.RunClosed] (the next request, in the file's order, sent the moment
// one ends), any other kind with [sim.Run].
func Simulate(cfg sim.Config, w Workload) (*sim.Outcome, error) {
	if w.Kind != "closed" {
		return sim.Run(cfg, w.Requests)
	}
	return sim.RunClosed(cfg, w.Requests, w.Concurrency)
}
