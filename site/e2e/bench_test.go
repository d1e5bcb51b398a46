package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"testing"
	"time"
)

// Budgets from the issue.
const (
	budgetResimMs   = 16.0              // one 1500-request re-simulation + redraw, p95
	budgetWireBytes = 3.5 * 1000 * 1000 // app.wasm as sent to a browser
	budgetFirstMs   = 1500.0            // first frame on loopback
)

// BenchmarkBrowser measures, in headless Chromium, what a lecture feels:
// the wasm's size on the wire, the time to the first frame, and the time a
// slider change takes to re-simulate 1500 requests and redraw. It reports
// the figures as metrics and fails when one is over its budget.
func BenchmarkBrowser(b *testing.B) {
	base := serve(b)

	// Wire size: what Chromium asks for is what it gets; check both encodings.
	for _, enc := range []string{"br", "gzip"} {
		req, _ := http.NewRequest("GET", base+"app.wasm", nil)
		req.Header.Set("Accept-Encoding", enc)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.Header.Get("Content-Encoding") == enc {
			b.ReportMetric(float64(n)/1e6, "MB-wasm-"+enc)
		}
	}

	ctx := browser(b)
	// First frame: from navigation to the app's first drawn frame, measured
	// by the page's own clock (navigation start is performance's zero).
	open(b, ctx, base+"?preset=demo2")
	first := eval[float64](b, ctx, `performance.now()`)
	// app.wasm (app.wasm?v=BUILD, or app.wasm.gz where the host does not
	// compress) is fetched by the page (to compile early) or by the frame.
	wire := eval[float64](b, ctx, `Math.max(-1, ...[window, document.getElementById("view").contentWindow].flatMap(w =>
		w.performance.getEntriesByType("resource").filter(e => /\/app\.wasm(\.gz)?$/.test(new URL(e.name).pathname)).map(e => e.transferSize)))`)
	if wire < 0 {
		b.Fatal("no app.wasm among the page's resources")
	}
	firstFrame := eval[float64](b, ctx, `window.servelabFirstFrameMs || -1`)
	if firstFrame < 0 {
		firstFrame = first
	}

	// Slider changes as a lecturer drags the rate up and back down: each
	// re-simulates 1500 requests and redraws.
	var costs []float64
	var rates []float64
	for r := 10.0; r <= 40; r += 2 {
		rates = append(rates, r)
	}
	for r := 39.0; r >= 11; r -= 2 {
		rates = append(rates, r)
	}
	for i := 0; i < 3; i++ {
		for _, r := range rates {
			gen := eval[int](b, ctx, `servelab.timings().gen`)
			setRange(b, ctx, "rate", r)
			waitFor(b, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d`, gen), "the redraw")
			t := eval[map[string]float64](b, ctx, `servelab.timings()`)
			costs = append(costs, t["simMs"]+t["drawMs"])
		}
	}
	// The first sweep runs while the browser still tiers up its compiler.
	warm := costs[len(rates):]
	p50, p95 := quantiles(warm)
	b.ReportMetric(p50, "ms-resim-p50")
	b.ReportMetric(p95, "ms-resim-p95")
	b.ReportMetric(firstFrame, "ms-first-frame")
	b.ReportMetric(wire/1e6, "MB-wasm-transferred")
	b.Logf("start-up (ms since navigation): %s", eval[string](b, ctx, `JSON.stringify(window.servelabMarks)`))
	b.Logf("re-simulate+redraw (1500 requests): p50 %.1f ms, p95 %.1f ms (budget %.0f); first frame %.0f ms (budget %.0f); app.wasm transferred %.2f MB (budget %.1f)",
		p50, p95, budgetResimMs, firstFrame, budgetFirstMs, wire/1e6, budgetWireBytes/1e6)
	if p95 > budgetResimMs {
		b.Errorf("re-simulation + redraw p95 %.1f ms > %.0f ms", p95, budgetResimMs)
	}
	if firstFrame > budgetFirstMs {
		b.Errorf("first frame after %.0f ms > %.0f ms", firstFrame, budgetFirstMs)
	}
	if wire > budgetWireBytes {
		b.Errorf("app.wasm took %.2f MB on the wire > %.1f MB", wire/1e6, budgetWireBytes/1e6)
	}
}

// budgetCompareMs is compare mode's budget: both re-simulations (1500
// requests each) and the redraw of both panes, p95.
const budgetCompareMs = 33.0

// BenchmarkBrowserCompare measures compare mode in headless Chromium: a
// rate change re-simulates run A (prefill-first) and run B (chunked 512),
// 1500 requests each, and redraws both panes. It reports p50/p95 and fails
// over the budget.
func BenchmarkBrowserCompare(b *testing.B) {
	ctx := browser(b)
	open(b, ctx, serve(b)+"?preset=compare-chunking")
	waitFor(b, ctx, `servelab.figures().b && servelab.figures().b.submitted === 1500`, "both runs")
	var rates []float64
	for r := 10.0; r <= 40; r += 2 {
		rates = append(rates, r)
	}
	for r := 39.0; r >= 11; r -= 2 {
		rates = append(rates, r)
	}
	var costs []float64
	var collected []bool // a garbage collection ran during the sample
	var parts [][3]float64
	// sweep moves the rate through rates once, each change after a pause.
	sweep := func(pause time.Duration) {
		for _, r := range rates {
			time.Sleep(pause)
			before := eval[map[string]float64](b, ctx, `servelab.timings()`)
			setRange(b, ctx, "rate", r)
			waitFor(b, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d`, int(before["gen"])), "the redraw")
			t := eval[map[string]float64](b, ctx, `servelab.timings()`)
			costs = append(costs, t["simMs"]+t["drawMs"])
			collected = append(collected, t["gcs"] > before["gcs"])
			parts = append(parts, [3]float64{t["simMs"] - t["simMsB"], t["simMsB"], t["drawMs"]})
		}
	}
	sweep(0) // while the browser tiers up its compiler: not counted
	cpu := cpuPerChange(b, ctx, len(rates)*2, func() { sweep(0); sweep(0) })
	for k, name := range []string{"A's simulation", "B's simulation", "the redraw"} {
		var xs []float64
		for _, p := range parts[len(rates):] {
			xs = append(xs, p[k])
		}
		sort.Float64s(xs)
		b.Logf("%s: p50 %.1f ms, p95 %.1f ms", name, xs[len(xs)/2], xs[(len(xs)*95+99)/100-1])
	}
	if n := eval[float64](b, ctx, `servelab.figures().b.submitted`); n != 1500 {
		b.Fatalf("run B has %v requests, want 1500", n)
	}
	logCollections(b, costs[len(rates):], collected[len(rates):])
	p50, p95 := quantiles(costs[len(rates):])
	b.ReportMetric(p50, "ms-compare-p50")
	b.ReportMetric(p95, "ms-compare-p95")
	b.Logf("compare mode, both re-simulations + redraw (1500 requests each): p50 %.1f ms, p95 %.1f ms (budget %.0f); %s", p50, p95, budgetCompareMs, cpu)
	// The same changes a moment apart (a lecturer's clicks, not a drag):
	// the browser has drawn the last change's frame before the next comes.
	// Reported beside the figure above, to tell the page's own cost from
	// its share of a machine still busy drawing; the budget is checked on
	// the changes back to back.
	n := len(costs)
	cpu = cpuPerChange(b, ctx, len(rates), func() { sweep(300 * time.Millisecond) })
	r50, r95 := quantiles(costs[n:])
	b.ReportMetric(r50, "ms-compare-rested-p50")
	b.ReportMetric(r95, "ms-compare-rested-p95")
	b.Logf("the same, each change 300 ms after the last was drawn: p50 %.1f ms, p95 %.1f ms; %s", r50, r95, cpu)
	if p95 > budgetCompareMs {
		b.Errorf("compare re-simulations + redraw p95 %.1f ms > %.0f ms", p95, budgetCompareMs)
	}
}

// quantiles is the p50 and p95 (nearest rank) of xs, which it sorts.
func quantiles(xs []float64) (p50, p95 float64) {
	sort.Float64s(xs)
	return xs[len(xs)/2], xs[(len(xs)*95+99)/100-1]
}

// cpuPerChange runs changes (n slider changes) and says what Chromium's GPU
// process and renderers took per change, in CPU time (where /proc tells).
func cpuPerChange(b *testing.B, ctx context.Context, n int, changes func()) string {
	g0, r0, ok := chromiumCPU(ctx)
	changes()
	g1, r1, _ := chromiumCPU(ctx)
	if !ok {
		return "no /proc: the browser's CPU is not reported"
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(n) }
	return fmt.Sprintf("per change the browser's GPU process took %.0f ms of CPU, its renderers %.0f ms (%d cores here, %s)", per(g1-g0), per(r1-r0), runtime.NumCPU(), compositing())
}

// budgetLabMs is the budget for a lab preset's slider change: the
// re-simulation (a simulated minute of 16 streams) and the redraw, p95.
const budgetLabMs = 33.0

// BenchmarkBrowserLab measures, in headless Chromium, a slider change on
// each lab preset: the long prompt's length moves, the minute of closed
// loop is simulated again and redrawn. It reports p50/p95 (page clock).
func BenchmarkBrowserLab(b *testing.B) {
	base := serve(b)
	ctx := browser(b)
	for _, preset := range []string{"lab-unchunked", "lab-chunked"} {
		open(b, ctx, base+"?preset="+preset)
		var costs []float64
		var collected []bool
		for i := 0; i < 3; i++ {
			for _, v := range []float64{24000, 28000, 32000, 36000, 40000, 30000, 26000, 34000, 38000, 32000} {
				before := eval[map[string]float64](b, ctx, `servelab.timings()`)
				setRange(b, ctx, "long", v)
				waitFor(b, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d`, int(before["gen"])), "the redraw")
				t := eval[map[string]float64](b, ctx, `servelab.timings()`)
				costs = append(costs, t["simMs"]+t["drawMs"])
				collected = append(collected, t["gcs"] > before["gcs"])
			}
		}
		logCollections(b, costs[10:], collected[10:])
		warm := costs[10:] // the first sweep runs while the browser tiers up its compiler
		p50, p95 := quantiles(warm)
		b.ReportMetric(p50, "ms-"+preset+"-p50")
		b.ReportMetric(p95, "ms-"+preset+"-p95")
		b.Logf("%s: long prompt moved → re-simulated and redrawn: p50 %.1f ms, p95 %.1f ms (budget %.0f)", preset, p50, p95, budgetLabMs)
		if p95 > budgetLabMs {
			b.Errorf("%s: p95 %.1f ms > %.0f ms", preset, p95, budgetLabMs)
		}
	}
}

// budgetPanelsMs is the budget for the goodput and latency-vs-rate
// panels after a slider change.
const budgetPanelsMs = 150.0

// BenchmarkBrowserPanels measures, in headless Chromium, how long after a
// rate change on the demo-2 preset both background panels (the
// latency-vs-rate sweep and the goodput search) are shown: from the input
// event to the goodput on the page, on the page's own clock, the settings'
// rest before the panels start included.
func BenchmarkBrowserPanels(b *testing.B) {
	ctx := browser(b)
	open(b, ctx, serve(b)+"?preset=demo2")
	waitFor(b, ctx, `servelab.figures().goodput >= 0`, "the first goodput")
	var took []float64
	for _, r := range []float64{12, 14, 16, 18, 20, 22, 16, 13, 19, 15, 21} {
		eval[any](b, ctx, fmt.Sprintf(`(() => { window.servelabPanelsMs = 0; const e = document.getElementById("rate"); e.value = %q; window.servelabMovedMs = performance.now(); e.dispatchEvent(new Event("input", {bubbles: true})); })()`, fmt.Sprint(r)))
		waitFor(b, ctx, `window.servelabPanelsMs > 0`, "the panels")
		took = append(took, eval[float64](b, ctx, `window.servelabPanelsMs - window.servelabMovedMs`))
	}
	warm := append([]float64(nil), took[1:]...)
	sort.Float64s(warm)
	p50, worst := warm[len(warm)/2], warm[len(warm)-1]
	b.ReportMetric(p50, "ms-panels-p50")
	b.ReportMetric(worst, "ms-panels-worst")
	b.Logf("rate moved → latency-vs-rate and goodput shown: p50 %.0f ms, worst %.0f ms (all %v; budget %.0f)", p50, worst, took, budgetPanelsMs)
	if p50 > budgetPanelsMs {
		b.Errorf("panels p50 %.0f ms > %.0f ms", p50, budgetPanelsMs)
	}
}

// logCollections says how many samples a garbage collection ran in, and
// the p50/p95 of the samples with and without one (where a tail comes from).
func logCollections(b *testing.B, costs []float64, collected []bool) {
	var with, without []float64
	for i, c := range costs {
		if collected[i] {
			with = append(with, c)
		} else {
			without = append(without, c)
		}
	}
	q := func(xs []float64) string {
		if len(xs) == 0 {
			return "none"
		}
		xs = append([]float64(nil), xs...)
		sort.Float64s(xs)
		return fmt.Sprintf("p50 %.1f ms, p95 %.1f ms", xs[len(xs)/2], xs[(len(xs)*95+99)/100-1])
	}
	b.Logf("%d of %d samples ran a garbage collection (%s); without one: %s", len(with), len(costs), q(with), q(without))
}
