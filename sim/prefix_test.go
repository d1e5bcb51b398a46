package sim

import (
	"reflect"
	"testing"
)

// engineLimits are the engine's limits as the scenario builds them by
// default (90% of an H100 for Llama-3.1-8B, 256 sequences, preemption),
// with prefix caching as asked.
func engineLimits(t testing.TB, step StepModel, caching bool) Limits {
	t.Helper()
	blocks, err := MemorySplit{}.KVBlocks(step)
	if err != nil {
		t.Fatal(err)
	}
	return Limits{MaxSeqs: 256, KVBlocks: blocks, BlockSize: 16, Preempt: true, PrefixCaching: caching}
}

func mustBuild(t testing.TB, c Conversations) []Request {
	t.Helper()
	reqs, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

func mustRun(t testing.TB, cfg Config, reqs []Request) *Outcome {
	t.Helper()
	out, err := Run(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChainHashesNameSharedPrefixes(t *testing.T) {
	a := ChainHashes([]Segment{{1, 40}, {2, 30}}, 16) // 70 tokens: 4 full blocks
	b := ChainHashes([]Segment{{1, 40}, {3, 30}}, 16)
	c := ChainHashes([]Segment{{1, 32}, {1, 8}, {2, 30}}, 16) // the same tokens cut otherwise: not the same content
	if len(a) != 4 || len(b) != 4 {
		t.Fatalf("70 tokens in blocks of 16: want 4 names, got %d and %d", len(a), len(b))
	}
	if a[0] != b[0] || a[1] != b[1] {
		t.Error("the first 32 tokens are the same content but their names differ")
	}
	if a[2] == b[2] || a[3] == b[3] {
		t.Error("blocks past the shared 40 tokens got the same names")
	}
	if a[0] == c[0] && a[2] == c[2] {
		t.Log("segments are content: (1, 32)+(1, 8) repeats segment 1's first 8 tokens, not its tokens 32..40")
	}
	if a[2] == c[2] {
		t.Error("a segment's tokens 32..40 and its tokens 0..8 named alike")
	}
}

// TestPrefixCachingOffChangesNothing: a workload with block names runs bit
// for bit as without them while caching is off, and with caching on a
// workload without names runs as with caching off.
func TestPrefixCachingOffChangesNothing(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 300, Rate: 20, System: 1000, Message: Fixed(200), Output: Fixed(64), Turns: 1})
	bare := make([]Request, len(reqs))
	for i, r := range reqs {
		r.Blocks = nil
		bare[i] = r
	}
	for _, lim := range []Limits{{}, engineLimits(t, step, false)} {
		cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: lim, CountGaps: true}
		off := mustRun(t, cfg, reqs)
		plain := mustRun(t, cfg, bare)
		cfg.Limits.PrefixCaching = true
		onBare := mustRun(t, cfg, bare)
		if !reflect.DeepEqual(off.Results, plain.Results) || !reflect.DeepEqual(off.Results, onBare.Results) {
			t.Errorf("limits %+v: block names or caching without them changed the results", lim)
		}
		if off.Prefix != nil || onBare.Prefix == nil || onBare.Prefix.Hit != 0 {
			t.Errorf("prefix figures: off %v, on without names %v", off.Prefix, onBare.Prefix)
		}
	}
}

// TestPrefixCachingFastPathIsPlain: with caching on, the whole-run fast
// path and a traced run give the plain path's results, bit for bit.
func TestPrefixCachingFastPathIsPlain(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 400, Rate: 15, System: 512, Message: Uniform(50, 400), Output: Uniform(16, 200), Turns: 4, Think: 3, Seed: 3})
	for _, lim := range []Limits{{PrefixCaching: true}, engineLimits(t, step, true), {KVBlocks: 2500, BlockSize: 16, Preempt: true, PrefixCaching: true}, {KVBlocks: 2500, BlockSize: 16, PrefixCaching: true, MaxSeqs: 64}} {
		for _, pol := range []Policy{Chunked{Budget: 512}, PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}} {
			cfg := Config{Step: step, Policy: pol, Limits: lim, CountGaps: true}
			fast := mustRun(t, cfg, reqs)
			plain := plainRun(t, cfg, reqs)
			if !reflect.DeepEqual(fast.Results, plain.Results) || !reflect.DeepEqual(fast.Prefix, plain.Prefix) {
				t.Errorf("%s, limits %+v: the fast path differs from the plain one", pol.Name(), lim)
			}
			cfg.Trace = true
			traced := mustRun(t, cfg, reqs)
			if !reflect.DeepEqual(traced.Results, plain.Results) {
				t.Errorf("%s, limits %+v: the traced run differs from the plain one", pol.Name(), lim)
			}
			if fast.Prefix.Hit == 0 {
				t.Errorf("%s, limits %+v: nothing hit", pol.Name(), lim)
			}
		}
	}
}

// TestSharedSystemPromptTTFT is the first target: a 2000-token
// system prompt shared by every request, 200-token questions and 64-token
// answers at a moderate rate on Llama-3.1-8B/H100: TTFT P50 with caching
// at most 0.35x without. Shape: vLLM's automatic prefix caching
// benchmark (docs "Automatic Prefix Caching"; SGLang's RadixAttention
// paper, Zheng et al. 2024, fig. 8: shared-prefix workloads' prefill
// time falls to the unshared suffix's).
func TestSharedSystemPromptTTFT(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 1000, Rate: 8, System: 2000, Message: Fixed(200), Output: Fixed(64), Turns: 1})
	var p50 [2]float64
	for i, on := range []bool{false, true} {
		out := mustRun(t, Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: engineLimits(t, step, on)}, reqs)
		s := out.Summary()
		if s.Completed != len(reqs) {
			t.Fatalf("caching %v: %s", on, s.Counts)
		}
		p50[i] = s.TTFTP50
		if on {
			hr := out.Prefix.HitRatio()
			t.Logf("hit ratio %.3f, prefill tokens saved %d of %d", hr, out.Prefix.Hit, out.Prefix.Queried)
			if hr < 0.85 || hr > 2000.0/2200 {
				t.Errorf("hit ratio %.3f: want about the system prompt's share, 2000/2200 = 0.909 (its full blocks)", hr)
			}
		}
	}
	t.Logf("TTFT P50 %.1f ms without caching, %.1f ms with (%.2fx)", p50[0]*1e3, p50[1]*1e3, p50[1]/p50[0])
	if p50[1] > 0.35*p50[0] {
		t.Errorf("TTFT P50 with caching %.1f ms is over 0.35x %.1f ms", p50[1]*1e3, p50[0]*1e3)
	}
}

// TestDecodeBoundWorkloadGainsLittle is the vLLM experiment's shape (pull
// request #53395: a 94.6% token hit ratio gave a 5.7-6.2% throughput gain
// in a short agentic workload at concurrency 64): when decode dominates,
// a hit ratio over 90% buys under 10% throughput, and no more than the
// share of the uncached run's step time that its prefills took.
func TestDecodeBoundWorkloadGainsLittle(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 640, Rate: 1, System: 1500, Message: Fixed(80), Output: Uniform(1200, 2000), Turns: 1, Seed: 5})
	var thr [2]float64
	var prefillShare float64
	for i, on := range []bool{false, true} {
		cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: engineLimits(t, step, on), Trace: !on}
		out, err := RunClosed(cfg, reqs, 64)
		if err != nil {
			t.Fatal(err)
		}
		s := out.Summary()
		thr[i] = s.Throughput
		if on {
			if hr := out.Prefix.HitRatio(); hr <= 0.9 {
				t.Errorf("hit ratio %.3f: want over 0.9", hr)
			}
			continue
		}
		// The uncached run's time spent over plain decode steps on prefill work.
		var total, extra float64
		for _, it := range out.Iterations {
			total += it.Duration
			if it.Prefill > 0 {
				extra += it.Duration - step.Decode(it.Decodes, 0).Seconds
			}
		}
		prefillShare = extra / total
	}
	gain := thr[1]/thr[0] - 1
	t.Logf("throughput %.0f -> %.0f tok/s (+%.1f%%); prefill share of the uncached run's time %.1f%%", thr[0], thr[1], gain*100, prefillShare*100)
	if !(gain > 0 && gain < 0.10) {
		t.Errorf("throughput gain %.1f%%: want positive and under 10%%", gain*100)
	}
	if gain > prefillShare*1.1/(1-prefillShare) {
		t.Errorf("gain %.1f%% exceeds what removing the prefill share %.1f%% allows", gain*100, prefillShare*100)
	}
}

// TestSmallCacheEvicts: multi-turn sessions on a KV cache made smaller
// and smaller: the hit ratio falls once eviction begins.
func TestSmallCacheEvicts(t *testing.T) {
	step := lectureStep(t)
	reqs := mustBuild(t, Conversations{Requests: 600, Rate: 6, System: 200, Message: Fixed(300), Output: Fixed(100), Turns: 6, Think: 20, Seed: 2})
	prev, prevEvicted := 2.0, -1
	for _, blocks := range []int{60000, 8000, 3000, 1200} {
		lim := Limits{MaxSeqs: 256, KVBlocks: blocks, BlockSize: 16, Preempt: true, PrefixCaching: true}
		out := mustRun(t, Config{Step: step, Policy: Chunked{Budget: 2048}, Limits: lim}, reqs)
		p := out.Prefix
		t.Logf("%6d blocks: hit ratio %.3f, %d evicted, %s", blocks, p.HitRatio(), p.Evicted, out.Summary().Counts)
		if blocks == 60000 && p.Evicted != 0 {
			t.Errorf("a cache that holds everything evicted %d blocks", p.Evicted)
		}
		if p.HitRatio() > prev || p.Evicted < prevEvicted {
			t.Errorf("%d blocks: hit ratio %.3f (was %.3f), evicted %d (was %d): want less hit, more evicted", blocks, p.HitRatio(), prev, p.Evicted, prevEvicted)
		}
		prev, prevEvicted = p.HitRatio(), p.Evicted
	}
	if prev > 0.5 {
		t.Errorf("the smallest cache still hits %.3f", prev)
	}
}

// TestCachedPrefixIsSharedNotCopied: two requests holding the same cached
// prefix at once occupy its blocks once.
func TestCachedPrefixIsSharedNotCopied(t *testing.T) {
	step := lectureStep(t)
	sys := ChainHashes([]Segment{{1, 1600}, {2, 100}, {3, 64}}, 16)
	other := ChainHashes([]Segment{{1, 1600}, {4, 100}, {5, 64}}, 16)
	reqs := []Request{
		{ID: 0, Arrival: 0, Prompt: 1700, Output: 64, Blocks: sys},
		{ID: 1, Arrival: 0.1, Prompt: 1700, Output: 64, Blocks: other},
	}
	cfg := Config{Step: step, Policy: Chunked{Budget: 2048}, Trace: true, Limits: Limits{KVBlocks: 1000, BlockSize: 16, Preempt: true, PrefixCaching: true}}
	out := mustRun(t, cfg, reqs)
	if out.Results[1].Cached != 1600 {
		t.Fatalf("the second request took %d tokens from the cache, want 1600", out.Results[1].Cached)
	}
	peak := 0
	for _, it := range out.Iterations {
		peak = max(peak, it.KVBlocks)
		for _, item := range it.Items {
			if item.ID == 1 && item.Prefill && item.Cached != 1600 && item.Tokens == 100 {
				t.Errorf("its prefill item says %d cached", item.Cached)
			}
		}
	}
	// 1600/16 shared + each one's own 100 prompt and 64 output tokens.
	if want := 100 + 2*((1700+64+15)/16-100); peak > want {
		t.Errorf("peak %d blocks held: the shared prefix was counted twice (want at most %d)", peak, want)
	}
	if r := out.Results[1]; r.TTFT() >= out.Results[0].TTFT()/2 {
		t.Errorf("the cached request's TTFT %.1f ms is not well under the first's %.1f ms", r.TTFT()*1e3, out.Results[0].TTFT()*1e3)
	}
}
