package e2e

import (
	"fmt"
	"sort"
	"testing"
)

// budgetChapterMs is the goal for a chapter's table after a slider change.
const budgetChapterMs = 150.0

// BenchmarkChapterTables reports, per chapter, how long its table takes to
// be recomputed and shown after one of its sliders moves, in headless
// Chromium: from the input event to the table on the page (the page's own
// clock). It reports; it does not fail on the goal.
func BenchmarkChapterTables(b *testing.B) {
	base := serve(b)
	ctx := browser(b)
	moves := []struct {
		chapter, key string
		vals         []float64
	}{
		{"demo1", "batch", []float64{48, 32, 64, 16, 40, 24}},
		{"demo2", "prompt", []float64{448, 512, 384, 576, 320, 512}},
		{"demo3", "slotpot", []float64{20, 15, 25, 12, 18, 15}},
		{"demo4", "rate", []float64{35, 40, 45, 30, 38, 42}},
		{"lab", "budget", []float64{1024, 2048, 512, 4096, 1536, 2048}},
	}
	for _, m := range moves {
		openChapter(b, ctx, base+"?chapter="+m.chapter+"&lang=en")
		var took, fresh, gaps []float64
		// A value the chapter showed before may come from the page's cache
		// of results: the new values are reported apart.
		seen := map[float64]bool{eval[float64](b, ctx, fmt.Sprintf(`+document.getElementById("ch-%s").value`, m.key)): true}
		for i, v := range m.vals {
			gen := eval[int](b, ctx, `servelab.lecture().gen`)
			// The longest gap between the page's frames while the table is
			// computed: how long the page may not answer (issue 14: < 100 ms).
			eval[any](b, ctx, `(() => { window.benchGap = 0; let last = performance.now(); window.benchRAF = true; const f = (now) => { window.benchGap = Math.max(window.benchGap, now - last); last = now; if (window.benchRAF) requestAnimationFrame(f); }; requestAnimationFrame(f); })()`)
			eval[any](b, ctx, fmt.Sprintf(`(() => { const s = document.getElementById("ch-%s"); s.value = %g; window.servelabMovedMs = performance.now(); s.dispatchEvent(new Event("input", {bubbles: true})); })()`, m.key, v))
			waitFor(b, ctx, fmt.Sprintf(`servelab.lecture().gen > %d && servelab.lecture().done`, gen), "the chapter's table")
			took = append(took, eval[float64](b, ctx, `window.servelabChapterShownMs - window.servelabMovedMs`))
			gaps = append(gaps, eval[float64](b, ctx, `(() => { window.benchRAF = false; return window.benchGap; })()`))
			if i > 0 && !seen[v] {
				fresh = append(fresh, took[i])
			}
			seen[v] = true
		}
		warm := append([]float64(nil), took[1:]...) // the first change runs while the compiler tiers up
		sort.Float64s(warm)
		p50, worst := warm[len(warm)/2], warm[len(warm)-1]
		b.ReportMetric(p50, "ms-"+m.chapter+"-p50")
		warmGaps := append([]float64(nil), gaps[1:]...)
		sort.Float64s(warmGaps)
		b.ReportMetric(warmGaps[len(warmGaps)-1], "ms-"+m.chapter+"-frame-max")
		sort.Float64s(fresh)
		if len(fresh) > 0 {
			b.ReportMetric(fresh[len(fresh)/2], "ms-"+m.chapter+"-p50-new")
		}
		verdict := "within"
		if p50 > budgetChapterMs {
			verdict = "OVER"
		}
		b.Logf("chapter %s: slider %s → table shown: p50 %.0f ms, worst %.0f ms (all %v; values not shown before: %v) — %s the %.0f ms goal; longest frame gap while computing %v ms", m.chapter, m.key, p50, worst, took, fresh, verdict, budgetChapterMs, gaps)
	}
}
