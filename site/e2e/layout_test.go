package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"servelab/wasm/play"
)

// projectorBox is where projector mode puts a chapter, in CSS pixels of the
// viewport, and the smallest text on screen.
type projectorBox struct {
	InnerH, ScrollH          float64
	TitleTop, TitleBottom    float64
	FigTop, FigBottom        float64
	ViewTop, ViewBottom      float64
	MinText                  float64
	MinWhat                  string
	Chrome                   []string // header, preset links, the expert form: those shown
	FigShown, TitleShown     bool
	StepTop, StepBottom      float64
	StepPosition, StepHasSel string
}

// measureJS reads a projectorBox. A text's size is its font size as drawn:
// inside an SVG, the font size times the SVG's scale on screen. Text counts
// when a box of it lies in the viewport; form controls count by their own
// font size (a select shows its option in it).
const measureJS = `(() => {
	const vis = r => r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0 && r.left < innerWidth && r.top < innerHeight;
	let min = 1e9, what = "";
	const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = w.nextNode(); n; n = w.nextNode()) {
		if (!n.textContent.trim()) continue;
		const el = n.parentElement;
		if (!el || el.closest("script, style, noscript, option")) continue;
		const cs = getComputedStyle(el);
		if (cs.visibility === "hidden" || parseFloat(cs.opacity) === 0) continue;
		const rg = document.createRange(); rg.selectNodeContents(n);
		if (![...rg.getClientRects()].some(vis)) continue;
		let px = parseFloat(cs.fontSize);
		if (el instanceof SVGElement) { const m = el.getScreenCTM(); px *= Math.hypot(m.a, m.b); }
		if (px < min) { min = px; what = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "") + " " + JSON.stringify(n.textContent.trim().slice(0, 30)); }
	}
	for (const el of document.querySelectorAll("select, input[type=number], input[type=text], textarea")) {
		if (!vis(el.getBoundingClientRect())) continue;
		const px = parseFloat(getComputedStyle(el).fontSize);
		if (px < min) { min = px; what = el.tagName.toLowerCase() + "#" + el.id; }
	}
	const r = id => document.getElementById(id).getBoundingClientRect();
	const shown = e => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
	const t = r("ch-title"), f = r("ch-figure"), v = r("view"), s = r("step-info");
	return {InnerH: innerHeight, ScrollH: document.documentElement.scrollHeight,
		TitleTop: t.top, TitleBottom: t.bottom, FigTop: f.top, FigBottom: f.bottom, ViewTop: v.top, ViewBottom: v.bottom,
		MinText: min, MinWhat: what,
		Chrome: ["header", "nav.presets", "nav.chapter-links", "#controls"].filter(q => shown(document.querySelector(q))),
		FigShown: shown(document.getElementById("ch-figure")) && f.height > 40, TitleShown: shown(document.getElementById("ch-title")),
		StepTop: s.top, StepBottom: s.bottom, StepPosition: getComputedStyle(document.getElementById("step-info")).position,
		StepHasSel: String(document.getElementById("step-info").classList.contains("sel"))};
})()`

// predict answers a chapter's question (its first option) and waits for
// the figure it reveals.
func predict(t testing.TB, ctx context.Context) {
	t.Helper()
	eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
	waitFor(t, ctx, `!document.getElementById("chapter").classList.contains("awaiting") && document.querySelector("#ch-figure svg") !== null && servelab.lecture().done`, "the chapter's figure after the prediction")
}

// TestProjectorLectureFitsOneScreen: in projector mode a chapter is a
// lecture slide. At 1920x1080 and 1280x720, in English and 中文, every
// chapter (demo 2's pair of charts is the widest figure), after the
// prediction: the header, the preset links and the expert form are hidden;
// the chapter's title, its figure and the top of the canvas lie inside the
// window; the page does not scroll; at 1080p no visible text is under 24 px
// (the chart's labels as drawn included). Each size and language loads the
// first chapter's link; the others are opened from the slide's chapter bar.
func TestProjectorLectureFitsOneScreen(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	for _, sz := range [][2]int64{{1920, 1080}, {1280, 720}} {
		viewport(t, ctx, sz[0], sz[1])
		for _, lang := range []string{"en", "zh"} {
			for i, ch := range play.Chapters {
				what := fmt.Sprintf("projector %dx%d %s %s", sz[0], sz[1], ch.ID, lang)
				if i == 0 {
					openChapter(t, ctx, base+"?chapter="+ch.ID+"&proj=1&lang="+lang)
				} else {
					goToChapter(t, ctx, ch.ID) // (the lecturer's way: the slide's chapter bar)
				}
				predict(t, ctx)
				b := eval[projectorBox](t, ctx, measureJS)
				t.Logf("%s: title %.0f..%.0f, figure %.0f..%.0f, canvas top %.0f, page %.0f of %.0f, smallest text %.1f px (%s)",
					what, b.TitleTop, b.TitleBottom, b.FigTop, b.FigBottom, b.ViewTop, b.ScrollH, b.InnerH, b.MinText, b.MinWhat)
				if len(b.Chrome) > 0 {
					t.Errorf("%s: the lecture shows the page's chrome %v", what, b.Chrome)
				}
				if !b.TitleShown || b.TitleTop < 0 || b.TitleBottom > b.InnerH {
					t.Errorf("%s: the chapter's title at %.0f..%.0f, want it in the window (0..%.0f)", what, b.TitleTop, b.TitleBottom, b.InnerH)
				}
				if !b.FigShown || b.FigTop < 0 || b.FigBottom > b.InnerH {
					t.Errorf("%s: the chapter's figure at %.0f..%.0f (shown %v), want it in the window (0..%.0f)", what, b.FigTop, b.FigBottom, b.FigShown, b.InnerH)
				}
				// The top of the canvas: its first lanes, a fifth of the window at least.
				if b.ViewTop < 0 || b.ViewTop > b.InnerH*0.8 {
					t.Errorf("%s: the canvas starts at y=%.0f, want its top on screen (above %.0f)", what, b.ViewTop, b.InnerH*0.8)
				}
				if b.ScrollH > b.InnerH {
					t.Errorf("%s: the page is %.0f px tall in a %.0f px window: the lecture scrolls", what, b.ScrollH, b.InnerH)
				}
				if sz[1] == 1080 && b.MinText < 24 {
					t.Errorf("%s: text of %.1f px (%s), want none under 24 px on a 1080p projector", what, b.MinText, b.MinWhat)
				}
				if ch.ID != "demo2" || sz[1] != 1080 {
					continue
				}
				// ? with a chapter slider focused lists the keys, on the slide.
				eval[any](t, ctx, `document.querySelector("#ch-sliders input").focus()`)
				if err := chromedp.Do(ctx, chromedp.KeyEvent("?")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, ctx, fmt.Sprintf(`(() => { const e = document.getElementById("info"), r = e.getBoundingClientRect();
					return e.textContent === %q && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()`, play.T(lang, "leg.keys")), what+": ? to list the keys on screen")
			}
		}
	}
}

// controlsJS lists the visible controls shorter than 44 CSS px: inputs,
// selects, buttons, checkboxes, sliders, links and rows that act as buttons.
const controlsJS = `(() => {
	const out = [];
	let min = 1e9;
	for (const el of document.querySelectorAll("input, select, button, textarea, summary, nav a, [role=button], [data-act]")) {
		const r = el.getBoundingClientRect();
		if (r.width <= 0 || r.height <= 0 || r.right <= 0 || r.left >= innerWidth || getComputedStyle(el).visibility === "hidden") continue;
		min = Math.min(min, r.height);
		if (r.height < 44) out.push((el.id ? "#" + el.id : el.tagName.toLowerCase() + (el.type ? "[" + el.type + "]" : "") + " " + JSON.stringify(el.textContent.trim().slice(0, 20))) + " " + r.height.toFixed(1));
	}
	return {Min: min, Short: out};
})()`

// TestPhoneLayout: at 390x844 (touch), in English and 中文, a chapter reads
// text, figure, canvas in that order; every visible control is at least
// 44 px tall, before and after the prediction and on the expert page; a
// tapped step's explanation is a sheet at the bottom of the screen; the
// hints speak of taps, not of a mouse or keys.
func TestPhoneLayout(t *testing.T) {
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 2}); err != nil {
		t.Fatal(err)
	}
	viewport(t, ctx, 390, 844)
	base := serve(t)
	type controls struct {
		Min   float64
		Short []string
	}
	check := func(what string) {
		c := eval[controls](t, ctx, controlsJS)
		t.Logf("%s: smallest control %.1f px tall", what, c.Min)
		if len(c.Short) > 0 {
			t.Errorf("%s: %d controls under 44 px tall: %v", what, len(c.Short), c.Short)
		}
	}
	for _, lang := range []string{"en", "zh"} {
		openChapter(t, ctx, base+"?chapter=demo2&lang="+lang)
		check("phone chapter before the prediction " + lang)
		predict(t, ctx)
		check("phone chapter " + lang)
		order := eval[[]float64](t, ctx, `["ch-intro", "ch-figure", "view"].map(id => document.getElementById(id).getBoundingClientRect().top + scrollY)`)
		if !(order[0] < order[1] && order[1] < order[2]) {
			t.Errorf("phone %s: the chapter's text at y=%.0f, its figure at %.0f, the canvas at %.0f: want text, figure, canvas in that order", lang, order[0], order[1], order[2])
		}
		if h := eval[float64](t, ctx, `document.getElementById("view").getBoundingClientRect().height`); h > 844*0.5 {
			t.Errorf("phone %s: the canvas is %.0f px tall, want a compact one (half the screen at most)", lang, h)
		}
		// The hints are for fingers.
		for _, key := range []string{"step.hint", "leg.keys"} {
			want := play.T(lang, key+".touch")
			if want == key+".touch" {
				t.Fatalf("the %s catalogue has no %s.touch", lang, key)
			}
			if !eval[bool](t, ctx, fmt.Sprintf(`document.body.textContent.includes(%q)`, want)) {
				t.Errorf("phone %s: the page does not say %q (%s.touch)", lang, want, key)
			}
			if eval[bool](t, ctx, fmt.Sprintf(`document.body.textContent.includes(%q)`, play.T(lang, key))) {
				t.Errorf("phone %s: the page still says the mouse and keys hint %q", lang, play.T(lang, key))
			}
		}
		// A tapped step: its explanation sits at the bottom of the screen,
		// the canvas scrolled into view above it.
		eval[any](t, ctx, `document.getElementById("view").scrollIntoView()`)
		tapCanvas(t, ctx)
		waitFor(t, ctx, `document.getElementById("step-info").textContent.includes("ms") && document.getElementById("step-info").classList.contains("sel")`, "the tapped step's explanation")
		b := eval[projectorBox](t, ctx, measureJS)
		if b.StepPosition != "fixed" || b.StepBottom > b.InnerH+1 || b.StepTop < b.InnerH/3 {
			t.Errorf("phone %s: the step's explanation at %.0f..%.0f (position %s), want a sheet at the bottom of the %.0f px screen", lang, b.StepTop, b.StepBottom, b.StepPosition, b.InnerH)
		}
		if b.ViewTop > b.StepTop-100 {
			t.Errorf("phone %s: the canvas (top %.0f) is hidden under the step's sheet (top %.0f)", lang, b.ViewTop, b.StepTop)
		}
		check("phone chapter with a step " + lang)
		open(t, ctx, base+"?preset=demo2&lang="+lang)
		check("phone expert page " + lang)
	}
}

// TestLayoutScreenshots writes every chapter in projector mode at
// 1920x1080 and 1280x720 and on a 390x844 phone, in English and 中文,
// after the prediction, into $SERVELAB_SHOTS, for a person to look at.
func TestLayoutScreenshots(t *testing.T) {
	dir := os.Getenv("SERVELAB_SHOTS")
	if dir == "" {
		t.Skip("set SERVELAB_SHOTS=DIR to write screenshots")
	}
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 2}); err != nil {
		t.Fatal(err)
	}
	base := serve(t)
	for _, c := range []struct {
		name string
		w, h int64
		q    string
	}{{"proj1920", 1920, 1080, "&proj=1"}, {"proj1280", 1280, 720, "&proj=1"}, {"phone", 390, 844, ""}} {
		viewport(t, ctx, c.w, c.h)
		for _, lang := range []string{"en", "zh"} {
			for _, ch := range play.Chapters {
				openChapter(t, ctx, base+"?chapter="+ch.ID+c.q+"&lang="+lang)
				predict(t, ctx)
				shot := func(name string) {
					time.Sleep(300 * time.Millisecond)
					buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-%s%s.png", c.name, ch.ID, lang, name)), buf, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				shot("")
				if c.name != "phone" {
					continue
				}
				// The phone's next screens: the figure, then the canvas with a tapped step.
				eval[any](t, ctx, `document.getElementById("ch-figure").scrollIntoView()`)
				shot("-2")
				eval[any](t, ctx, `document.getElementById("view").scrollIntoView()`)
				tapCanvas(t, ctx)
				waitFor(t, ctx, `document.getElementById("step-info").classList.contains("sel")`, "the tapped step's explanation")
				shot("-3")
			}
		}
	}
}

// tapCanvas taps the canvas's GPU row, 40% of the way across its plot.
func tapCanvas(t testing.TB, ctx context.Context) {
	t.Helper()
	r := eval[map[string]float64](t, ctx, `(() => { const r = document.getElementById("view").getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width}; })()`)
	for _, typ := range []input.DispatchTouchEventType{input.DispatchTouchEventTypeTouchStart, input.DispatchTouchEventTypeTouchEnd} {
		pts := []*input.TouchPoint{}
		if typ == input.DispatchTouchEventTypeTouchStart {
			pts = append(pts, &input.TouchPoint{X: r["x"] + 92 + (r["w"]-104)*0.4, Y: r["y"] + 56})
		}
		if _, err := chromedp.Call(ctx, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts}); err != nil {
			t.Fatal(err)
		}
	}
}
