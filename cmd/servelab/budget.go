package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"servelab/sim"
)

// A run's memory budget, checked from the workload before it starts, as the
// page bounds its runs. Every request's result and every token's time are
// kept; flags that are each in range can still ask for far more (4096 lab
// streams for an hour: billions of requests, 7 GB in 40 s). The per-item
// sizes are peak bytes measured here (/usr/bin/time, this machine) for runs
// of 1M requests and 20M tokens, rounded up: the closed loop also keeps
// every arrival and each request's stream state.
const (
	memBudget         = 1.8e9 // bytes of estimated peak (an upper bound), under the 2 GB goal
	openBytesPerReq   = 400   // Poisson or trace
	openBytesPerToken = 60
	labBytesPerReq    = 1400 // the lab's closed loop
	labBytesPerToken  = 110
)

// checkOpenLoop refuses a Poisson or trace workload whose requests and
// outputs would need more than the budget; from names the flags that made
// it, for the message.
func checkOpenLoop(reqs []sim.Request, from string) error {
	tokens := 0.0
	for _, r := range reqs {
		tokens += float64(r.Output)
	}
	if est := openBytesPerReq*float64(len(reqs)) + openBytesPerToken*tokens; est > memBudget {
		return fmt.Errorf("the workload (%s) keeps %d requests and %.3g output tokens, about %.1f GB, over the %.1f GB a run may use: lower them",
			from, len(reqs), tokens, est/1e9, memBudget/1e9)
	}
	return nil
}

// checkLab refuses a closed-loop lab workload that could need more than the
// budget. How many requests it makes follows from the engine's speed, so
// they are bounded from above: no iteration is faster than one decode token
// (tmin) and no token is computed faster than its FLOPs allow (perTok); a
// short request takes at least ShortOutputLen iterations, and its prompt
// plus output in tokens. like names the --like file whose config set w.
func checkLab(w sim.LabWorkload, step sim.StepModel, like string) error {
	var one sim.Work
	one.AddDecode(1)
	c := step.Price(one)
	tmin, perTok := c.Seconds, c.ComputeTime
	if !(tmin > 0) || !(perTok > 0) || !(w.Duration > 0) {
		return nil // sim.RunLab names bad values itself
	}
	streams, in, out := float64(w.ShortConcurrency), float64(max(w.ShortInputLen, 0)), float64(max(w.ShortOutputLen, 1))
	byIterations := streams * (w.Duration/(out*tmin) + 1)
	byCompute := w.Duration/(perTok*(in+out)) + streams
	short := math.Min(byIterations, byCompute)
	requests := short + float64(w.LongCount)
	tokens := short*out + float64(w.LongCount)*float64(w.LongOutputLen)
	if est := labBytesPerReq*requests + labBytesPerToken*tokens; est > memBudget {
		names := "--duration or --short-concurrency"
		if like != "" {
			names = "config.duration or config.short_concurrency in " + like
		}
		return fmt.Errorf("this lab run (%d streams for %g s) could make about %.3g requests and %.3g output tokens on this model and GPU, about %.1f GB, over the %.1f GB a run may use: lower %s",
			w.ShortConcurrency, w.Duration, requests, tokens, est/1e9, memBudget/1e9, names)
	}
	return nil
}

// limitMemory makes the garbage collector keep the process under the budget
// (Go lets the heap grow to twice what is live between collections), unless
// GOMEMLIMIT says otherwise. The estimates above keep what is live below it.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(memBudget))
	}
}
