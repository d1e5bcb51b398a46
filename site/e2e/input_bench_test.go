package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// inputScript defines window.inputToScreen(id, value, textSel): it moves
// the control id to value as a user would (the value, then an input
// event), then watches, one animation frame after another, for the text
// under textSel to change (the frame that paints it) and for the canvas's
// pixels to change (a 96×48 copy compared with the one before the move).
// It resolves to {text, canvas}: ms from the input event, each absent
// when it did not change within 5 s.
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
  const mo = new MutationObserver(() => { if (textAt < 0 && textEl.textContent !== text0) textAt = performance.now(); });
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
    if ((res.text !== undefined && res.canvas !== undefined) || now - t0 > 5000) { mo.disconnect(); resolve(res); return; }
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

// inputCase is one kind of control the issue times: where it is, the
// slider moved, the values it visits (each new to the page's caches), the
// text that answers, and what must happen before the first move.
type inputCase struct {
	name, query, slider, text string
	values                    []float64
	before                    string // JS predicate for prepare to be possible
	prepare                   string // JS run once the page is drawn (e.g. answering the chapter's prediction)
	ready                     string // JS predicate for the page to be ready for the moves
}

// sweep is n values from lo by step, up then down between new values.
func sweep(lo, step float64, n int) []float64 {
	var v []float64
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			v = append(v, lo+float64(i/2)*step)
		} else {
			v = append(v, lo+float64(n)*step-float64(i/2)*step)
		}
	}
	return v
}

var inputCases = []inputCase{
	{name: "main rate slider", query: "?preset=demo2", slider: "rate", text: "#figures", values: sweep(10.5, 1, 20)},
	{name: "chapter slider (demo 4's rate)", query: "?chapter=demo4", slider: "ch-rate", text: "#ch-table", values: sweep(20.5, 1, 20),
		before: `!!document.querySelector('#ch-predict [data-act=answer]')`, prepare: `document.querySelector('#ch-predict [data-act=answer]').click()`, ready: `servelab.lecture().done && document.querySelector("#ch-table table")`},
	{name: "lab preset (long prompt)", query: "?preset=lab-chunked", slider: "long", text: "#figures", values: sweep(16384, 512, 20)},
	{name: "compare mode (rate)", query: "?preset=compare-chunking", slider: "rate", text: "#cmp-body", values: sweep(10.5, 1, 20),
		ready: `servelab.figures().b && servelab.figures().b.submitted > 0`},
}

// BenchmarkBrowserInputToScreen times what a person sees: from a control's
// input event to its changed text and to changed canvas pixels, for a
// main slider, a chapter slider, a lab preset and compare mode, at normal
// speed and with the CPU slowed 4× (a student's cheap laptop). Each move
// waits 300 ms after the last answer, as a hand moving a slider step by
// step would; the first 5 moves (the compiler tiering up) are not counted.
// It reports p50 and p95 of each and the moves that never changed.
func BenchmarkBrowserInputToScreen(b *testing.B) {
	base := serve(b)
	for _, rate := range []float64{1, 4} {
		for _, c := range inputCases {
			name := fmt.Sprintf("%s at %gx CPU", c.name, rate)
			ctx := browser(b)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: keepCanvasScript}); err != nil {
				b.Fatal(err)
			}
			open(b, ctx, base+c.query)
			if c.before != "" {
				waitFor(b, ctx, c.before, name+": its controls")
			}
			if c.prepare != "" {
				eval[chromedp.Void](b, ctx, c.prepare)
			}
			if c.ready != "" {
				waitFor(b, ctx, c.ready, name+": ready")
			}
			eval[chromedp.Void](b, ctx, inputScript)
			if _, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate}); err != nil {
				b.Fatal(err)
			}
			text, canvas, missed := inputMoves(b, ctx, c)
			if len(text) == 0 {
				b.Fatalf("%s: no move changed the text or the canvas within 5 s", name)
			}
			tp50, tp95 := quantiles(text)
			cp50, cp95 := quantiles(canvas)
			key := strings.NewReplacer(" ", "-", "(", "", ")", "", "'", "").Replace(c.name) + fmt.Sprintf("-%gx", rate)
			b.ReportMetric(tp50, "ms-text-p50-"+key)
			b.ReportMetric(tp95, "ms-text-p95-"+key)
			b.ReportMetric(cp50, "ms-canvas-p50-"+key)
			b.ReportMetric(cp95, "ms-canvas-p95-"+key)
			b.Logf("%-40s text p50 %6.0f p95 %6.0f ms · canvas p50 %6.0f p95 %6.0f ms · %d moves, %s", name, tp50, tp95, cp50, cp95, len(text)+missed, missedWords(missed))
		}
	}
}

// inputMoves makes c's moves and returns the counted times to text and to
// canvas, and how many moves changed neither within 5 s.
func inputMoves(b *testing.B, ctx context.Context, c inputCase) (text, canvas []float64, missed int) {
	for i, v := range c.values {
		time.Sleep(300 * time.Millisecond)
		r, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](fmt.Sprintf(`inputToScreen(%q, %v, %q)`, c.slider, v, c.text), chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatalf("%s: move %d: %v", c.name, i, err)
		}
		if i < 5 {
			continue
		}
		t, okT := r["text"]
		cv, okC := r["canvas"]
		if !okT && !okC {
			missed++
			continue
		}
		text = append(text, orInf(t, okT))
		canvas = append(canvas, orInf(cv, okC))
	}
	return text, canvas, missed
}

func orInf(v float64, ok bool) float64 {
	if ok {
		return v
	}
	return math.Inf(1)
}

func missedWords(n int) string {
	if n == 0 {
		return "every one answered"
	}
	return fmt.Sprintf("%d answered nothing in 5 s", n)
}
