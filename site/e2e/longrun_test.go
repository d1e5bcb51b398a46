package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// A re-simulation too long for one frame (20 000 requests) is spread over
// frames: the page keeps answering and says how far it has come, the last
// run stays drawn meanwhile, a newer change starts it over, and what lands
// is exactly the run of a page opened on the final settings.
func TestLongRunSpreadsOverFrames(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	const q = "?preset=demo2&n=20000&output=128"
	open(t, ctx, base+q)
	waitFor(t, ctx, `servelab.figures().submitted === 20000 && !servelab.status().simulating`, "the first run")
	first := eval[map[string]any](t, ctx, `servelab.figures()`)

	// Watch every frame: what the message line says, and the gaps between frames.
	eval[any](t, ctx, `(() => { window.__msgs = []; window.__gaps = []; let last = performance.now(); window.__on = true;
		const f = (now) => { window.__gaps.push(now - last); last = now;
			window.__msgs.push(servelab.status().simulating + "|" + (document.getElementById("message") || {}).textContent);
			if (window.__on) requestAnimationFrame(f); }; requestAnimationFrame(f); })()`)
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	setRange(t, ctx, "rate", 30)
	waitFor(t, ctx, `servelab.status().simulating && servelab.figures().simulating === true`, "the re-simulation under way")
	mid := eval[map[string]any](t, ctx, `servelab.figures()`)
	if mid["query"] != first["query"] {
		t.Errorf("while the new run is made the figures name its query %v, not the shown run's %v", mid["query"], first["query"])
	}
	if fmt.Sprint(mid["ttft"]) != fmt.Sprint(first["ttft"]) {
		t.Errorf("while the new run is made the figures changed: %v → %v", first["ttft"], mid["ttft"])
	}
	setRange(t, ctx, "rate", 31) // a newer change, while the first is under way
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().gen > %d && !servelab.status().simulating`, gen), "the run to land")
	msgs := eval[[]string](t, ctx, `(() => { window.__on = false; return window.__msgs; })()`)
	gaps := eval[[]float64](t, ctx, `window.__gaps`)
	got := eval[map[string]any](t, ctx, `servelab.figures()`)
	lands := eval[int](t, ctx, `servelab.timings().gen`) - gen

	progress := 0
	for _, m := range msgs {
		if strings.HasPrefix(m, "true|") && strings.Contains(m, "simulating") && strings.Contains(m, "%") {
			progress++
		}
	}
	worst, p99 := worstOf(gaps)
	t.Logf("%d frames while pending showed the progress; frames %d, worst gap %.0f ms, p99 %.0f ms; %d run(s) landed; simulation %v ms of CPU",
		progress, len(gaps), worst, p99, lands, eval[float64](t, ctx, `servelab.timings().simMs`))
	if progress < 2 {
		t.Errorf("the progress was shown in %d frames: %q", progress, msgs)
	}
	if lands != 1 {
		t.Errorf("%d runs landed for two changes in a row, want 1 (the newer cancels the older)", lands)
	}
	// The test's 1000 ms fails only a plainly held page; the log prints the figure.
	if worst > 1000 {
		t.Errorf("the page was held %.0f ms", worst)
	}
	if got["simulating"] != nil || got["submitted"] != 20000.0 || got["completed"] != 20000.0 {
		t.Errorf("landed figures: simulating %v, %v of %v completed", got["simulating"], got["completed"], got["submitted"])
	}

	ctx2 := browser(t) // a second page at once: a context of its own
	open(t, ctx2, base+q+"&rate=31")
	waitFor(t, ctx2, `servelab.figures().submitted === 20000 && !servelab.status().simulating`, "the fresh page's run")
	want := eval[map[string]any](t, ctx2, `servelab.figures()`)
	for _, k := range []string{"ttft", "tpot", "itl", "itl_max", "throughput_tok_s", "attainment"} {
		if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
			t.Errorf("%s: %v after the moves, %v on a page opened at rate 31", k, got[k], want[k])
		}
	}
}
