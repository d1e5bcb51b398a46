package main

import (
	"os"
	"runtime/debug"

	"servelab/sim"
)

// checkOpenLoop refuses a Poisson or trace workload whose requests and
// outputs would need more than sim.MemBudget; from names the flags that
// made it, for the message.
func checkOpenLoop(reqs []sim.Request, from string) error { return sim.CheckOpenLoop(reqs, from) }

// checkLab refuses a closed-loop lab workload that could need more than
// sim.MemBudget on step (sim.CheckLab), naming the flags to lower, or the
// keys of the --like file (like) whose config set w.
func checkLab(w sim.LabWorkload, step sim.StepModel, like string) error {
	names := "--duration or --short-concurrency"
	if like != "" {
		names = "config.duration or config.short_concurrency in " + like
	}
	return sim.CheckLab(w, step, names)
}

// limitMemory makes the garbage collector keep the process under the budget
// (Go lets the heap grow to twice what is live between collections), unless
// GOMEMLIMIT says otherwise. The estimates of sim.CheckLab and
// sim.CheckOpenLoop keep what is live below it.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(sim.MemBudget))
	}
}
