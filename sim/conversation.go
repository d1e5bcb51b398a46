package sim

import (
	"cmp"
	"fmt"
	"slices"
)

// Conversations is an open-loop workload whose prompts share prefixes:
// every prompt starts with the same System-token system prompt, and a
// session of Turns turns sends, at each turn, its whole history (the system
// prompt, every earlier message and answer) plus a new Message-token
// message. Sessions start as Poisson arrivals at Rate/Turns per second (so
// requests come at Rate on average); each later turn arrives a think time
// (exponential, mean Think seconds) after the one before it. The think time
// runs from the earlier turn's arrival, not its answer, so that the
// workload is one list of requests every driver takes: keep it longer than
// a turn's latency, or a turn's history is not all cached yet when it
// comes. Requests carry their content's block names (Request.Blocks) over
// prompt and answer.
//
// With System 0 and Turns 1 it draws what PoissonLengths draws (its
// arrivals and lengths), Blocks aside.
type Conversations struct {
	Requests int     // requests in all (the last session may be cut short)
	Rate     float64 // requests/s on average
	System   int     // tokens of the system prompt every prompt starts with (0: none)
	Message  Lengths // tokens of each new user message
	Output   Lengths // tokens of each answer
	Turns    int     // turns per session (1: independent requests)
	Think    float64 // mean seconds between a session's turns
	Seed     uint64
}

// Build returns the workload's requests in arrival order, IDs 0.. in that
// order, or an error naming a setting out of range.
func (c Conversations) Build() ([]Request, error) {
	if c.Requests < 1 || c.Requests > MaxRequests {
		return nil, fmt.Errorf("requests must be in 1..%d, got %d", MaxRequests, c.Requests)
	}
	if !(c.Rate > 0) || c.Rate > MaxRate {
		return nil, fmt.Errorf("rate must be in (0, %g] req/s, got %g", MaxRate, c.Rate)
	}
	if c.System < 0 || c.System > MaxTokens {
		return nil, fmt.Errorf("system prompt must be in 0..%d tokens, got %d", MaxTokens, c.System)
	}
	if c.Turns < 1 || c.Turns > 1000 {
		return nil, fmt.Errorf("turns per session must be in 1..1000, got %d", c.Turns)
	}
	if !(c.Think >= 0) || c.Think > 1e6 {
		return nil, fmt.Errorf("think time must be in [0, 1e6] s, got %g", c.Think)
	}
	if err := c.Message.validate("message"); err != nil {
		return nil, err
	}
	if err := c.Output.validate("output"); err != nil {
		return nil, err
	}
	arrivals := newRand(c.Seed) // as PoissonLengths draws: the gap, then the prompt, then the output
	lens := newRand(c.Seed ^ 0x9e3779b97f4a7c15)
	think := newRand(c.Seed ^ 0x7f4a7c159e3779b9)
	sessionRate := c.Rate / float64(c.Turns)
	const system = 1 // the system prompt's segment ID; messages and answers count from 2
	reqs := make([]Request, 0, c.Requests)
	start := 0.0
	for s := 0; len(reqs) < c.Requests; s++ {
		start += arrivals.ExpFloat64() / sessionRate
		at := start
		var segs []Segment
		if c.System > 0 {
			segs = append(segs, Segment{ID: system, Tokens: c.System})
		}
		history := c.System
		for turn := 0; turn < c.Turns && len(reqs) < c.Requests; turn++ {
			if turn > 0 {
				at += think.ExpFloat64() * c.Think
			}
			msg, out := c.Message.draw(lens), c.Output.draw(lens)
			id := 2 + 2*(uint64(s)*uint64(c.Turns)+uint64(turn))
			segs = append(segs, Segment{ID: id, Tokens: msg}, Segment{ID: id + 1, Tokens: out})
			prompt := history + msg
			if prompt > MaxTokens {
				return nil, fmt.Errorf("session %d's turn %d has a %d-token prompt: over %d (fewer turns or shorter messages)", s, turn+1, prompt, MaxTokens)
			}
			reqs = append(reqs, Request{Arrival: at, Prompt: prompt, Output: out, Blocks: ChainHashes(segs, HashBlockTokens)})
			history = prompt + out
		}
	}
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for i := range reqs {
		reqs[i].ID = i
	}
	return reqs, nil
}
