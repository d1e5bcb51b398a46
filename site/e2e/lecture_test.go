package e2e

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"servelab/wasm/play"
)

// openChapter loads a chapter link and waits for its table.
func openChapter(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	open(t, ctx, url)
	// (The table's text is in the HTML before the app runs, and a chapter
	// computed at once is done before its panel is rendered: its sliders
	// come with the panel, after the first frame.)
	waitFor(t, ctx, `servelab.lecture().done && document.getElementById("ch-table").textContent.length > 0 && document.querySelector("#chapter input[type=range][id^='ch-']") !== null`, "the chapter's table and sliders")
}

// goToChapter opens chapter id from the chapter bar of the lecture on the
// page, as a lecturer moves through the course (no page load), and waits
// for its table and its own sliders.
func goToChapter(t testing.TB, ctx context.Context, id string) {
	t.Helper()
	ch, _, ok := play.ChapterByID(id)
	if !ok {
		t.Fatalf("no chapter %q", id)
	}
	q := strconv.Quote(id)
	if !eval[bool](t, ctx, `(() => { const b = document.querySelector("#ch-nav button.tab[data-arg=" + JSON.stringify(`+q+`) + "]"); if (b) b.click(); return b !== null; })()`) {
		t.Fatalf("the chapter bar has no tab for %s", id)
	}
	moves, _ := json.Marshal(ch.Moves)
	waitFor(t, ctx, `servelab.lecture().chapter === `+q+` && servelab.lecture().done && document.querySelector("#ch-nav [aria-current=page]").dataset.arg === `+q+
		` && !document.getElementById("chapter").classList.contains("stale") && document.querySelectorAll("#ch-sliders input[type=range]").length === `+itoa(len(ch.Moves))+
		` && `+string(moves)+`.every(k => document.getElementById("ch-" + k) !== null)`, id+"'s table and sliders, opened from the chapter bar")
}

// cellNumber reads a number from a table cell's text ("7.67" or "7.23×").
func cellNumber(t testing.TB, s string) float64 {
	t.Helper()
	var v float64
	if err := json.Unmarshal([]byte(strings.TrimRight(strings.TrimSpace(s), "×x")), &v); err != nil {
		t.Fatalf("cell %q is not a number: %v", s, err)
	}
	return v
}

// TestChapterDemo1ShowsTheStepTable: ?chapter=demo1 shows demo 1's table
// as text with the lecture's numbers.
func TestChapterDemo1ShowsTheStepTable(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo1&lang=en")
	rows := eval[[][]string](t, ctx, `[...document.querySelectorAll("#ch-table tr")].slice(1).map(r => [...r.children].map(c => c.textContent))`)
	if len(rows) != 4 {
		t.Fatalf("demo 1 table has %d rows, want 4 (128, 512, 1024, 2048): %v", len(rows), rows)
	}
	byPrompt := map[string][]string{}
	for _, r := range rows {
		byPrompt[r[0]] = r
	}
	dec := cellNumber(t, byPrompt["512"][1])
	mixed := cellNumber(t, byPrompt["512"][2])
	slow := cellNumber(t, byPrompt["2048"][3])
	if math.Abs(dec-7.67) > 0.006 || math.Abs(mixed-14.90) > 0.015 || math.Abs(slow-7.2) > 0.06 {
		t.Errorf("demo 1 on the page: decode alone %v ms, +512 prefill %v ms, 2048 slowdown %v×; want ≈ 7.67, 14.90, 7.2", dec, mixed, slow)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#ch-figure svg rect").length`); n < 10 {
		t.Errorf("the roofline figure has %d bars, want two per step (10)", n)
	}
	narr := eval[string](t, ctx, `document.getElementById("ch-narrative").textContent`)
	if !strings.Contains(narr, byPrompt["512"][2]) {
		t.Errorf("the narrative %q does not carry the live +512 figure %s", narr, byPrompt["512"][2])
	}
}

// TestChapterDemo3GoodputTable: the goodput-per-GPU table with the single
// instances, two xP+yD rows and DistServe's figures beside ours.
func TestChapterDemo3GoodputTable(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo3&lang=en")
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#ch-table tr")].slice(1).map(r => r.children[0].textContent)`)
	joined := strings.Join(rows, " | ")
	for _, want := range []string{"colocated", "prefill-only", "decode-only", "1 prefill + 1 decode", "2 prefill + 1 decode"} {
		if !strings.Contains(joined, want) {
			t.Errorf("demo 3 table lacks a %q row: %s", want, joined)
		}
	}
	paper := eval[string](t, ctx, `[...document.querySelectorAll("#ch-table tr")].map(r => r.lastElementChild.textContent).join(" ")`)
	for _, want := range []string{"1.6", "3.3", "2.1×"} {
		if !strings.Contains(paper, want) {
			t.Errorf("DistServe's published %s is not beside ours: %s", want, paper)
		}
	}
}

// TestChapterSliderChangesItsTable: moving a chapter's own slider recomputes its table.
func TestChapterSliderChangesItsTable(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo1&lang=en")
	before := eval[string](t, ctx, `document.getElementById("ch-table").textContent`)
	gen := eval[int](t, ctx, `servelab.lecture().gen`)
	eval[any](t, ctx, `(() => { const s = document.getElementById("ch-batch"); s.value = 64; s.dispatchEvent(new Event("input", {bubbles: true})); })()`)
	waitFor(t, ctx, `servelab.lecture().gen > `+itoa(gen)+` && servelab.lecture().done`, "the table to be recomputed")
	after := eval[string](t, ctx, `document.getElementById("ch-table").textContent`)
	if after == before {
		t.Errorf("the batch slider moved to 64 but the table stayed the same: %s", after)
	}
	if !strings.Contains(eval[string](t, ctx, `document.querySelector("#ch-table caption").textContent`), "64 sequences") {
		t.Errorf("the caption does not say 64 sequences")
	}
	if got := eval[string](t, ctx, `servelab.getState().preset`); got != "demo1" {
		t.Errorf("moving a chapter slider left the chapter's preset: %q", got)
	}
	if eval[bool](t, ctx, `document.getElementById("info").hidden`) {
		t.Errorf("the preset's description left the screen after a slider change")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestChineseEverywhere: ?lang=zh puts Chinese in every control's label,
// every button and the chapter's text.
func TestChineseEverywhere(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo2&lang=zh")
	bad := eval[[]string](t, ctx, `(() => {
		const han = /\p{Script=Han}/u, out = [];
		const visible = el => el.offsetParent !== null || el.closest("#live");
		for (const el of document.querySelectorAll("label, legend, button, #ch-intro p, #ch-narrative, #ch-title, caption, th[scope=col]")) {
			const txt = el.textContent.trim();
			if (!visible(el) || txt === "" || /^[A-Za-z0-9 .+\-×()·/%]*$/.test(txt) && /^(P50|P90|P99|TTFT|TPOT|ITL|GPU)$/.test(txt)) continue;
			if (!han.test(txt)) out.push(el.tagName + "#" + (el.id || el.htmlFor || "") + ": " + txt);
		}
		return out; })()`)
	if len(bad) > 0 {
		t.Errorf("?lang=zh left %d texts without Chinese: %v", len(bad), bad)
	}
	if lang := eval[string](t, ctx, `document.documentElement.lang`); lang != "zh-CN" {
		t.Errorf("html lang = %q", lang)
	}
	// The switch goes back to English and the link keeps the language.
	eval[any](t, ctx, `(() => { const s = document.getElementById("lang"); s.value = "en"; s.dispatchEvent(new Event("change")); })()`)
	waitFor(t, ctx, `document.getElementById("ch-title").textContent.startsWith("Demo 2")`, "the chapter in English")
	waitFor(t, ctx, `location.search.includes("lang=en") && location.search.includes("chapter=demo2")`, "the link to keep the language and chapter")
}

// TestEmbedShowsCanvasNotForm: ?embed=1 shows the canvas and the chapter's
// figure, not the settings form.
func TestEmbedShowsCanvasNotForm(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo2&embed=1")
	got := eval[map[string]bool](t, ctx, `({form: document.getElementById("controls").offsetParent !== null,
		canvas: document.getElementById("view").offsetHeight > 100, figure: document.querySelector("#ch-figure svg") !== null && document.getElementById("ch-figure").offsetParent !== null,
		header: document.querySelector("header").offsetParent !== null})`)
	if got["form"] || got["header"] || !got["canvas"] || !got["figure"] {
		t.Errorf("embed mode: %v, want the canvas and figure without the form and header", got)
	}
	// The page's own "Embed this view" gives an iframe snippet in embed mode.
	base := serve(t)
	openChapter(t, ctx, base+"?chapter=demo4")
	eval[any](t, ctx, `document.querySelector("[data-act=embed]").click()`)
	waitFor(t, ctx, `document.getElementById("embed-code") && document.getElementById("embed-code").value.includes("embed=1")`, "the embed snippet")
	snip := eval[string](t, ctx, `document.getElementById("embed-code").value`)
	if !strings.HasPrefix(snip, "<iframe") || !strings.Contains(snip, "chapter=demo4") {
		t.Errorf("snippet %q", snip)
	}
}

// TestPageDefinesTerms: the glossary defines time to first token, and a
// metric's definition shows on keyboard focus.
func TestPageDefinesTerms(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2&lang=en")
	gloss := eval[string](t, ctx, `document.getElementById("glossary").textContent`)
	for _, want := range []string{"time to first token", "Time to first token", "Goodput", "KV cache", "Disaggregated", "Roofline"} {
		if !strings.Contains(gloss, want) {
			t.Errorf("the glossary lacks %q", want)
		}
	}
	// A headless page has no window focus unless it is emulated.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	before := eval[string](t, ctx, `getComputedStyle(document.querySelector("#figures th[data-term=ttft] .term"), "::after").content`)
	vis := eval[string](t, ctx, `(() => { const t = document.querySelector("#figures th[data-term=ttft] .term"); t.focus();
		return getComputedStyle(t, "::after").content; })()`)
	if before != "none" && before != "normal" || !strings.Contains(vis, "first token") {
		t.Errorf("TTFT's definition before focus %q, on focus %q; want it shown on focus only", before, vis)
	}
	// Every metric on the page carries a definition.
	if n := eval[int](t, ctx, `[...document.querySelectorAll("[data-term]")].filter(e => !e.querySelector(".term[data-def]")).length`); n > 0 {
		t.Errorf("%d metrics on the page have no definition", n)
	}
	if th := eval[string](t, ctx, `document.getElementById("fig-throughput").textContent`); !strings.Contains(th, "output tokens") {
		t.Errorf("throughput %q does not say which tokens", th)
	}
}

// TestPresetDescriptionStays: the preset's title and description stay on
// screen after the re-simulation it starts (the bug in issue 10).
func TestPresetDescriptionStays(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?lang=en")
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	eval[any](t, ctx, `(() => { const s = document.getElementById("preset"); s.value = "demo4"; s.dispatchEvent(new Event("change")); })()`)
	waitFor(t, ctx, `servelab.timings().gen > `+itoa(gen)+` && servelab.timings().drawnGen === servelab.timings().gen`, "the preset's run")
	time.Sleep(400 * time.Millisecond) // the background figures land too
	info := eval[string](t, ctx, `document.getElementById("info").hidden ? "" : document.getElementById("info").textContent`)
	if !strings.Contains(info, "chunked prefill") || !strings.Contains(info, "TPOT falls") {
		t.Errorf("after choosing demo4 the info line is %q, want its title and description", info)
	}
}

// TestPageTablesEqualCLI: the page's lecture tables (servelab.lectureJSON,
// the chapters' code) equal `servelab demo interference --json` for the
// same settings, on a non-default model setting so the mapping is checked.
func TestPageTablesEqualCLI(t *testing.T) {
	bin, err := servelabCLI()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := exec.Command(bin, "demo", "interference", "--json", "--requests", "400", "--prompt", "384", "--output", "48",
		"--seed", "3", "--eff-compute", "0.55", "--ttft-slo", "0.12", "--tpot-slo", "0.02").Output()
	if err != nil {
		t.Fatalf("servelab demo: %v", err)
	}
	ctx := tab(t)
	open(t, ctx, serve(t)+"?n=400&prompt=384&output=48&seed=3&effc=0.55&slottft=120&slotpot=20&rate=40&batch=32&ctx=700")
	page := eval[string](t, ctx, `servelab.lectureJSON()`)
	var a, b any
	if err := json.Unmarshal(cli, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(page), &b); err != nil {
		t.Fatalf("page JSON: %v\n%s", err, page)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the page's tables differ from the CLI's:\ncli:  %.600s\npage: %.600s", cli, page)
	}
	// And what the chapter shows is that JSON: demo 1's +512 cell.
	openChapter(t, ctx, serve(t)+"?chapter=demo1&preset=demo1&effc=0.55&lang=en")
	cell := eval[string](t, ctx, `[...document.querySelectorAll("#ch-table tr")].find(r => r.children[0].textContent === "512").children[2].textContent`)
	var res struct {
		Demo1 []struct {
			Prompt int     `json:"prompt"`
			Mixed  float64 `json:"mixed"`
		} `json:"demo1_in_step"`
	}
	json.Unmarshal(cli, &res)
	if want := res.Demo1[1].Mixed * 1e3; math.Abs(cellNumber(t, cell)-want) > 0.006 {
		t.Errorf("chapter cell %s ms, CLI %.4f ms", cell, want)
	}
}

// TestLectureAtEverySize opens chapters in both languages (the second from
// the page's language menu) at a laptop (1280x720), a projector (1920x1080)
// and a phone (390x844): the page must not scroll sideways and the chapter
// must be drawn. With SERVELAB_SHOTS=DIR it also writes a screenshot of
// each (for looking at the page; SERVELAB_SHOT_PAGES names other queries).
func TestLectureAtEverySize(t *testing.T) {
	dir := os.Getenv("SERVELAB_SHOTS")
	ctx := tab(t)
	base := serve(t)
	sizes := map[string][2]int64{"1280": {1280, 720}, "1920": {1920, 1080}, "390": {390, 844}}
	pages := strings.Fields(os.Getenv("SERVELAB_SHOT_PAGES"))
	if len(pages) == 0 {
		pages = []string{"chapter=demo1", "chapter=demo3"}
		if dir != "" {
			pages = append(pages, "chapter=demo2", "chapter=demo4", "chapter=lab", "preset=demo2", "chapter=lab&embed=1")
		}
	}
	for name, sz := range sizes {
		viewport(t, ctx, sz[0], sz[1])
		for _, pg := range pages {
			for i, lang := range []string{"en", "zh"} {
				if i == 0 {
					open(t, ctx, base+"?"+pg+"&lang="+lang)
				} else {
					pickLang(t, ctx, lang) // (the page in the other language from its menu)
				}
				if strings.Contains(pg, "chapter") {
					waitFor(t, ctx, `servelab.lecture().done && document.querySelector("#ch-figure svg") !== null`, "the chapter and its figure")
				}
				if over := eval[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
					t.Errorf("%s in %s at %s: the page is %.0f px wider than the window", pg, lang, name, over)
				}
				if dir == "" {
					continue
				}
				time.Sleep(300 * time.Millisecond)
				buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				f := filepath.Join(dir, strings.NewReplacer("=", "-", "&", "_").Replace(pg)+"-"+lang+"-"+name+".png")
				if err := os.WriteFile(f, buf, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestUploadNoticeStays: "overlaid X as run A" stays on screen after the
// re-simulation the upload starts.
func TestUploadNoticeStays(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?lang=en")
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{labJSON(t)})); err != nil {
		t.Fatalf("upload: %v", err)
	}
	waitFor(t, ctx, `servelab.status().overlays === 1 && servelab.timings().drawnGen === servelab.timings().gen`, "the upload's run")
	time.Sleep(400 * time.Millisecond)
	if info := eval[string](t, ctx, `document.getElementById("info").hidden ? "" : document.getElementById("info").textContent`); !strings.Contains(info, "overlaid lab.json as run A") {
		t.Errorf("after the upload the info line is %q", info)
	}
}

// TestChapterKeysAndButtons: ] and [ move between chapters, the URL follows,
// and the predict question reveals what the simulation says.
func TestChapterKeysAndButtons(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo1&lang=en")
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.lecture().chapter === "demo2" && servelab.getState().preset === "demo2"`, "] to open demo 2")
	waitFor(t, ctx, `location.search.includes("chapter=demo2")`, "the URL to name the chapter")
	eval[any](t, ctx, `document.querySelector("#ch-nav [data-arg=lab]").click()`)
	waitFor(t, ctx, `servelab.lecture().chapter === "lab" && servelab.lecture().done`, "the lab chapter")
	if err := chromedp.Do(ctx, chromedp.KeyEvent("[")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.lecture().chapter === "demo4" && servelab.lecture().done`, "[ to go back to demo 4")
	if got := eval[string](t, ctx, `document.getElementById("ch-predict").textContent`); strings.Contains(got, "Right.") || strings.Contains(got, "Not quite.") {
		t.Fatalf("the answer shows before a prediction: %q", got)
	}
	eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='3']").click()`)
	waitFor(t, ctx, `document.querySelector("#ch-predict .reveal") !== null`, "the reveal")
	rev := eval[string](t, ctx, `document.querySelector("#ch-predict .reveal").textContent`)
	if !strings.HasPrefix(rev, "Right.") || !strings.Contains(rev, "budget 128") {
		t.Errorf("reveal %q", rev)
	}
}

// TestChapterKeysWithASliderFocused: after dragging a chapter's slider (it
// keeps the focus), ] and a clicker's PageDown still turn the page, Space
// still plays, and the slider's arrow keys stay the slider's.
func TestChapterKeysWithASliderFocused(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo1&lang=en")
	eval[any](t, ctx, `document.getElementById("ch-batch").focus()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.lecture().chapter === "demo2"`, "] with a slider focused to open demo 2")
	eval[any](t, ctx, `document.getElementById("ch-prompt").focus()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.PageDown)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.lecture().chapter === "demo3"`, "PageDown with a slider focused to open demo 3")
	eval[any](t, ctx, `document.getElementById("ch-slotpot").focus()`)
	before := eval[float64](t, ctx, `servelab.getState().slotpot`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.getState().slotpot !== `+strconv.FormatFloat(before, 'g', -1, 64), "the arrow key to move the focused slider")
	if got := eval[string](t, ctx, `servelab.lecture().chapter`); got != "demo3" {
		t.Errorf("an arrow key on a slider moved the chapter to %s", got)
	}
}

// TestChapterDemo1SelectsAMixedStep: the demo-1 chapter's timeline explains
// a step that carries a prefill beside decodes, without a click.
func TestChapterDemo1SelectsAMixedStep(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo1&lang=en")
	info := eval[string](t, ctx, `document.getElementById("step-info").textContent`)
	if !strings.Contains(info, "decode tokens") || strings.Contains(info, " 0 prefill tokens") || !strings.Contains(info, "compute-bound") {
		t.Errorf("the step explanation is %q, want a compute-bound step with prefill and decode tokens", info)
	}
}

// TestPredictThenReveal: a chapter's table, figure and narrative stay hidden
// until the student predicts; the prediction is one click (a second cannot
// change it), it stays through slider moves and across chapters, and the
// reveal follows the table at the new settings.
func TestPredictThenReveal(t *testing.T) {
	ctx := tab(t)
	for _, lang := range []string{"en", "zh"} {
		openChapter(t, ctx, serve(t)+"?chapter=demo4&lang="+lang)
		shown := func(id string) bool {
			return eval[bool](t, ctx, `document.getElementById("`+id+`").offsetParent !== null`)
		}
		if shown("ch-table") || shown("ch-figure") || shown("ch-narrative") || !shown("ch-wait") {
			t.Fatalf("%s: before a prediction: table %v figure %v narrative %v, the ask to predict %v", lang,
				shown("ch-table"), shown("ch-figure"), shown("ch-narrative"), shown("ch-wait"))
		}
		eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='3']").click()`)
		waitFor(t, ctx, `document.querySelector("#ch-predict .reveal") !== null`, "the reveal")
		if !shown("ch-table") || !shown("ch-figure") || shown("ch-wait") {
			t.Errorf("%s: after the prediction the table (%v) and figure (%v) are not shown", lang, shown("ch-table"), shown("ch-figure"))
		}
		eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
		if got := eval[string](t, ctx, `document.querySelector("#ch-predict [aria-pressed=true]").dataset.arg`); got != "3" {
			t.Errorf("%s: a second click changed the prediction to %s", lang, got)
		}
		gen := eval[int](t, ctx, `servelab.lecture().gen`)
		setRange(t, ctx, "ch-rate", 30)
		waitFor(t, ctx, `servelab.lecture().gen > `+itoa(gen)+` && servelab.lecture().done && document.querySelector("#ch-predict .reveal") !== null`, "the reveal at the new rate")
		if got := eval[string](t, ctx, `document.querySelector("#ch-predict [aria-pressed=true]").dataset.arg`); got != "3" || !shown("ch-table") {
			t.Errorf("%s: after a move the prediction is %s (want 3), table shown %v", lang, got, shown("ch-table"))
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent("[")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `servelab.lecture().chapter === "demo3" && servelab.lecture().done`, "demo 3")
		if shown("ch-table") {
			t.Errorf("%s: demo 3's table shows before its own prediction", lang)
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent("]")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `servelab.lecture().chapter === "demo4" && servelab.lecture().done && document.querySelector("#ch-predict [aria-pressed=true]") !== null`, "demo 4 with its prediction")
	}
}

// TestTermsDefinedAtFirstUse: in every chapter, in English and 中文, each of
// the chapter's terms is a defined term (hover, tap, focus) where its text
// first says it, reading the question, what is fixed, what moves and the
// narrative in order. Each language loads the first chapter's link; the
// others are opened from the chapter bar.
func TestTermsDefinedAtFirstUse(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	for _, lang := range []string{"en", "zh"} {
		for i, ch := range play.Chapters {
			if i == 0 {
				openChapter(t, ctx, base+"?chapter="+ch.ID+"&lang="+lang)
			} else {
				goToChapter(t, ctx, ch.ID)
			}
			eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
			waitFor(t, ctx, `document.getElementById("ch-narrative").offsetParent !== null`, "the narrative")
			for _, k := range ch.Terms {
				name := play.T(lang, "term."+k)
				got := eval[string](t, ctx, `((name) => {
					const fold = s => s.replace(/[A-Z]/g, c => c.toLowerCase()), n = fold(name);
					const parts = [document.getElementById("ch-intro"), document.getElementById("ch-narrative")];
					let before = "";
					for (const part of parts) {
						for (const s of part.querySelectorAll(".term")) {
							if (fold(s.textContent) !== n) continue;
							const r = document.createRange(); r.setStart(part, 0); r.setEndBefore(s);
							if (fold(before + r.toString()).includes(n)) return "said before its definition";
							return s.dataset.def ? "ok" : "no definition";
						}
						before += part.textContent;
					}
					return "never defined";
				})(`+strconv.Quote(name)+`)`)
				if got != "ok" {
					t.Errorf("%s (%s): %q %s", ch.ID, lang, name, got)
				}
			}
		}
	}
}

// TestTableRowsDriveTheTimeline: picking a row of demo 2's table (a rate) or
// demo 4's (a policy and budget) runs that row on the timeline, and the row
// is marked as the one shown.
func TestTableRowsDriveTheTimeline(t *testing.T) {
	ctx := tab(t)
	openChapter(t, ctx, serve(t)+"?chapter=demo2&lang=en")
	eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	eval[any](t, ctx, `document.querySelector("#ch-table tr[data-arg='rate=40']").click()`)
	waitFor(t, ctx, `servelab.getState().rate === 40 && servelab.timings().gen > `+itoa(gen)+` && servelab.timings().drawnGen === servelab.timings().gen`, "the timeline at 40 req/s")
	waitFor(t, ctx, `document.querySelector("#ch-table tr.cur") !== null && document.querySelector("#ch-table tr.cur").dataset.arg === "rate=40"`, "the row marked as shown")
	openChapter(t, ctx, serve(t)+"?chapter=demo4&lang=en")
	eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
	eval[any](t, ctx, `document.querySelector("#ch-table tr[data-arg^='policy=chunked&budget=256']").click()`)
	waitFor(t, ctx, `servelab.getState().policy === "chunked" && servelab.getState().budget === 256 && servelab.getState().bdec === 0`, "the timeline at budget 256")
	eval[any](t, ctx, `document.querySelector("#ch-table tr[data-arg^='policy=prefill-first']").click()`)
	waitFor(t, ctx, `servelab.getState().policy === "prefill-first" && servelab.timings().drawnGen === servelab.timings().gen`, "the timeline unchunked")
	waitFor(t, ctx, `document.querySelector("#ch-table tr.cur") !== null && document.querySelector("#ch-table tr.cur").dataset.arg.startsWith("policy=prefill-first")`, "the prefill-first row marked")
}
