package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"servelab/wasm/play"
)

// inputScript defines window.inputToScreen(id, value, textSel): it moves
// the control id to value as a user would (the value, then an input
// event), then watches, one animation frame after another, for the text
// under textSel to change (the frame that paints it) and for the canvas's
// pixels to change (a 96×48 copy compared with the one before the move).
// It resolves to {text, canvas}: ms from the input event, each absent
// when it did not change within 5 s (the canvas: within 1.5 s of the text).
const inputScript = `window.inputToScreen = (id, value, textSel) => new Promise((resolve) => {
  const cv = document.getElementById("view").contentDocument.querySelector("canvas");
  const small = document.createElement("canvas");
  small.width = 96; small.height = 48;
  const g = small.getContext("2d", {willReadFrequently: true});
  const sig = () => {
    g.drawImage(cv, 0, 0, 96, 48);
    const d = g.getImageData(0, 0, 96, 48).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 4) h = (Math.imul(h, 31) + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
    return h;
  };
  const textEl = document.querySelector(textSel);
  const text0 = textEl.textContent;
  let textAt = -1;
  const mo = new MutationObserver(() => {
    if (textAt >= 0 || textEl.textContent === text0) return;
    textAt = performance.now();
    if (window.servelabTrace) { // (traced: what changed first, to tell an answer from an echo of the input)
      const t1 = textEl.textContent; let i = 0;
      while (i < t1.length && t1[i] === text0[i]) i++;
      window.servelabChanged = JSON.stringify(text0.slice(Math.max(0, i - 40), i + 40)) + " → " + JSON.stringify(t1.slice(Math.max(0, i - 40), i + 40));
    }
  });
  mo.observe(textEl, {subtree: true, childList: true, characterData: true});
  const base = sig();
  const el = document.getElementById(id);
  el.value = String(value);
  const t0 = performance.now();
  el.dispatchEvent(new Event("input", {bubbles: true}));
  const res = {};
  const frame = () => {
    const now = performance.now();
    if (textAt >= 0 && res.text === undefined) res.text = now - t0;
    if (res.canvas === undefined && sig() !== base) res.canvas = now - t0;
    // Done when both changed, 5 s on, or 1.5 s after the text changed (a
    // slider that moves only a table leaves the canvas as it was).
    if ((res.text !== undefined && res.canvas !== undefined) || now - t0 > 5000 || (res.text !== undefined && now - t0 > res.text + 1500)) { mo.disconnect(); resolve(res); return; }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
});`

// keepCanvasScript asks every WebGL context for preserveDrawingBuffer, so
// that inputScript can copy the canvas's pixels outside ebiten's own frame
// (without it the copy is blank). It costs the app a buffer copy a frame:
// the canvas times measured are, if anything, a little long.
const keepCanvasScript = `(() => {
  const get = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (type, attrs) {
    if (type === "webgl" || type === "webgl2") attrs = Object.assign({}, attrs, {preserveDrawingBuffer: true});
    return get.call(this, type, attrs);
  };
})()`

// inputCase is one control the issue times: where it is, the slider
// moved, the text that answers, and what must happen before the first move.
type inputCase struct {
	name, query, slider, text string
	before                    string // JS predicate for prepare to be possible
	prepare                   string // JS run once the page is drawn (e.g. answering the chapter's prediction)
	ready                     string // JS predicate for the page to be ready for the moves
}

// inputMovesN moves are made per case and build; the first inputWarm (the
// compiler tiering up) are not counted.
const (
	inputMovesN = 15
	inputWarm   = 3
)

// inputCases are the controls timed: the main rate and budget sliders, a
// lab preset's slider and compare mode's rate, and every slider of every
// chapter (each chapter opened at its preset, its prediction answered so
// that its table and figure show).
func inputCases() []inputCase {
	cs := []inputCase{
		{name: "main rate slider", query: "?preset=demo2", slider: "rate", text: "#figures"},
		{name: "main budget slider", query: "?preset=demo4", slider: "budget", text: "#figures"},
		{name: "lab preset (long prompt)", query: "?preset=lab-chunked", slider: "long", text: "#figures"},
		{name: "compare mode (rate)", query: "?preset=compare-chunking", slider: "rate", text: "#cmp-body",
			ready: `servelab.figures().b && servelab.figures().b.submitted > 0`},
	}
	for _, ch := range play.Chapters {
		for _, k := range ch.Moves {
			cs = append(cs, inputCase{name: "chapter " + ch.ID + " " + k, query: "?chapter=" + ch.ID, slider: "ch-" + k, text: "#ch-table",
				before: `!!document.querySelector('#ch-predict [data-act=answer]')`, prepare: `document.querySelector('#ch-predict [data-act=answer]').click()`,
				ready: `servelab.lecture().done && !!document.querySelector("#ch-table table, #ch-table svg, #ch-table p")`})
		}
	}
	return cs
}

// sliderValues is n values for the range input id around its value, a
// hand's steps either side (each new to the page's caches where the
// range has that many steps), as the page reads them (min, max, step).
func sliderValues(b testing.TB, ctx context.Context, id string, n int) []float64 {
	r := eval[[]float64](b, ctx, fmt.Sprintf(`(() => { const e = document.getElementById(%q); return [+e.min, +e.max, +e.step || 1, +e.value]; })()`, id))
	lo, hi, step, v := r[0], r[1], r[2], r[3]
	s := step // a hand's step: the slider's own, or a 600th of its range
	if (hi-lo)/step > 600 {
		s = math.Round((hi-lo)/600/step) * step
	}
	var out []float64
	for i := 1; len(out) < n && i < 4*n; i++ {
		d := float64((i+1)/2) * s
		if i%2 == 0 {
			d = -d
		}
		x := math.Round((v+d)/step) * step
		if x < lo || x > hi {
			x = math.Round((v-d)/step) * step // the other side, where this one is out of range
		}
		if x >= lo && x <= hi && x != v && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		b.Fatalf("slider %s has no value but %g (min %g, max %g, step %g)", id, v, lo, hi, step)
	}
	for i, distinct := 0, len(out); len(out) < n; i++ { // a slider of few steps: its values again
		out = append(out, out[i%distinct])
	}
	return out
}

// inputTab is one build's page, ready for a case's moves.
type inputTab struct {
	ctx    context.Context
	values []float64
	text   []float64 // ms to the changed text, of the moves that changed it
	canvas []float64 // ms to the changed canvas, of the moves that changed it
	moves  int       // the moves counted
}

// openInputTab opens c on the build served at base, makes it ready and
// slows its CPU by rate.
func openInputTab(b *testing.B, base string, c inputCase, rate float64) *inputTab {
	ctx := browser(b)
	src := keepCanvasScript
	if inputTrace {
		src += ";window.servelabTrace = [];" + loafScript // the app notes its steps (wasm/trace.go)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		b.Fatal(err)
	}
	open(b, ctx, base+c.query)
	if c.before != "" {
		waitFor(b, ctx, c.before, c.name+": its controls")
	}
	if c.prepare != "" {
		eval[chromedp.Void](b, ctx, c.prepare)
	}
	if c.ready != "" {
		waitFor(b, ctx, c.ready, c.name+": ready")
	}
	eval[chromedp.Void](b, ctx, inputScript)
	if _, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate}); err != nil {
		b.Fatal(err)
	}
	return &inputTab{ctx: ctx, values: sliderValues(b, ctx, c.slider, inputMovesN)}
}

// loafScript notes, with the app's steps, each long animation frame the
// browser reports: its length and where its time went (script, the
// rendering's start, style and layout), with the scripts that took
// more than 5 ms.
const loafScript = `new PerformanceObserver((l) => { for (const e of l.getEntries()) {
  const ss = e.scripts.filter((s) => s.duration > 5).map((s) => s.invoker.slice(0, 40) + ":" + Math.round(s.duration)).join(",");
  window.servelabTrace.push(["LOAF(" + Math.round(e.duration) + " render@" + Math.round(e.renderStart - e.startTime) + " layout@" + Math.round(e.styleAndLayoutStart - e.startTime) + " " + ss + ")", e.startTime]);
} }).observe({type: "long-animation-frame", buffered: false});`

// inputTrace (SERVELAB_INPUT_TRACE=1) logs, for every move, the app's own
// steps with their ms from the first: the event, its handling, a chapter's
// table, the paint, the re-simulation and its landing, the canvas's draw.
var inputTrace = os.Getenv("SERVELAB_INPUT_TRACE") != ""

// move makes the tab's move i and keeps its times once warm.
func (t *inputTab) move(b *testing.B, c inputCase, i int) {
	if inputTrace {
		eval[chromedp.Void](b, t.ctx, `window.servelabTrace.length = 0; window.servelabChanged = ""`)
	}
	r, err := chromedp.Run(t.ctx, chromedp.Evaluate[map[string]float64](fmt.Sprintf(`inputToScreen(%q, %v, %q)`, c.slider, t.values[i], c.text), chromedp.EvalAwaitPromise))
	if err != nil {
		b.Fatalf("%s: move %d: %v", c.name, i, err)
	}
	if inputTrace {
		steps := eval[string](b, t.ctx, `(() => { const a = window.servelabTrace; return a.length ? a.map(x => x[0] + "@" + Math.round(x[1] - a[0][1])).join(" ") : ""; })()`)
		changed := eval[string](b, t.ctx, `window.servelabChanged || ""`)
		b.Logf("%s move %d: text %.0f canvas %.0f ms: %s; the text's first change: %s", c.name, i, r["text"], r["canvas"], steps, changed)
	}
	if i < inputWarm {
		return
	}
	t.moves++
	if v, ok := r["text"]; ok {
		t.text = append(t.text, v)
	}
	if v, ok := r["canvas"]; ok {
		t.canvas = append(t.canvas, v)
	}
}

// BenchmarkBrowserInputToScreen times what a person sees: from a control's
// input event to its changed text and to changed canvas pixels, for the
// main rate and budget sliders, a lab preset, compare mode and every
// chapter slider, at normal speed and with the CPU slowed 4× (a student's
// cheap laptop). Each move waits 300 ms after the last answer, as a hand
// moving a slider step by step would. With SERVELAB_BASE_SITE naming
// another build's site directory (say a worktree of main after `make
// wasm-app`), each case runs on both builds in the same run, their moves
// alternating, so that the machine's noise falls on both alike.
// SERVELAB_INPUT_CASES (a regexp on the case names) and
// SERVELAB_INPUT_RATES ("1,4") narrow it; SERVELAB_INPUT_TRACE=1 logs
// each move's steps inside the app, the browser's long animation frames
// and the text's first change (an answer, not an echo of the input: a
// caption that repeated the slider's value before the figures came was
// once timed as the answer). It reports p50 and p95 of each,
// over the moves that changed it, and how many did (a slider that moves
// only a table leaves the canvas as it was).
func BenchmarkBrowserInputToScreen(b *testing.B) {
	type build struct{ name, base string }
	builds := []build{{"this", serve(b)}}
	if dir := os.Getenv("SERVELAB_BASE_SITE"); dir != "" {
		builds = append(builds, build{"base", serveDir(b, dir)})
	}
	rates := []float64{1, 4}
	if s := os.Getenv("SERVELAB_INPUT_RATES"); s != "" {
		rates = nil
		for _, f := range strings.Split(s, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				b.Fatalf("SERVELAB_INPUT_RATES: %v", err)
			}
			rates = append(rates, r)
		}
	}
	pick := regexp.MustCompile(os.Getenv("SERVELAB_INPUT_CASES"))
	for _, rate := range rates {
		for _, c := range inputCases() {
			if !pick.MatchString(c.name) {
				continue
			}
			// A sub-benchmark a case: its tabs close when it ends, so no
			// page left open takes the machine from the next case's.
			name := fmt.Sprintf("%s at %gx CPU", c.name, rate)
			b.Run(strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(name), func(b *testing.B) {
				tabs := make([]*inputTab, len(builds))
				for i, bd := range builds {
					tabs[i] = openInputTab(b, bd.base, c, rate)
				}
				for i := 0; i < inputMovesN; i++ {
					for k := range tabs {
						time.Sleep(300 * time.Millisecond)
						tabs[(i+k)%len(tabs)].move(b, c, i) // the builds take turns going first
					}
				}
				for i, t := range tabs {
					if len(t.text) == 0 {
						b.Fatalf("%s (%s): no move changed the text within 5 s", name, builds[i].name)
					}
					tp50, tp95 := quantiles(t.text)
					cp50, cp95 := math.Inf(1), math.Inf(1)
					if len(t.canvas) > 0 {
						cp50, cp95 = quantiles(t.canvas)
					}
					key := builds[i].name
					b.ReportMetric(tp50, "ms-text-p50-"+key)
					b.ReportMetric(tp95, "ms-text-p95-"+key)
					if !math.IsInf(cp50, 1) {
						b.ReportMetric(cp50, "ms-canvas-p50-"+key)
						b.ReportMetric(cp95, "ms-canvas-p95-"+key)
					}
					b.Logf("%-4s %-40s text p50 %4.0f p95 %4.0f ms (%2d/%d) · canvas p50 %4s p95 %4s ms (%2d/%d)", builds[i].name, name, tp50, tp95, len(t.text), t.moves, ms(cp50), ms(cp95), len(t.canvas), t.moves)
				}
			})
		}
	}
}

// ms is a time in ms, "-" for one that never came.
func ms(v float64) string {
	if math.IsInf(v, 1) {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}
