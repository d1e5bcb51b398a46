package e2e

import (
	"testing"
)

// The latency-vs-rate view's points are the page's own experiments: the
// point at the page's rate is the run shown, and the point at half the
// rate is what a page opened at that rate shows.
func TestSweepPointsAreThePagesRuns(t *testing.T) {
	base := serve(t)
	ctx := tab(t)
	open(t, ctx, base+"?preset=demo2&rate=12")
	waitFor(t, ctx, `servelab.figures().goodput >= 0 && servelab.figures().latency_vs_rate.length === 7`, "the background figures")
	f := eval[map[string]any](t, ctx, `servelab.figures()`)
	pts := f["latency_vs_rate"].([]any)
	point := func(rate float64) map[string]any {
		for _, p := range pts {
			if m := p.(map[string]any); m["rate"] == rate {
				return m
			}
		}
		t.Fatalf("no point at %v req/s in %v", rate, pts)
		return nil
	}
	same := func(what string, p map[string]any, g map[string]any) {
		t.Helper()
		for _, c := range [][2]string{{"ttft_p90", "ttft"}, {"tpot_p90", "tpot"}} {
			if want := g[c[1]].(map[string]any)["p90"]; p[c[0]] != want {
				t.Errorf("%s: %s %v, the page shows %v", what, c[0], p[c[0]], want)
			}
		}
		if p["attainment"] != g["attainment"] {
			t.Errorf("%s: attainment %v, the page shows %v", what, p["attainment"], g["attainment"])
		}
	}
	same("the point at the page's rate", point(12), f)

	ctx2 := browser(t) // a second page at once: a context of its own
	open(t, ctx2, base+"?preset=demo2&rate=6")
	waitFor(t, ctx2, `servelab.figures().completed === 1500`, "the run at 6 req/s")
	same("the point at 6 req/s", point(6), eval[map[string]any](t, ctx2, `servelab.figures()`))
}

// While a rate change's latency-vs-rate points are computed, the chart
// of the last points holds its place, dimmed: the side panel below it does
// not jump up and back at every slider move.
func TestRateChartHoldsItsPlaceWhileComputing(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2&rate=12")
	waitFor(t, ctx, `(servelab.figures().latency_vs_rate || []).length > 0`, "the latency-vs-rate points")
	// Every state the chart passes through, from the change until the new
	// points are shown: its height and whether it is the dimmed old chart.
	h0 := eval[float64](t, ctx, `(() => {
		const el = document.getElementById("rate-chart");
		window.__chart = [];
		new MutationObserver(() => window.__chart.push({h: el.getBoundingClientRect().height, stale: !!el.querySelector(".stale svg")}))
			.observe(el, {childList: true, subtree: true});
		return el.getBoundingClientRect().height;
	})()`)
	eval[string](t, ctx, `window.__before = JSON.stringify(servelab.figures().latency_vs_rate)`)
	setRange(t, ctx, "rate", 14)
	waitFor(t, ctx, `(servelab.figures().latency_vs_rate || []).length > 0 && JSON.stringify(servelab.figures().latency_vs_rate) !== window.__before`, "the new points")
	type state struct {
		H     float64 `json:"h"`
		Stale bool    `json:"stale"`
	}
	states := eval[[]state](t, ctx, `window.__chart`)
	sawStale := false
	for _, s := range states {
		sawStale = sawStale || s.Stale
		if s.H < 0.8*h0 {
			t.Errorf("the chart shrank to %.0f px (from %.0f) while computing: states %v", s.H, h0, states)
			break
		}
	}
	if !sawStale {
		t.Errorf("the old chart was never shown dimmed while the new points were computed: states %v", states)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#rate-chart .stale").length`); n != 0 {
		t.Errorf("%d dimmed charts left once the new points are shown", n)
	}
}
