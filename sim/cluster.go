package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Disaggregated serving (DistServe): x prefill instances and y decode
// instances. A request is prefilled on one prefill instance, which emits its
// first token; its KV cache then crosses a link (prompt tokens x KV bytes per
// token / link bandwidth) to one decode instance, which produces the rest.
//
// Prefill instances never wait on decode instances, so RunDisaggregated runs
// the prefill side to the end first and then the decode side, each with the
// ordinary engine (PrefillOnlyPolicy and DecodeOnlyPolicy), driven online so
// that the router sees each instance's load at the moment a request comes.

// MaxInstances bounds the instances of one phase in a cluster.
const MaxInstances = 1024

// Router names how requests are spread over the instances of one phase.
type Router string

// The routers.
const (
	// LeastLoaded sends a request to the instance with the fewest tokens of
	// this phase still to do (prompt tokens on prefill instances, output
	// tokens on decode instances); ties go to the fewest requests, then the
	// lowest index.
	LeastLoaded Router = "least-loaded"
	// RoundRobin sends the i-th request of a phase to instance i mod n.
	RoundRobin Router = "round-robin"
)

// RouterNames lists the routers ParseRouter accepts.
func RouterNames() []string { return []string{string(LeastLoaded), string(RoundRobin)} }

// ParseRouter reads a router name ("" means least-loaded).
func ParseRouter(name string) (Router, error) {
	switch Router(strings.ToLower(strings.TrimSpace(name))) {
	case LeastLoaded, "":
		return LeastLoaded, nil
	case RoundRobin, "rr":
		return RoundRobin, nil
	}
	return "", fmt.Errorf("unknown router %q; valid: %s", name, strings.Join(RouterNames(), ", "))
}

// Load is what a router sees of one instance when a request arrives.
type Load struct {
	Requests int // requests sent there that have not finished this phase
	Tokens   int // tokens of this phase they still need
}

// Pick chooses an instance for the seq-th request (counting from 0) of a phase.
func (r Router) Pick(seq int, loads []Load) int {
	if r == RoundRobin {
		return seq % len(loads)
	}
	best := 0
	for i, l := range loads[1:] {
		b := loads[best]
		if l.Tokens < b.Tokens || (l.Tokens == b.Tokens && l.Requests < b.Requests) {
			best = i + 1
		}
	}
	return best
}

// Cluster is a disaggregated deployment: Prefill prefill-only instances and
// Decode decode-only instances of the same model and GPU.
type Cluster struct {
	Step    StepModel
	Prefill int     // prefill instances, 1..MaxInstances
	Decode  int     // decode instances, 1..MaxInstances
	LinkBW  float64 // KV transfer bandwidth, bytes/s; 0: Step.GPU.LinkBW; +Inf: free transfer
	Router  Router  // "" means LeastLoaded
	Limits  Limits  // each instance's limits
	// PrefillMaxTokens caps one prefill step's tokens; 0: DefaultMaxPrefillTokens.
	PrefillMaxTokens int
	RecordTokens     bool // keep every token's time per request
	Trace            bool // keep every instance's iterations
}

// String reads like the deployment's description.
func (c Cluster) String() string {
	bw := c.LinkBW
	if bw == 0 {
		bw = c.Step.GPU.LinkBW
	}
	r := c.Router
	if r == "" {
		r = LeastLoaded
	}
	return fmt.Sprintf("%dP+%dD, KV link %.4g GB/s, %s router", c.Prefill, c.Decode, bw/1e9, r)
}

// Placement is where one request went and when its KV cache moved.
type Placement struct {
	Prefill  int     `json:"prefill"`   // prefill instance, -1 if never placed
	Decode   int     `json:"decode"`    // decode instance, -1 if it needed none or never got there
	Transfer float64 `json:"transfer"`  // KV transfer seconds
	KVArrive float64 `json:"kv_arrive"` // when the KV cache reached the decode instance
}

// InstanceRun is one instance's share of a cluster run.
type InstanceRun struct {
	Role       string      `json:"role"` // "prefill" or "decode"
	Index      int         `json:"index"`
	Requests   int         `json:"requests"` // requests sent to it
	Steps      int         `json:"steps"`
	End        float64     `json:"end"`
	Busy       float64     `json:"busy"`                 // seconds spent in iterations
	Iterations []Iteration `json:"iterations,omitempty"` // with Cluster.Trace; item IDs are submission indices
}

// ClusterOutcome is a disaggregated run: per-request results in submission
// order (as Run gives them, so Summarize, Attainment and Goodput apply
// unchanged), where each request went, and every instance's run.
type ClusterOutcome struct {
	Outcome
	Placements []Placement   `json:"placements"`
	Instances  []InstanceRun `json:"instances"`
	cut        bool          // a search's run ended after the prefill side: too many missed the TTFT objective
}

// event is work an instance finished at end: what a router stops counting then.
type event struct {
	end              float64
	tokens, requests int
}

// instance drives one engine online for the router.
type instance struct {
	e      *Engine
	run    InstanceRun
	load   Load
	events []event // finished work not yet past the router's clock (from head), in time order
	head   int
	subs   []int   // submission indices of the requests sent here, in order
	out    Outcome // the engine's own run, as Run would record it
	trace  bool
	onIter func(*Iteration)
	mem    *scratch // where its queues' memory comes from and goes back to (nil: none)
	// fast: the run keeps no trace and no token times, so the engine builds
	// no items, advances runs of decode steps at once and settles its batch
	// lazily; the decode side's results are read from the engine at the end.
	fast bool
	// lone: the only instance of its phase, so the router never reads its
	// load and its finished work is not queued.
	lone bool
}

// decodeRun queues the work of a run of decode steps taken at once as step queues each.
func (in *instance) decodeRun(n int, durs, ends []float64, done int) {
	for j := range durs {
		in.addEvent(event{end: ends[j], tokens: n})
	}
	in.events[len(in.events)-1].requests = done // only the last step finishes any
}

// advance runs every iteration that starts before t. An iteration cannot
// take in a request arriving later than its start, so the engine then looks
// exactly as it did at t (the iteration in flight at t counts as not done).
func (in *instance) advance(t float64) {
	for in.e.Busy() && in.e.Now() < t {
		if !in.step(t) {
			return
		}
	}
}

// step runs one iteration, or a run of decode steps that start before
// until, and reports false when the engine cannot go on.
func (in *instance) step(until float64) bool {
	if in.fast {
		if k := in.e.decodeRun(until); k > 0 {
			in.out.Steps += k
			return true
		}
	}
	it, ok := in.e.Step()
	if !ok {
		return false
	}
	if !in.lone {
		in.addEvent(event{end: it.End(), tokens: it.Decodes + it.Prefill, requests: in.e.done})
	}
	if in.onIter != nil {
		in.onIter(it)
	}
	in.out.record(it, in.trace)
	return true
}

// release hands the instance's queues' memory back for the next run.
func (in *instance) release() {
	if in.mem != nil {
		in.mem.events, in.mem.subs = in.events[:0], in.subs[:0]
	}
}

// addEvent queues finished work. The queue is read from its head (loadAt):
// a full one moves down to its start before it grows, so a run's queue
// keeps one array.
func (in *instance) addEvent(ev event) {
	if len(in.events) == cap(in.events) && in.head > 0 {
		n := copy(in.events, in.events[in.head:])
		in.events, in.head = in.events[:n], 0
	}
	in.events = append(in.events, ev)
}

// loadAt is the instance's outstanding work at t (after advance(t)).
func (in *instance) loadAt(t float64) Load {
	k := in.head
	for ; k < len(in.events) && in.events[k].end <= t; k++ {
		in.load.Tokens -= in.events[k].tokens
		in.load.Requests -= in.events[k].requests
	}
	in.head = k
	if !in.e.Busy() && k == len(in.events) {
		in.load = Load{} // forget work that was rejected rather than done
	}
	return in.load
}

// dispatch routes requests in time order to instances: at each arrival time
// every instance is brought up to that time, then the requests arriving then
// are routed and submitted. submit returns the tokens of work it added (or
// false on rejection). Finally every instance runs to the end.
func dispatch(ins []*instance, router Router, order []int, at func(int) float64, submit func(in *instance, i int) (int, bool)) {
	loads := make([]Load, len(ins))
	for g := 0; g < len(order); {
		t := at(order[g])
		for _, in := range ins {
			in.advance(t)
		}
		if len(ins) > 1 {
			for i, in := range ins {
				loads[i] = in.loadAt(t)
			}
		}
		for ; g < len(order) && at(order[g]) == t; g++ {
			k := 0 // (a lone instance takes every request: no load to read)
			if len(ins) > 1 {
				k = router.Pick(g, loads)
			}
			in := ins[k]
			in.run.Requests++
			in.subs = append(in.subs, order[g])
			if tokens, ok := submit(in, order[g]); ok {
				in.load.Tokens += tokens
				in.load.Requests++
				loads[k] = in.load
			}
		}
	}
	for _, in := range ins {
		for in.step(math.Inf(1)) {
		}
	}
}

// RunDisaggregated simulates reqs on the cluster. Each request's TTFT comes
// from its prefill instance; it reaches a decode instance at its first-token
// time plus the KV transfer, and its later tokens come from there.
func RunDisaggregated(c Cluster, reqs []Request) (*ClusterOutcome, error) {
	return runDisaggregated(c, reqs, nil)
}

// clusterScratch is scratch for a search's cluster runs: every instance's,
// and the per-request arrays. A run with it returns results in it, valid
// until the next such run.
type clusterScratch struct {
	res        []Result
	placements []Placement
	pre, dec   []scratch
	// ttft, when set, is a search's TTFT objective and its budget of
	// misses: a run in which more missed it at the prefill side is cut
	// there (ClusterOutcome.cut), its answer known.
	ttft   float64
	budget int
	order  []int     // requests in the order they reach a phase
	keys   []float64 // their times, for the sort
}

// runDisaggregated is RunDisaggregated, reusing sc's memory when sc is not nil.
func runDisaggregated(c Cluster, reqs []Request, sc *clusterScratch) (*ClusterOutcome, error) {
	step, link, router, err := c.check(len(reqs))
	if err != nil {
		return nil, err
	}
	for i, r := range reqs {
		if !finite(r.Arrival) || r.Arrival < 0 {
			return nil, fmt.Errorf("request %d (id %d): arrival must be a finite time >= 0 s, got %g", i, r.ID, r.Arrival)
		}
	}
	maxTok := c.PrefillMaxTokens
	if maxTok == 0 {
		maxTok = DefaultMaxPrefillTokens
	}
	n := len(reqs)
	out := &ClusterOutcome{}
	var res []Result
	if sc != nil {
		if cap(sc.res) < n {
			sc.res, sc.placements = make([]Result, n), make([]Placement, n)
		}
		res, out.Placements = sc.res[:n], sc.placements[:n]
	} else {
		res, out.Placements = make([]Result, n), make([]Placement, n)
	}
	for i, r := range reqs {
		res[i] = Result{ID: r.ID, Arrival: r.Arrival - step.Physics.ReqLatency, Prompt: r.Prompt, Output: r.Output} // as Engine.Results
		out.Placements[i] = Placement{Prefill: -1, Decode: -1}
	}

	// newPhase makes count instances; items is about how many trace items
	// and steps the phase will record (so the trace is not copied as it grows).
	newPhase := func(role string, count int, p Policy, items, steps int, scs *[]scratch) ([]*instance, error) {
		ins := make([]*instance, count)
		if sc != nil && len(*scs) < count {
			*scs = make([]scratch, count)
		}
		for k := range ins {
			e, err := NewEngine(Config{Step: step, Policy: p, Limits: c.Limits})
			if err != nil {
				return nil, err
			}
			in := &instance{e: e, run: InstanceRun{Role: role, Index: k}, trace: c.Trace, fast: !c.Trace && !c.RecordTokens, lone: count == 1}
			if in.fast {
				e.noItems = true
				e.allowLazy()
				if !in.lone {
					e.runHook = in.decodeRun
				}
			}
			if sc != nil {
				// Room for twice an even share; a busier instance grows its own.
				m := &(*scs)[k]
				e.useScratch(m, min(n, 2*(n/count)+256))
				in.events, in.subs, in.mem = m.events[:0], m.subs[:0], m
			} else {
				e.reserve(n/count + 16)
			}
			if c.Trace {
				in.out.items = make([]Item, 0, min(items/count+64, MaxRequests))
				in.out.Iterations = make([]Iteration, 0, min(steps/count+64, MaxRequests))
				in.out.counts = make([]int, 0, cap(in.out.Iterations))
			}
			ins[k] = in
		}
		return ins, nil
	}
	// Inside the engines a request's ID is its submission index, so items map
	// back to results even when callers reuse IDs.
	var keys []float64
	order := make([]int, 0, n)
	if sc != nil {
		keys, order = sc.keys, slices.Grow(sc.order[:0], n)
		defer func() { sc.keys, sc.order = keys, order }()
	}
	byTime := func(idx []int, at func(int) float64) {
		keys = slices.Grow(keys[:0], len(idx))
		for _, i := range idx {
			keys = append(keys, at(i))
		}
		mergeRuns(idx, keys)
	}

	// Prefill side.
	pre, err := newPhase("prefill", c.Prefill, PrefillOnlyPolicy{MaxTokens: maxTok}, n, n, scratchOf(sc, true))
	if err != nil {
		return nil, err
	}
	for i := range n {
		order = append(order, i)
	}
	arrival := func(i int) float64 { return reqs[i].Arrival }
	byTime(order, arrival)
	dispatch(pre, router, order, arrival, func(in *instance, i int) (int, bool) {
		out.Placements[i].Prefill = in.run.Index
		r := reqs[i]
		r.ID = i
		return r.Prompt, in.e.Submit(r) == nil
	})
	kvBytes := step.KVBytesPerToken()
	order = order[:0]
	for _, in := range pre {
		in.out.close(in.e) // its sequences, read here, are its results
		for j, s := range in.e.all {
			i := in.subs[j]
			r := &res[i]
			r.Generated, r.FirstToken, r.Finish, r.MaxITL = s.generated, s.first, s.finish, 0
			r.Done, r.Preemptions = s.done, int(s.preempted)
			if s.rejected {
				r.Rejected = fmt.Sprintf("prefill instance %d: %s", in.run.Index, in.e.why(s))
				r.Finish = r.Arrival
				continue
			}
			if s.generated == 0 {
				continue // cut short by MaxIterations
			}
			if c.RecordTokens {
				r.TokenTimes = []float64{s.first}
			}
			if r.Output > 1 {
				r.Done = false
				pl := &out.Placements[i]
				pl.Transfer = float64(r.Prompt) * kvBytes / link
				pl.KVArrive = r.FirstToken + pl.Transfer
				order = append(order, i)
			}
		}
	}

	if sc != nil && sc.ttft > 0 {
		// Each request's first token is known now: rejected, cut short or
		// late, it missed whatever the decode side does.
		missed := 0
		for i := range res {
			if r := &res[i]; r.Rejected != "" || r.Generated == 0 || !(r.TTFT() <= sc.ttft) {
				missed++
			}
		}
		if missed > sc.budget {
			out.cut = true
			for _, in := range pre {
				in.release()
			}
			return out, nil
		}
	}

	// Decode side: arrivals are KV arrivals.
	// A decode step carries every sequence there: a few per step at the least.
	decodeTokens := 0
	for _, r := range reqs {
		decodeTokens += min(r.Output, MaxTokens) - 1
	}
	dec, err := newPhase("decode", c.Decode, DecodeOnlyPolicy{}, decodeTokens, decodeTokens/8, scratchOf(sc, false))
	if err != nil {
		return nil, err
	}
	// Token times come from the iterations, not the engine's results: a
	// request handed over while an iteration is in flight is recorded by the
	// engine as arriving at that iteration's end, and its first gap must be
	// measured from the first token on the prefill instance anyway.
	onIter := func(it *Iteration) {
		t := it.End()
		for _, x := range it.Items {
			if !x.Emit {
				continue
			}
			r := &res[x.ID]
			r.MaxITL = math.Max(r.MaxITL, t-r.Finish)
			r.Finish = t
			r.Generated++
			if c.RecordTokens {
				r.TokenTimes = append(r.TokenTimes, t)
			}
		}
	}
	for _, in := range dec {
		if !in.fast {
			in.onIter = onIter
		}
	}
	kvArrive := func(i int) float64 { return out.Placements[i].KVArrive }
	byTime(order, kvArrive)
	dispatch(dec, router, order, kvArrive, func(in *instance, i int) (int, bool) {
		out.Placements[i].Decode = in.run.Index
		r := reqs[i]
		r.ID, r.Arrival = i, kvArrive(i)
		return r.Output - 1, in.e.Submit(r) == nil
	})
	for _, in := range dec {
		in.out.close(in.e)
		for j, s := range in.e.all {
			r := &res[in.subs[j]]
			if in.fast && s.here != 0 {
				// What onIter would have summed token by token: the first gap
				// from the prefill instance's token (the engine measures its
				// own from the KV's arrival, a smaller gap), then the engine's.
				r.MaxITL = math.Max(math.Max(r.MaxITL, s.here-r.Finish), s.maxITL)
				r.Finish = s.last
				r.Generated += s.generated - 1 // the engine counts the first token too
			}
			r.Done = s.done
			r.Preemptions += int(s.preempted)
			if s.rejected {
				r.Rejected = fmt.Sprintf("decode instance %d: %s", in.run.Index, in.e.why(s))
			}
		}
	}

	out.Results = res
	for _, in := range slices.Concat(pre, dec) {
		in.run.Steps, in.run.End, in.run.Iterations, in.run.Busy = in.out.Steps, in.out.End, in.out.Iterations, in.e.busy
		out.Steps += in.run.Steps
		out.End = math.Max(out.End, in.run.End)
		out.Truncated = out.Truncated || in.out.Truncated
		out.Instances = append(out.Instances, in.run)
		in.release()
	}
	return out, nil
}

// check validates the cluster and returns the prepared step model, the link
// bandwidth and the router to use.
func (c Cluster) check(requests int) (StepModel, float64, Router, error) {
	step := c.Step
	if step.f == 0 {
		var err error
		if step, err = step.Prepare(); err != nil {
			return step, 0, "", err
		}
	}
	if c.Prefill < 1 || c.Prefill > MaxInstances || c.Decode < 1 || c.Decode > MaxInstances {
		return step, 0, "", fmt.Errorf("a cluster needs 1..%d prefill and 1..%d decode instances, got %d and %d",
			MaxInstances, MaxInstances, c.Prefill, c.Decode)
	}
	link := c.LinkBW
	if link == 0 {
		link = step.GPU.LinkBW
	}
	if !(link > 0) {
		return step, 0, "", fmt.Errorf("KV link bandwidth must be > 0 bytes/s, got %g", link)
	}
	router, err := ParseRouter(string(c.Router))
	if err != nil {
		return step, 0, "", err
	}
	if c.PrefillMaxTokens < 0 || c.PrefillMaxTokens > MaxTokens {
		return step, 0, "", fmt.Errorf("prefill step token cap must be in 0..%d, got %d", MaxTokens, c.PrefillMaxTokens)
	}
	if requests > MaxRequests {
		return step, 0, "", fmt.Errorf("at most %d requests, got %d", MaxRequests, requests)
	}
	return step, link, router, nil
}

// scratchOf is the instances' scratch of one phase (nil without sc).
func scratchOf(sc *clusterScratch, prefill bool) *[]scratch {
	switch {
	case sc == nil:
		return nil
	case prefill:
		return &sc.pre
	}
	return &sc.dec
}

// Workload builds the requests of one experiment at an arrival rate (req/s).
type Workload func(rate float64) ([]Request, error)

// ClusterGoodput is the cluster's goodput: the highest total arrival rate
// whose SLO attainment over RunDisaggregated reaches target (see Goodput),
// searched up to hi req/s, and that rate divided by the cluster's GPUs.
func ClusterGoodput(c Cluster, wl Workload, slo SLO, target, hi float64) (total, perGPU float64, saturated bool, err error) {
	return ClusterGoodputOn(c, wl, slo, target, hi, nil)
}

// ClusterGoodputOn is ClusterGoodput with its runs on mem's memory (nil:
// their own), as RunOn is Run.
func ClusterGoodputOn(c Cluster, wl Workload, slo SLO, target, hi float64, mem *Scratch) (total, perGPU float64, saturated bool, err error) {
	if err := checkSearch(target, hi); err != nil {
		return 0, 0, false, err
	}
	sc := mem.clusterRuns() // each run's results are read before the next
	sc.ttft = slo.TTFT
	total, saturated, err = bisect(func(rate float64) (bool, error) {
		reqs, err := wl(rate)
		if err != nil {
			return false, err
		}
		sc.budget = missBudget(len(reqs), target)
		o, err := runDisaggregated(c, reqs, sc)
		if err != nil || o.cut {
			return false, err
		}
		return Attainment(o.Results, slo) >= target, nil
	}, hi)
	return total, total / float64(c.Prefill+c.Decode), saturated, err
}

// PhaseGoodputs are the goodputs of one prefill-only instance judged on the
// TTFT objective alone and of one decode-only instance judged on the TPOT
// objective alone (its requests arrive with their KV built), with c's step
// model and limits: the inputs of the lecture's demo-3 arithmetic.
func PhaseGoodputs(c Cluster, wl Workload, slo SLO, target, hiPrefill, hiDecode float64) (gPre, gDec float64, err error) {
	maxTok := c.PrefillMaxTokens
	if maxTok == 0 {
		maxTok = DefaultMaxPrefillTokens
	}
	one := func(p Policy, o SLO, hi float64) (float64, error) {
		g, _, err := InstanceGoodput(Config{Step: c.Step, Policy: p, Limits: c.Limits}, wl, o, target, hi)
		return g, err
	}
	if gPre, err = one(PrefillOnlyPolicy{MaxTokens: maxTok}, SLO{TTFT: slo.TTFT}, hiPrefill); err != nil {
		return 0, 0, err
	}
	gDec, err = one(DecodeOnlyPolicy{}, SLO{TPOT: slo.TPOT}, hiDecode)
	return gPre, gDec, err
}

// Split is x prefill + y decode instances and their combined goodput.
type Split struct {
	Prefill int     `json:"prefill"`
	Decode  int     `json:"decode"`
	Total   float64 `json:"total"`   // req/s the pair sustains
	PerGPU  float64 `json:"per_gpu"` // Total / (Prefill + Decode)
}

// SplitArithmetic is the lecture's demo-3 account: x prefill and y decode
// instances sustain min(x*gPre, y*gDec), assuming perfect balancing and free KV transfer.
func SplitArithmetic(x, y int, gPre, gDec float64) Split {
	t := min(float64(x)*gPre, float64(y)*gDec)
	return Split{Prefill: x, Decode: y, Total: t, PerGPU: t / float64(x+y)}
}

// BestSplitArithmetic searches x, y in 1..maxEach for the highest per-GPU goodput
// (ties go to fewer GPUs).
func BestSplitArithmetic(gPre, gDec float64, maxEach int) Split {
	best := Split{}
	for x := 1; x <= maxEach; x++ {
		for y := 1; y <= maxEach; y++ {
			if s := SplitArithmetic(x, y, gPre, gDec); s.PerGPU > best.PerGPU*(1+1e-9) {
				best = s
			}
		}
	}
	return best
}

// BestSplitWithin is the best per-GPU split using at most gpus GPUs in all
// (ties go to fewer GPUs).
func BestSplitWithin(gPre, gDec float64, gpus int) Split {
	best := Split{}
	for x := 1; x < gpus; x++ {
		for y := 1; x+y <= gpus; y++ {
			if s := SplitArithmetic(x, y, gPre, gDec); s.PerGPU > best.PerGPU*(1+1e-9) {
				best = s
			}
		}
	}
	return best
}

// SplitCheck is the lecture's arithmetic for one x:y split beside a full
// simulation of it, which pays for imperfect balancing and the KV transfer.
type SplitCheck struct {
	Split                   // the arithmetic: min(x*gPre, y*gDec) and per GPU
	PrefillGoodput  float64 `json:"prefill_goodput"` // one prefill-only instance, req/s
	DecodeGoodput   float64 `json:"decode_goodput"`  // one decode-only instance, req/s
	SimulatedTotal  float64 `json:"simulated_total"` // ClusterGoodput of the split, req/s
	SimulatedPerGPU float64 `json:"simulated_per_gpu"`
	Saturated       bool    `json:"saturated"` // the simulated search hit its ceiling
}

// BestSplit is demo 3 of the lecture: the per-phase goodputs of single
// instances, the x:y split (x, y in 1..maxEach) with the best arithmetic
// goodput per GPU, and the full simulation of that split on c (whose
// Prefill and Decode are replaced), searched up to twice the arithmetic total.
func BestSplit(c Cluster, wl Workload, slo SLO, target float64, maxEach int, hiPrefill, hiDecode float64) (SplitCheck, error) {
	if maxEach < 1 || maxEach > MaxInstances {
		return SplitCheck{}, fmt.Errorf("instances per phase must be in 1..%d, got %d", MaxInstances, maxEach)
	}
	gPre, gDec, err := PhaseGoodputs(c, wl, slo, target, hiPrefill, hiDecode)
	if err != nil {
		return SplitCheck{}, err
	}
	best := BestSplitArithmetic(gPre, gDec, maxEach)
	chk := SplitCheck{Split: best, PrefillGoodput: gPre, DecodeGoodput: gDec}
	if best.Total == 0 {
		return chk, fmt.Errorf("a single instance attains the SLO at no rate (prefill %g, decode %g req/s)", gPre, gDec)
	}
	c.Prefill, c.Decode = best.Prefill, best.Decode
	chk.SimulatedTotal, chk.SimulatedPerGPU, chk.Saturated, err = ClusterGoodput(c, wl, slo, target, math.Min(2*best.Total, MaxRate))
	return chk, err
}

// mergeRuns sorts idx by keys (idx[i]'s key is keys[i]) as
// slices.SortStableFunc with cmp.Compare would, by merging the stretches
// already in order: requests come in arrival order, and each prefill
// instance hands its requests on in order, so there are few.
func mergeRuns(idx []int, keys []float64) {
	n := len(idx)
	var starts []int // where each ascending stretch begins
	for i := 1; i < n; i++ {
		if cmp.Less(keys[i], keys[i-1]) {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return
	}
	starts = append(append([]int{0}, starts...), n)
	out := idx
	bk, bi := make([]float64, n), make([]int, n)
	for len(starts) > 2 { // merge stretches pairwise, keys and indices together
		k := 0
		for j := 0; j+1 < len(starts); j += 2 {
			lo, mid := starts[j], starts[j+1]
			hi := mid
			if j+2 < len(starts) {
				hi = starts[j+2]
			}
			a, b, o := lo, mid, lo
			for ; a < mid && b < hi; o++ {
				if cmp.Less(keys[b], keys[a]) { // the right only when strictly earlier: stable
					bk[o], bi[o] = keys[b], idx[b]
					b++
				} else {
					bk[o], bi[o] = keys[a], idx[a]
					a++
				}
			}
			copy(bk[o:], keys[a:mid]) // one side is left over
			copy(bi[o:], idx[a:mid])
			o += mid - a
			copy(bk[o:], keys[b:hi])
			copy(bi[o:], idx[b:hi])
			starts[k] = lo
			k++
		}
		starts[k] = n
		starts = starts[:k+1]
		keys, bk = bk, keys
		idx, bi = bi, idx
	}
	if &idx[0] != &out[0] { // an odd number of passes left it in the buffer
		copy(out, idx)
	}
}
