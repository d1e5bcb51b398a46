package course

import (
	"fmt"
	"testing"

	"servelab/sim/scenario"
)

// preset is the experiment a chapter's link opens.
func preset(t testing.TB, name string) scenario.Experiment {
	t.Helper()
	p, ok := scenario.PresetByName(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	x := scenario.Default()
	p.Apply(&x)
	return x
}

// TestACacheHitIsNotASpeedUp: the prefix chapter's rows, output lengths
// from short to long answers: the hit ratio stays over 90% in every row,
// yet the throughput gain shrinks as decode takes over, staying under what
// the uncached run's prefill share allows; the surprise is the longest
// answers' row. (vLLM pull request #53395: 94.6% hits, 5.7-6.2% more
// throughput at concurrency 64.)
func TestACacheHitIsNotASpeedUp(t *testing.T) {
	x := preset(t, "prefix-cache")
	x.Requests = 400
	tab, err := Prefix(x, []int{64, 512, 2048}, 64)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range tab.Rows {
		t.Logf("output %4d: hit %.3f, TTFT P50 %.1f -> %.1f ms, throughput %.0f -> %.0f tok/s (%+.1f%%), prefill share %.1f%%",
			r.Output, r.HitRatio, r.TTFTOff*1e3, r.TTFTOn*1e3, r.ThroughputOff, r.ThroughputOn, 100*r.Gain, 100*r.PrefillShare)
		if r.HitRatio < 0.9 {
			t.Errorf("row %d: hit ratio %.3f", i, r.HitRatio)
		}
		if r.Gain > r.PrefillShare/(1-r.PrefillShare)*1.05 {
			t.Errorf("row %d: gain %.3f beyond the prefill share %.3f", i, r.Gain, r.PrefillShare)
		}
		if i > 0 && !(r.Gain < tab.Rows[i-1].Gain) {
			t.Errorf("row %d: the gain did not shrink with longer answers", i)
		}
		if !(r.TTFTOn < r.TTFTOff) {
			t.Errorf("row %d: caching did not lower TTFT", i)
		}
	}
	if last := tab.Rows[len(tab.Rows)-1]; tab.Surprise != len(tab.Rows)-1 || last.Gain >= 0.10 {
		t.Errorf("surprise row %d, the longest answers' gain %.3f: want that row, under 10%%", tab.Surprise, last.Gain)
	}
	x.SystemPrompt = 0
	if _, err := Prefix(x, []int{64}, 64); err == nil {
		t.Error("a workload sharing nothing accepted")
	}
}

// TestWhereShouldThisRequestGo: the routing chapter's table computes the
// prefix-aware router as the best and the stale signal's herd.
func TestWhereShouldThisRequestGo(t *testing.T) {
	x := preset(t, "routing")
	tab, err := Routing(x, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		t.Logf("%-17s stale %.1f s: hit %.3f, TTFT P50/P90/P99 %.1f/%.1f/%.1f ms, busiest %.0f%%, herd %d",
			r.Route, r.Stale, r.HitRatio, r.TTFTP50*1e3, r.TTFTP90*1e3, r.TTFTP99*1e3, 100*r.Busiest, r.Herd)
	}
	if tab.Rows[tab.Best].Route != "prefix-aware" {
		t.Errorf("best row %d (%s): want prefix-aware", tab.Best, tab.Rows[tab.Best].Route)
	}
	if tab.HerdRatio < 3 || !(tab.Rows[3].TTFTP99 > tab.Rows[1].TTFTP99) {
		t.Errorf("herd ratio %.1f, P99 stale %.1f ms vs fresh %.1f ms: want a herd and a worse P99", tab.HerdRatio, tab.Rows[3].TTFTP99*1e3, tab.Rows[1].TTFTP99*1e3)
	}
	x.Replicas = 1
	if _, err := Routing(x, 0.5); err == nil {
		t.Error("one replica accepted")
	}
}

// TestSpeculationIsABetOnIdleCompute: the speculation chapter's rates:
// speculation speeds one user up at a low rate and slows the engine past
// a crossover the table finds.
func TestSpeculationIsABetOnIdleCompute(t *testing.T) {
	x := preset(t, "speculative")
	tab, err := Speculative(x, []float64{1, 4, 16, 40, 80})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		t.Logf("%4g req/s: TPOT P50 %.2f -> %.2f ms (%.2fx), throughput %.0f -> %.0f tok/s", r.Rate, r.TPOTOff*1e3, r.TPOTOn*1e3, r.SpeedUp, r.ThroughputOff, r.ThroughputOn)
	}
	t.Logf("expected tokens per step %.3f; crossover at row %d", tab.Expected, tab.Crossover)
	if tab.Rows[0].SpeedUp < 1.5 {
		t.Errorf("one user's speed-up at 1 req/s is %.2f", tab.Rows[0].SpeedUp)
	}
	if tab.Crossover < 1 {
		t.Errorf("crossover at row %d: want one past the first rate", tab.Crossover)
	}
	x.SpecTokens = 0
	if _, err := Speculative(x, []float64{1}); err == nil {
		t.Error("no speculation accepted")
	}
}

// BenchmarkRouteOne is the cost of one row of the routing chapter's table
// (what the page computes before a moved slider's first new figure shows).
func BenchmarkRouteOne(b *testing.B) {
	x := preset(b, "routing")
	for _, st := range RouteSettings(0.5) {
		b.Run(string(st.Route)+fmt.Sprintf("-stale%g", st.Stale), func(b *testing.B) {
			for b.Loop() {
				if _, err := RouteOne(x, st.Route, st.Stale); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
