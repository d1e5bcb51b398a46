package sim

import (
	"reflect"
	"testing"
)

func mustReplicas(t testing.TB, c Replicas, reqs []Request) *ReplicaOutcome {
	t.Helper()
	out, err := RunReplicas(c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOneReplicaIsTheEngine: one replica behind any router is Run.
func TestOneReplicaIsTheEngine(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 300, Rate: 10, System: 300, Message: Uniform(50, 300), Output: Uniform(10, 100), Turns: 3, Think: 5, Seed: 1})
	cfg := Config{Step: step, Policy: Chunked{Budget: 1024}, Limits: engineLimits(t, step, true)}
	want := mustRun(t, cfg, reqs)
	for _, route := range []Route{RouteRoundRobin, RouteLeastOutstanding, RoutePrefixAware} {
		got := mustReplicas(t, Replicas{Config: cfg, N: 1, Route: route, Stale: 0.5}, reqs)
		if !reflect.DeepEqual(got.Results, want.Results) || !reflect.DeepEqual(got.Prefix, want.Prefix) {
			t.Errorf("%s: one replica differs from the engine alone", route)
		}
	}
}

// TestReplicasTracedIsFast: a traced run across replicas gives the
// untraced (fast path) run's results and choices.
func TestReplicasTracedIsFast(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 400, Rate: 30, System: 200, Message: Uniform(50, 300), Output: Uniform(10, 100), Turns: 4, Think: 4, Seed: 4})
	for _, route := range []Route{RouteRoundRobin, RouteLeastOutstanding, RoutePrefixAware} {
		cfg := Config{Step: step, Policy: Chunked{Budget: 1024}, Limits: engineLimits(t, step, true)}
		fast := mustReplicas(t, Replicas{Config: cfg, N: 3, Route: route, Stale: 0.2, Threshold: 4}, reqs)
		cfg.Trace = true
		traced := mustReplicas(t, Replicas{Config: cfg, N: 3, Route: route, Stale: 0.2, Threshold: 4}, reqs)
		if !reflect.DeepEqual(fast.Results, traced.Results) || !reflect.DeepEqual(fast.Choices, traced.Choices) {
			t.Errorf("%s: traced and untraced runs differ", route)
		}
		items := 0
		for k, r := range traced.Replicas {
			if r.Requests == 0 || len(r.Iterations) != r.Steps {
				t.Errorf("%s: replica %d got %d requests, %d iterations for %d steps", route, k, r.Requests, len(r.Iterations), r.Steps)
			}
			for _, it := range r.Iterations {
				for _, item := range it.Items {
					if traced.Choices[item.ID] != k {
						t.Fatalf("%s: replica %d ran request %d, sent to %d", route, k, item.ID, traced.Choices[item.ID])
					}
					items++
				}
			}
		}
		if items == 0 {
			t.Errorf("%s: no items traced", route)
		}
	}
}

// sessions4 is the routing chapter's workload: multi-turn sessions whose
// history grows, at a rate that keeps 4 replicas busy.
func sessions4(t testing.TB) []Request {
	return mustBuild(t, Conversations{Requests: 2000, Rate: 24, System: 500, Message: Uniform(100, 400), Output: Uniform(50, 250), Turns: 8, Think: 8, Seed: 11})
}

// TestReplicasReuseTraceArrays: a traced run that refills an earlier run's
// arrays (a bigger run's, then a smaller one's, with fewer replicas than
// arrays and more) records the same trace as one on new arrays.
func TestReplicasReuseTraceArrays(t *testing.T) {
	step := lectureStep(t)
	cfg := Config{Step: step, Policy: Chunked{Budget: 1024}, Limits: engineLimits(t, step, true), Trace: true, RecordTokens: true}
	var arrays []TraceArrays
	for i, w := range []struct{ n, reqs, seed int }{{3, 400, 1}, {2, 150, 2}, {4, 300, 3}} {
		reqs := mustBuild(t, Conversations{Requests: w.reqs, Rate: 30, System: 200, Message: Uniform(50, 300), Output: Uniform(10, 100), Turns: 3, Think: 4, Seed: uint64(w.seed)})
		c := Replicas{Config: cfg, N: w.n, Route: RoutePrefixAware, Threshold: 4}
		want := mustReplicas(t, c, reqs)
		c.Reuse = arrays
		got := mustReplicas(t, c, reqs)
		if !reflect.DeepEqual(got.Replicas, want.Replicas) || !reflect.DeepEqual(got.Results, want.Results) {
			t.Fatalf("run %d: the run on reused arrays differs from the one on new arrays", i)
		}
		arrays = got.TraceArrays()
		if len(arrays) != w.n {
			t.Fatalf("run %d: %d trace arrays for %d replicas", i, len(arrays), w.n)
		}
	}
}

// TestPrefixAwareRoutingBeatsRoundRobin is the routing target: 4
// replicas, multi-turn sessions: routing each turn to the replica holding
// its history beats spreading turns round-robin on hit ratio and TTFT
// P90. Shape: Preble (Srivatsa et al., 2024, "Preble: Efficient
// Distributed Prompt Scheduling for LLM Serving", figs. 6-7), and SGLang's
// cache-aware router against round-robin.
func TestPrefixAwareRoutingBeatsRoundRobin(t *testing.T) {
	step := lectureStep(t)
	reqs := sessions4(t)
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: engineLimits(t, step, true)}
	type fig struct{ hit, p90 float64 }
	figs := map[Route]fig{}
	for _, route := range []Route{RouteRoundRobin, RouteLeastOutstanding, RoutePrefixAware} {
		out := mustReplicas(t, Replicas{Config: cfg, N: 4, Route: route, Threshold: 8}, reqs)
		s := out.Summary()
		if s.Completed != len(reqs) {
			t.Fatalf("%s: %s", route, s.Counts)
		}
		figs[route] = fig{out.Prefix.HitRatio(), s.TTFTP90}
		t.Logf("%-17s hit ratio %.3f, TTFT P50 %.1f ms, P90 %.1f ms; per replica %v", route, out.Prefix.HitRatio(), s.TTFTP50*1e3, s.TTFTP90*1e3, perReplica(out))
	}
	rr, pa := figs[RouteRoundRobin], figs[RoutePrefixAware]
	if !(pa.hit > rr.hit+0.2) {
		t.Errorf("prefix-aware hit ratio %.3f is not well over round-robin's %.3f", pa.hit, rr.hit)
	}
	if !(pa.p90 < rr.p90) {
		t.Errorf("prefix-aware TTFT P90 %.1f ms is not under round-robin's %.1f ms", pa.p90*1e3, rr.p90*1e3)
	}
}

func perReplica(out *ReplicaOutcome) []int {
	n := make([]int, len(out.Replicas))
	for i, r := range out.Replicas {
		n[i] = r.Requests
	}
	return n
}

// TestStaleLoadHerds is the stale-signal target: least-outstanding routing
// on load figures 500 ms old sends the requests of each half second to the
// same replica, and is worse at P99 than on fresh figures (Mitzenmacher
// 2000: old load information makes least-loaded routing herd).
func TestStaleLoadHerds(t *testing.T) {
	step := lectureStep(t)
	reqs, err := Poisson(3000, 60, 512, 128, 5)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: engineLimits(t, step, false)}
	var p99 [2]float64
	var runs [2]float64 // the longest run of consecutive requests sent to one replica
	for i, stale := range []float64{0, 0.5} {
		out := mustReplicas(t, Replicas{Config: cfg, N: 4, Route: RouteLeastOutstanding, Stale: stale}, reqs)
		s := out.Summary()
		p99[i] = s.TTFTP99
		longest, cur := 1, 1
		for j := 1; j < len(out.Choices); j++ {
			if out.Choices[j] == out.Choices[j-1] {
				cur++
			} else {
				cur = 1
			}
			longest = max(longest, cur)
		}
		runs[i] = float64(longest)
		t.Logf("stale %.1f s: TTFT P50 %.1f ms, P99 %.1f ms, E2E P99 %.0f ms; longest herd %d requests; per replica %v", stale, s.TTFTP50*1e3, s.TTFTP99*1e3, s.E2EP99*1e3, longest, perReplica(out))
	}
	if !(p99[1] > p99[0]) {
		t.Errorf("TTFT P99 with a 500 ms stale signal %.1f ms is not worse than fresh %.1f ms", p99[1]*1e3, p99[0]*1e3)
	}
	if !(runs[1] >= 5*runs[0]) {
		t.Errorf("the stale router's longest herd is %g requests, the fresh one's %g: no herd", runs[1], runs[0])
	}
}

func TestRunReplicasRefusesBadInput(t *testing.T) {
	step := lectureStep(t)
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}}
	reqs, _ := Poisson(10, 1, 100, 10, 1)
	for _, c := range []Replicas{
		{Config: cfg, N: 0}, {Config: cfg, N: MaxInstances + 1}, {Config: cfg, N: 2, Route: "nearest"},
		{Config: cfg, N: 2, Stale: -1}, {Config: cfg, N: 2, Threshold: -1},
	} {
		if _, err := RunReplicas(c, reqs); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	bad := append([]Request{}, reqs...)
	bad[3].Arrival = -1
	if _, err := RunReplicas(Replicas{Config: cfg, N: 2}, bad); err == nil {
		t.Error("a negative arrival accepted")
	}
}
