package sim

import "math"

// A run's memory budget, checked from the workload before it starts, as the
// page bounds its runs. Every request's result and every token's time are
// kept; settings that are each in range can still ask for far more (4096
// lab streams for an hour: billions of requests, 7 GB in 40 s). The
// per-item sizes are peak bytes measured (/usr/bin/time) for runs of 1M
// requests and 20M tokens, rounded up: the closed loop also keeps every
// arrival and each request's stream state. The CLI's runs, `servelab
// calibrate` and the page's calibration all check against it.
const (
	MemBudget         = 1.8e9 // bytes of estimated peak (an upper bound), under the 2 GB goal
	openBytesPerReq   = 400   // Poisson or trace
	openBytesPerToken = 60
	labBytesPerReq    = 1400 // the lab's closed loop
	labBytesPerToken  = 110
)

// CheckOpenLoop returns an error when a Poisson or trace workload's requests
// and outputs would need more than MemBudget, nil otherwise; from names
// the settings that made it, for the message.
func CheckOpenLoop(reqs []Request, from string) error {
	tokens := 0.0
	for _, r := range reqs {
		tokens += float64(r.Output)
	}
	if est := openBytesPerReq*float64(len(reqs)) + openBytesPerToken*tokens; est > MemBudget {
		return Refuse("budget.open", "the workload (%s) keeps %d requests and %.3g output tokens, about %.1f GB, over the %.1f GB a run may use: lower them",
			from, len(reqs), tokens, est/1e9, MemBudget/1e9)
	}
	return nil
}

// CheckLab returns an error when a closed-loop lab workload could need more
// than MemBudget on step, nil otherwise (and for values RunLab refuses
// itself); lower names the settings to lower, for the message. How many
// requests it makes follows from the engine's speed, so they are bounded
// from above: no iteration is faster than one decode token (tmin) and no
// token is computed faster than its FLOPs allow (perTok); a short request
// takes at least ShortOutputLen iterations, and its prompt plus output in
// tokens.
func CheckLab(w LabWorkload, step StepModel, lower string) error {
	requests, tokens, est := LabBytes(w, step)
	if est > MemBudget {
		return Refuse("budget.lab", "this lab run (%d streams for %g s) could make about %.3g requests and %.3g output tokens on this model and GPU, about %.1f GB, over the %.1f GB a run may use: lower %s",
			w.ShortConcurrency, w.Duration, requests, tokens, est/1e9, MemBudget/1e9, lower)
	}
	return nil
}

// LabBytes returns the upper bounds CheckLab holds against the budget: the
// requests and output tokens a lab workload could make on step, and the
// bytes they would keep (zeros when step or w cannot be priced).
func LabBytes(w LabWorkload, step StepModel) (requests, tokens, bytes float64) {
	var one Work
	one.AddDecode(1)
	c := step.Price(one)
	tmin, perTok := c.Seconds, c.ComputeTime
	if !(tmin > 0) || !(perTok > 0) || !(w.Duration > 0) {
		return 0, 0, 0
	}
	streams, in, out := float64(w.ShortConcurrency), float64(max(w.ShortInputLen, 0)), float64(max(w.ShortOutputLen, 1))
	byIterations := streams * (w.Duration/(out*tmin) + 1)
	byCompute := w.Duration/(perTok*(in+out)) + streams
	short := math.Min(byIterations, byCompute)
	requests = short + float64(w.LongCount)
	tokens = short*out + float64(w.LongCount)*float64(w.LongOutputLen)
	return requests, tokens, labBytesPerReq*requests + labBytesPerToken*tokens
}
