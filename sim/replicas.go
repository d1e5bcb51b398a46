package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Routing across replicas (llm-d's and Dynamo's routers, SGLang's router):
// N colocated engines, each a whole copy of the model, behind a router that
// sends each request to one of them when it arrives. The replicas share
// nothing but the router, so each is the ordinary engine driven online
// (the instance of cluster.go), brought up to each arrival before the
// router looks.
//
// The router sees each replica's outstanding requests (sent there, not yet
// finished) as the replica last reported them: Stale seconds ago. A router
// that does not see its own latest sends keeps choosing the replica that
// looked least loaded a moment ago — the herd Mitzenmacher described ("How
// useful is old information?", IEEE TPDS 11(1), 2000: with stale load
// figures, joining the least-loaded queue does worse than choosing at
// random). The prefix-aware router looks into each replica's prefix cache
// as it is now (as llm-d's KV-cache-aware scorer follows KV events).

// Route names how a router spreads requests over replicas.
type Route string

// The routes.
const (
	// RouteRoundRobin sends the i-th request to replica i mod N.
	RouteRoundRobin Route = "round-robin"
	// RouteLeastOutstanding sends a request to the replica with the fewest
	// outstanding requests as the router sees them; ties go to the lowest index.
	RouteLeastOutstanding Route = "least-outstanding"
	// RoutePrefixAware sends a request to the replica whose prefix cache
	// holds the longest prefix of its prompt, among those whose outstanding
	// requests exceed the least loaded's by at most Threshold; ties go to
	// the fewer outstanding, then the lowest index.
	RoutePrefixAware Route = "prefix-aware"
)

// RouteNames lists the routes ParseRoute accepts.
func RouteNames() []string {
	return []string{string(RouteRoundRobin), string(RouteLeastOutstanding), string(RoutePrefixAware)}
}

// ParseRoute reads a route name ("" means least-outstanding).
func ParseRoute(name string) (Route, error) {
	switch Route(strings.ToLower(strings.TrimSpace(name))) {
	case RouteLeastOutstanding, "":
		return RouteLeastOutstanding, nil
	case RouteRoundRobin, "rr":
		return RouteRoundRobin, nil
	case RoutePrefixAware, "prefix":
		return RoutePrefixAware, nil
	}
	return "", fmt.Errorf("unknown route %q; valid: %s", name, strings.Join(RouteNames(), ", "))
}

// MaxStale bounds how old the router's load figures may be, in seconds.
const MaxStale = 3600

// Replicas is N colocated engines of one configuration behind a router.
type Replicas struct {
	Config Config // each replica's engine (its Trace and RecordTokens are the run's)
	N      int    // replicas, 1..MaxInstances
	Route  Route  // "" means least-outstanding
	// Stale is how old, in seconds, the load figures the router acts on
	// are: it sees each replica's outstanding requests as of Stale before
	// the arrival (its own later sends included). 0: fresh.
	Stale float64
	// Threshold is the prefix-aware route's slack: a replica with more
	// than this many outstanding requests over the least loaded is passed
	// over however much of the prompt it holds.
	Threshold int
	// Reuse, with Config.Trace, is an earlier traced run's arrays (its
	// TraceArrays, one per replica) for this run's traces to fill instead
	// of growing new ones: a routed run's trace is tens of MB, and grown a
	// doubling at a time it was most of a traced run's allocations (and,
	// in the browser, of its time). The earlier run's iterations are
	// overwritten: it must no longer be read.
	Reuse []TraceArrays
}

// ReplicaRun is one replica's share of a run.
type ReplicaRun struct {
	Index    int          `json:"index"`
	Requests int          `json:"requests"` // requests sent to it
	Steps    int          `json:"steps"`
	End      float64      `json:"end"`
	Busy     float64      `json:"busy"`             // seconds spent in iterations
	Prefix   *PrefixStats `json:"prefix,omitempty"` // its prefix cache's figures (with caching)
	// Iterations are its steps, with Config.Trace; item IDs are submission indices.
	Iterations []Iteration `json:"iterations,omitempty"`
}

// ReplicaOutcome is a run across replicas: every request's result in
// submission order (so Summarize, Attainment and goodput apply unchanged),
// the replica the router chose for each, and every replica's run. Its
// Prefix sums the replicas' caches.
type ReplicaOutcome struct {
	Outcome
	Choices  []int        `json:"choices"` // per request, the replica it was sent to
	Replicas []ReplicaRun `json:"replicas"`
	traces   []TraceArrays
}

// TraceArrays returns the run's trace arrays, one per replica, for a later
// run to reuse (Replicas.Reuse) once this one is no longer read.
func (o *ReplicaOutcome) TraceArrays() []TraceArrays { return o.traces }

// replicaLoad is what the router knows of one replica: when each request
// was sent there, and (from its instance's events) when each finished.
type replicaLoad struct {
	sent     []float64 // send times, in order
	seen     int       // sends at or before the router's clock
	finished int       // finishes at or before it
}

// outstanding is the replica's outstanding requests as of t (t never
// decreasing from call to call).
func (l *replicaLoad) outstanding(in *instance, t float64) int {
	for l.seen < len(l.sent) && l.sent[l.seen] <= t {
		l.seen++
	}
	k := in.head
	for ; k < len(in.events) && in.events[k].end <= t; k++ {
		l.finished += in.events[k].requests
	}
	in.head = k
	return l.seen - l.finished
}

// RunReplicas simulates reqs across the replicas: each request, in arrival
// order, goes where the router sends it when it arrives.
func RunReplicas(c Replicas, reqs []Request) (*ReplicaOutcome, error) {
	if c.N < 1 || c.N > MaxInstances {
		return nil, fmt.Errorf("replicas must be in 1..%d, got %d", MaxInstances, c.N)
	}
	route, err := ParseRoute(string(c.Route))
	if err != nil {
		return nil, err
	}
	if !(c.Stale >= 0 && c.Stale <= MaxStale) {
		return nil, fmt.Errorf("the router's staleness must be in [0, %d] s, got %g", MaxStale, c.Stale)
	}
	if c.Threshold < 0 || c.Threshold > MaxRequests {
		return nil, fmt.Errorf("the prefix-aware threshold must be in 0..%d requests, got %d", MaxRequests, c.Threshold)
	}
	if len(reqs) > MaxRequests {
		return nil, fmt.Errorf("requests must be at most %d, got %d", MaxRequests, len(reqs))
	}
	for i, r := range reqs {
		if !finite(r.Arrival) || r.Arrival < 0 {
			return nil, fmt.Errorf("request %d (id %d): arrival must be a finite time >= 0 s, got %g", i, r.ID, r.Arrival)
		}
	}
	cfg := c.Config
	n := len(reqs)
	ins := make([]*instance, c.N)
	loads := make([]replicaLoad, c.N)
	for k := range ins {
		e, err := NewEngine(cfg)
		if err != nil {
			return nil, err
		}
		in := &instance{e: e, trace: cfg.Trace, fast: !cfg.Trace && !cfg.RecordTokens}
		if in.fast {
			e.noItems = true
			e.allowLazy()
			e.runHook = in.decodeRun
		}
		e.reserve(n/c.N + 16)
		if cfg.Trace && k < len(c.Reuse) {
			in.out.refill(c.Reuse[k])
		}
		ins[k] = in
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case reqs[a].Arrival < reqs[b].Arrival:
			return -1
		case reqs[a].Arrival > reqs[b].Arrival:
			return 1
		}
		return 0
	})
	out := &ReplicaOutcome{Choices: make([]int, n)}
	seen := make([]int, c.N)
	hits := make([]int, c.N)
	for g, i := range order {
		r := reqs[i]
		t := r.Arrival
		for _, in := range ins {
			in.advance(t)
		}
		k := 0
		switch {
		case c.N == 1:
		case route == RouteRoundRobin:
			k = g % c.N
		default:
			lo := math.MaxInt
			for j, in := range ins {
				seen[j] = loads[j].outstanding(in, t-c.Stale)
				lo = min(lo, seen[j])
			}
			best := -1
			for j, in := range ins {
				if route == RoutePrefixAware {
					if seen[j] > lo+c.Threshold {
						continue
					}
					hits[j] = in.e.PrefixHit(&r)
				}
				switch {
				case best < 0:
					best = j
				case hits[j] > hits[best], hits[j] == hits[best] && seen[j] < seen[best]:
					best = j
				}
			}
			k = best
		}
		in := ins[k]
		out.Choices[i] = k
		in.subs = append(in.subs, i)
		loads[k].sent = append(loads[k].sent, t)
		r.ID = i // inside the engines a request's ID is its submission index
		if in.e.Submit(r) != nil {
			// refused at once: it never counts as outstanding
			loads[k].sent = loads[k].sent[:len(loads[k].sent)-1]
		}
	}
	for _, in := range ins {
		for in.step(math.Inf(1)) {
		}
	}
	res := make([]Result, n)
	out.Replicas = make([]ReplicaRun, c.N)
	var total PrefixStats
	var spec SpecStats
	for k, in := range ins {
		if p := in.e.SpecStats(); p != nil {
			spec.Steps += p.Steps
			spec.Drafted += p.Drafted
			spec.Accepted += p.Accepted
			spec.Emitted += p.Emitted
		}
		in.out.close(in.e)
		if cfg.Trace {
			out.traces = append(out.traces, in.out.arrays)
		}
		rs := in.e.Results()
		for j, i := range in.subs {
			res[i] = rs[j]
			// (a request sent while an iteration ran entered the engine at its
			// end: its arrival is the request's own)
			res[i].ID, res[i].Arrival = reqs[i].ID, reqs[i].Arrival-cfg.Step.Physics.ReqLatency
		}
		run := ReplicaRun{Index: k, Requests: len(in.subs), Steps: in.out.Steps, End: in.out.End, Busy: in.e.busy, Iterations: in.out.Iterations}
		if p := in.e.PrefixStats(); p != nil {
			run.Prefix = p
			total.Queried += p.Queried
			total.Hit += p.Hit
			total.Evicted += p.Evicted
			total.Cached += p.Cached
		}
		out.Replicas[k] = run
		out.Steps += run.Steps
		out.End = max(out.End, run.End)
		out.Truncated = out.Truncated || in.out.Truncated
		if cfg.CountGaps {
			out.Gaps = append(out.Gaps, in.out.Gaps...)
		}
	}
	if cfg.Limits.PrefixCaching {
		out.Prefix = &total
	}
	if cfg.Spec.On() {
		out.Spec = &spec
	}
	out.Results = res
	return out, nil
}
