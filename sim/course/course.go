// Package course computes the live tables of the three chapters after the
// interference lecture (issue 29): "a cache hit is not a speed-up" (prefix
// caching), "where should this request go?" (routing across replicas) and
// "speculation is a bet on idle compute" (speculative decoding). Each
// function takes the experiment a student has open, varies the one thing
// the chapter moves, runs the simulator for every row and computes the
// chapter's surprise from the rows: nothing in a table is written in.
//
// It imports sim and sim/scenario; front ends (cmd/servelab, wasm/play)
// import it. Nothing in sim imports it.
package course

import (
	"errors"
	"fmt"

	"servelab/sim"
	"servelab/sim/scenario"
)

// PrefixRow is one output length of the prefix chapter, run with prefix
// caching off and on.
type PrefixRow struct {
	Output   int     `json:"output"`
	HitRatio float64 `json:"hit_ratio"` // with caching on
	// TTFT P50 and output throughput (tokens/s) off and on.
	TTFTOff       float64 `json:"ttft_p50_off"`
	TTFTOn        float64 `json:"ttft_p50_on"`
	ThroughputOff float64 `json:"throughput_off"`
	ThroughputOn  float64 `json:"throughput_on"`
	// Gain is ThroughputOn/ThroughputOff - 1.
	Gain float64 `json:"gain"`
	// PrefillShare is the share of the uncached run's time its steps spent
	// on prefill beyond the decodes they carried: all the time caching can
	// take away, so Gain stays below PrefillShare/(1-PrefillShare).
	PrefillShare float64 `json:"prefill_share"`
}

// PrefixTable is the prefix chapter's table and its surprise: Surprise is
// the row whose hit ratio most exceeds its throughput gain.
type PrefixTable struct {
	Concurrency int         `json:"concurrency"`
	Rows        []PrefixRow `json:"rows"`
	Surprise    int         `json:"surprise"`
}

// Prefix runs x's workload (its system prompt and sessions, its lengths
// but for the output, which each row sets) as a closed loop of
// concurrency requests, as a benchmark at fixed concurrency does, with
// prefix caching off and on. It returns an error when x cannot be built
// or its workload shares no prefix.
func Prefix(x scenario.Experiment, outputs []int, concurrency int) (*PrefixTable, error) {
	if !x.SharesPrefixes() {
		return nil, errors.New("the prefix chapter needs prompts that share a prefix: a system prompt (--system-prompt) or sessions (--turns)")
	}
	if concurrency < 1 || len(outputs) == 0 {
		return nil, fmt.Errorf("the prefix chapter needs a concurrency >= 1 and output lengths, got %d and %v", concurrency, outputs)
	}
	t := &PrefixTable{Concurrency: concurrency}
	for _, out := range outputs {
		x.Output, x.OutputDist = out, ""
		row := PrefixRow{Output: out}
		for _, on := range []bool{false, true} {
			x.PrefixCaching = on
			b, err := x.Build()
			if err != nil {
				return nil, err
			}
			reqs, err := x.RequestsAt(x.Rate)
			if err != nil {
				return nil, err
			}
			c, err := closedLoop(b.Config, reqs, concurrency)
			if err != nil {
				return nil, err
			}
			if on {
				row.TTFTOn, row.ThroughputOn, row.HitRatio = c.ttft, c.throughput, c.prefix.HitRatio()
			} else {
				row.TTFTOff, row.ThroughputOff, row.PrefillShare = c.ttft, c.throughput, c.prefillShare
			}
		}
		if row.ThroughputOff > 0 {
			row.Gain = row.ThroughputOn/row.ThroughputOff - 1
		}
		t.Rows = append(t.Rows, row)
	}
	for i, r := range t.Rows {
		if best := t.Rows[t.Surprise]; r.HitRatio-r.Gain > best.HitRatio-best.Gain {
			t.Surprise = i
		}
	}
	return t, nil
}

// closed is what the prefix chapter reads of one closed-loop run.
type closed struct {
	ttft, throughput, prefillShare float64
	prefix                         *sim.PrefixStats
}

// closedLoop runs reqs as sim.RunClosed does (concurrency at once, the
// next when one ends), noting how much of the time the steps spent on
// prefill beyond the decode step of the same batch.
func closedLoop(cfg sim.Config, reqs []sim.Request, concurrency int) (closed, error) {
	var total, extra float64
	out, err := sim.RunClosedEach(cfg, reqs, concurrency, func(it *sim.Iteration) {
		total += it.Duration
		if it.Prefill > 0 {
			// (the decodes' own step, over no context: an upper bound on its
			// prefill's share)
			extra += it.Duration - cfg.Step.Decode(it.Decodes, 0).Seconds
		}
	})
	if err != nil {
		return closed{}, err
	}
	s := sim.Summarize(out.Results)
	c := closed{ttft: s.TTFTP50, throughput: s.Throughput, prefix: out.Prefix}
	if total > 0 {
		c.prefillShare = extra / total
	}
	return c, nil
}

// RouteRow is one router of the routing chapter.
type RouteRow struct {
	Route    string  `json:"route"`
	Stale    float64 `json:"stale"` // seconds old the router's load figures are
	HitRatio float64 `json:"hit_ratio"`
	TTFTP50  float64 `json:"ttft_p50"`
	TTFTP90  float64 `json:"ttft_p90"`
	TTFTP99  float64 `json:"ttft_p99"`
	// Busiest is the largest share of the requests one replica got, Herd
	// the longest run of consecutive requests sent to the same replica.
	Busiest float64 `json:"busiest"`
	Herd    int     `json:"herd"`
	// Choices is the replica each request went to (the lanes' colours).
	Choices []int `json:"choices"`
}

// RouteTable is the routing chapter's table: each router on fresh load
// figures, and least-outstanding on figures stale seconds old. Best is the
// row with the lowest TTFT P90; HerdRatio is the stale least-outstanding
// row's longest herd over the fresh one's.
type RouteTable struct {
	Replicas  int        `json:"replicas"`
	Rows      []RouteRow `json:"rows"`
	Best      int        `json:"best"`
	HerdRatio float64    `json:"herd_ratio"`
}

// RouteSetting is a router and the age of the load figures it acts on.
type RouteSetting struct {
	Route sim.Route
	Stale float64
}

// RouteSettings are the routing chapter's rows: each router on fresh load
// figures, then least-outstanding on figures stale seconds old.
func RouteSettings(stale float64) []RouteSetting {
	return []RouteSetting{{sim.RouteRoundRobin, 0}, {sim.RouteLeastOutstanding, 0}, {sim.RoutePrefixAware, 0}, {sim.RouteLeastOutstanding, stale}}
}

// Routing runs x's workload over x.Replicas replicas (at least 2) under
// each router, and least-outstanding again with load figures stale
// seconds old.
func Routing(x scenario.Experiment, stale float64) (*RouteTable, error) {
	if x.Replicas < 2 {
		return nil, fmt.Errorf("the routing chapter needs --replicas of at least 2, got %d", x.Replicas)
	}
	t := &RouteTable{Replicas: x.Replicas}
	for _, st := range RouteSettings(stale) {
		row, err := RouteOne(x, st.Route, st.Stale)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	for i, r := range t.Rows {
		if r.TTFTP90 < t.Rows[t.Best].TTFTP90 {
			t.Best = i
		}
	}
	if fresh := t.Rows[1].Herd; fresh > 0 {
		t.HerdRatio = float64(t.Rows[3].Herd) / float64(fresh)
	}
	return t, nil
}

// RouteOne runs x's workload over its replicas under one router, acting
// on load figures stale seconds old: one row of Routing (the page runs
// them a row at a time).
func RouteOne(x scenario.Experiment, route sim.Route, stale float64) (RouteRow, error) {
	if x.Replicas < 2 {
		return RouteRow{}, fmt.Errorf("the routing chapter needs --replicas of at least 2, got %d", x.Replicas)
	}
	reqs, err := x.RequestsAt(x.Rate)
	if err != nil {
		return RouteRow{}, err
	}
	x.Route, x.RouteStale = string(route), stale
	b, err := x.Build()
	if err != nil {
		return RouteRow{}, err
	}
	out, err := sim.RunReplicas(*b.Replicas, reqs)
	if err != nil {
		return RouteRow{}, err
	}
	s := out.Summary()
	row := RouteRow{Route: string(route), Stale: stale, TTFTP50: s.TTFTP50, TTFTP90: s.TTFTP90, TTFTP99: s.TTFTP99, Choices: out.Choices}
	if out.Prefix != nil {
		row.HitRatio = out.Prefix.HitRatio()
	}
	most, run := 0, 0
	for i, k := range out.Choices {
		if i > 0 && k == out.Choices[i-1] {
			run++
		} else {
			run = 1
		}
		row.Herd = max(row.Herd, run)
	}
	for _, r := range out.Replicas {
		most = max(most, r.Requests)
	}
	if len(reqs) > 0 {
		row.Busiest = float64(most) / float64(len(reqs))
	}
	return row, nil
}

// SpecSide is one side of the speculation chapter's row at rate: x's run
// without (on false) or with its speculative decoding, its P50 TPOT and
// output throughput. The side without is NoSpec(x)'s run, whatever x's
// drafts and acceptance, so a page may keep it while those move.
func SpecSide(x scenario.Experiment, rate float64, on bool) (tpot, throughput float64, err error) {
	if !on {
		x = NoSpec(x)
	}
	b, err := x.Build()
	if err != nil {
		return 0, 0, err
	}
	reqs, err := x.RequestsAt(rate)
	if err != nil {
		return 0, 0, err
	}
	out, err := sim.Run(b.Config, reqs)
	if err != nil {
		return 0, 0, err
	}
	s := out.Summary()
	return s.TPOTP50, s.Throughput, nil
}

// SpeedUp is what one user sees of speculation: the TPOT without over the
// TPOT with (0 where the run with produced no TPOT).
func SpeedUp(tpotOff, tpotOn float64) float64 {
	if tpotOn <= 0 {
		return 0
	}
	return tpotOff / tpotOn
}

// NoSpec is x without speculative decoding (every setting of it cleared).
func NoSpec(x scenario.Experiment) scenario.Experiment {
	x.SpecTokens, x.SpecAccept, x.SpecAcceptList, x.SpecDraft, x.SpecDraftCost = 0, 0, "", "", 0
	return x
}

// SpecRow is one arrival rate of the speculation chapter, run without and
// with x's speculative decoding.
type SpecRow struct {
	Rate          float64 `json:"rate"`
	TPOTOff       float64 `json:"tpot_p50_off"`
	TPOTOn        float64 `json:"tpot_p50_on"`
	ThroughputOff float64 `json:"throughput_off"`
	ThroughputOn  float64 `json:"throughput_on"`
	// SpeedUp is TPOTOff/TPOTOn: what one user sees.
	SpeedUp float64 `json:"speed_up"`
}

// SpecTable is the speculation chapter's table. Expected is the formula's
// tokens per step; Crossover is the first row whose speed-up is below 1
// (-1: none within the rates).
type SpecTable struct {
	Expected  float64   `json:"expected_tokens_per_step"`
	Rows      []SpecRow `json:"rows"`
	Crossover int       `json:"crossover"`
}

// Speculative runs x's workload at each rate without and with its
// speculative decoding (x.SpecTokens must be at least 1).
func Speculative(x scenario.Experiment, rates []float64) (*SpecTable, error) {
	if x.SpecTokens < 1 {
		return nil, fmt.Errorf("the speculation chapter needs --spec-tokens of at least 1, got %d", x.SpecTokens)
	}
	if len(rates) == 0 {
		return nil, errors.New("the speculation chapter needs rates")
	}
	b, err := x.Build()
	if err != nil {
		return nil, err
	}
	t := &SpecTable{Expected: b.Config.Spec.ExpectedTokens(), Crossover: -1}
	for _, rate := range rates {
		row := SpecRow{Rate: rate}
		if row.TPOTOff, row.ThroughputOff, err = SpecSide(x, rate, false); err != nil {
			return nil, err
		}
		if row.TPOTOn, row.ThroughputOn, err = SpecSide(x, rate, true); err != nil {
			return nil, err
		}
		row.SpeedUp = SpeedUp(row.TPOTOff, row.TPOTOn)
		if t.Crossover < 0 && row.SpeedUp < 1 {
			t.Crossover = len(t.Rows)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
