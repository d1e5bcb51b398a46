package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"
)

// TestFirstVisitStartsTheCourse: the bare page offers the course first (a
// "start here" card leading to chapter 1); a link with settings does not;
// in a chapter the expert form is behind "More settings" (issue 28 item 1).
func TestFirstVisitStartsTheCourse(t *testing.T) {
	ctx := tab(t)
	shown := func(sel string) bool {
		return eval[bool](t, ctx, `(() => { const e = document.querySelector(`+jsq(sel)+`); return e !== null && e.offsetParent !== null; })()`)
	}
	for _, lang := range []string{"en", "zh"} {
		open(t, ctx, serve(t)+"?lang="+lang)
		if !shown("#start a.start-go") {
			t.Fatalf("%s: the bare page shows no start card", lang)
		}
		if top := eval[float64](t, ctx, `document.getElementById("start").getBoundingClientRect().top`); top > 200 {
			t.Errorf("%s: the start card begins at y=%v; want it near the top (≤ 200 px)", lang, top)
		}
		href := eval[string](t, ctx, `document.querySelector("#start a.start-go").getAttribute("href")`)
		if href != "?chapter=demo1" {
			t.Fatalf("%s: the start card leads to %q, want chapter 1", lang, href)
		}
		openChapter(t, ctx, serve(t)+href+"&lang="+lang) // (as the link's click would; a click navigates mid-poll)
		if shown("#start") {
			t.Errorf("%s: the start card stays in the chapter", lang)
		}
		if shown("#controls") || !shown("#more-settings") {
			t.Errorf("%s: in a chapter the form shows %v, the More settings button %v; want the form behind the button", lang, shown("#controls"), shown("#more-settings"))
		}
		label := eval[string](t, ctx, `document.getElementById("more-settings").textContent`)
		eval[any](t, ctx, `document.getElementById("more-settings").click()`)
		if !shown("#controls #rate") || eval[string](t, ctx, `document.getElementById("more-settings").getAttribute("aria-expanded")`) != "true" {
			t.Errorf("%s: More settings did not open the form", lang)
		}
		if again := eval[string](t, ctx, `document.getElementById("more-settings").textContent`); again == label {
			t.Errorf("%s: the button still says %q once the form is open", lang, again)
		}
		eval[any](t, ctx, `document.getElementById("more-settings").click()`)
		if shown("#controls") {
			t.Errorf("%s: a second click left the form open", lang)
		}
	}
	open(t, ctx, serve(t)+"?preset=demo2")
	if shown("#start") {
		t.Error("a preset link shows the start card")
	}
}

// TestTaskCheckedLive: a chapter ends with a task, shown after the
// prediction, open at the chapter's settings and marked done the moment the
// student meets it (demo 4: the budget with the lowest P90 TTFT, read from
// the live table, picked by its row).
func TestTaskCheckedLive(t *testing.T) {
	ctx := tab(t)
	for _, lang := range []string{"en", "zh"} {
		openChapter(t, ctx, serve(t)+"?chapter=demo4&lang="+lang)
		if n := eval[int](t, ctx, `document.querySelectorAll("#ch-tasks li").length`); n != 0 {
			t.Errorf("%s: %d tasks before the prediction; want them after it", lang, n)
		}
		eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
		waitFor(t, ctx, `document.querySelector("#ch-tasks li.open") !== null`, "the open task")
		// The target from the table on the page: the chunked row with the lowest P90 TTFT.
		arg := eval[string](t, ctx, `(() => { let best = null, bt = Infinity;
			for (const r of document.querySelectorAll("#ch-table tr[data-arg^='policy=chunked']")) {
				const v = parseFloat(r.children[3].textContent); if (v < bt) { bt = v; best = r.dataset.arg; } }
			return best; })()`)
		if arg == "" {
			t.Fatalf("%s: no chunked rows in the table", lang)
		}
		eval[any](t, ctx, `document.querySelector("#ch-table tr[data-arg='`+arg+`']").click()`)
		waitFor(t, ctx, `document.querySelector("#ch-tasks li.done") !== null`, "the task marked done after picking "+arg)
	}
}

// jsq quotes s as a JavaScript string.
func jsq(s string) string { b, _ := json.Marshal(s); return string(b) }

// labJSONAs writes a measured lab file as `servelab measure --label` would,
// from a small simulated lab run under policy (budget: chunked's).
func labJSONAs(t *testing.T, label, policy string, budget int) string {
	t.Helper()
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 8, 6, 2, 8000
	c.Label = label
	st, err := sim.DefaultStepModel()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sim.NewPolicy(policy, budget)
	if err != nil {
		t.Fatal(err)
	}
	lo, err := sim.RunLab(sim.Config{Step: st, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	s := lab.Of(lo)
	s.Label = label
	m := &lab.Measured{Config: c, Summary: s, Gaps: lab.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}
	var b bytes.Buffer
	if err := lab.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), strings.ReplaceAll(label, " ", "-")+".json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompareTwoMeasuredRuns: two measured lab runs (one unchunked, one
// chunked at 512) in compare mode: run B simulates the second file's
// scheduler, each measurement is drawn in its own pane, and the compare
// table carries the lab's headline figures, simulated and measured
// (issue 28 item 7).
func TestCompareTwoMeasuredRuns(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?lang=en")
	upload(t, ctx, labJSONAs(t, "unchunked", "prefill-first", 0))
	waitFor(t, ctx, `servelab.status().overlays === 1 && servelab.timings().drawnGen === servelab.timings().gen`, "run A's file")
	upload(t, ctx, labJSONAs(t, "chunked 512", "chunked", 512))
	waitFor(t, ctx, `servelab.status().overlays === 2`, "run B's file")
	eval[any](t, ctx, `(() => { const e = document.getElementById("cmp-on"); e.checked = true; e.dispatchEvent(new Event("change", {bubbles: true})); })()`)
	waitFor(t, ctx, `servelab.figures().b && servelab.figures().b.completed > 0 && servelab.figures().b.query.includes("policy=chunked") && servelab.figures().b.query.includes("budget=512") && servelab.timings().drawnGen === servelab.timings().gen`, "run B simulating the chunked file")
	if q := eval[string](t, ctx, `servelab.figures().a.query`); !strings.Contains(q, "policy=prefill-first") && strings.Contains(q, "policy=") {
		t.Errorf("run A is %q; want the unchunked file's scheduler", q)
	}
	img := frameShot(t, ctx)
	pink, green := [3]int{0xff, 0x5c, 0xcd}, [3]int{0x9b, 0xff, 0x5c}
	at, ab := countNear(img, pink, 0, 0.5, 20), countNear(img, pink, 0.5, 1, 20)
	bt, bb := countNear(img, green, 0, 0.5, 20), countNear(img, green, 0.5, 1, 20)
	if at < 20 || ab > 2 || bb < 20 || bt > 2 {
		t.Errorf("measured A's pixels: %d top / %d bottom; B's: %d top / %d bottom; want each only in its own pane", at, ab, bt, bb)
	}
	txt := eval[string](t, ctx, `document.getElementById("cmp-table").textContent`)
	for _, want := range []string{"worst gap", "spike ratio", "measured"} {
		if !strings.Contains(strings.ToLower(txt), want) {
			t.Errorf("the compare table lacks %q: %s", want, txt)
		}
	}
}

// TestCourseChapters: the three chapters after the lecture (prefix caching,
// routing, speculative decoding), in English and 中文: each fills its table
// of whole runs after the prediction, reveals the answer the table gives,
// and ends with its task (the first from its link, the others from the
// chapter bar); the routing chapter's rows drive the timeline's
// replica lanes (issue 29 item 5).
func TestCourseChapters(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	for _, lang := range []string{"en", "zh"} {
		for i, c := range []struct {
			id   string
			rows int
		}{{"cache", 4}, {"route", 4}, {"spec", 6}} {
			if i == 0 {
				openChapter(t, ctx, base+"?chapter="+c.id+"&lang="+lang)
			} else {
				goToChapter(t, ctx, c.id)
			}
			eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
			waitFor(t, ctx, `document.querySelector("#ch-predict .reveal") !== null && document.querySelector("#ch-tasks li") !== null`, c.id+"'s reveal and task")
			if n := eval[int](t, ctx, `document.querySelectorAll("#ch-table tr").length - 1`); n != c.rows {
				t.Errorf("%s %s: %d rows, want %d", c.id, lang, n, c.rows)
			}
			if cells := eval[string](t, ctx, `[...document.querySelectorAll("#ch-table td")].map(e => e.textContent).join(" ")`); strings.Contains(cells, "–") {
				t.Errorf("%s %s: a cell is empty: %s", c.id, lang, cells)
			}
			narr := eval[string](t, ctx, `document.getElementById("ch-narrative").textContent`)
			if strings.Contains(narr, "{") || !strings.ContainsAny(narr, "0123456789") {
				t.Errorf("%s %s: the narrative is not filled in: %q", c.id, lang, narr)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("#ch-figure svg rect").length`); n != c.rows {
				t.Errorf("%s %s: the figure has %d bars, want one per row (%d)", c.id, lang, n, c.rows)
			}
		}
	}
	// A routing row sets the timeline's router: the replica lanes follow it.
	openChapter(t, ctx, base+"?chapter=route&lang=en")
	eval[any](t, ctx, `document.querySelector("#ch-predict [data-arg='1']").click()`)
	waitFor(t, ctx, `document.querySelector("#ch-table tr[data-arg^='route=round-robin']") !== null`, "the routing table")
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	eval[any](t, ctx, `document.querySelector("#ch-table tr[data-arg^='route=round-robin']").click()`)
	waitFor(t, ctx, `servelab.getState().route === "round-robin" && servelab.timings().gen > `+itoa(gen)+` && servelab.timings().drawnGen === servelab.timings().gen`, "the timeline under round-robin")
	if labels := eval[string](t, ctx, canvasLabels); !strings.Contains(labels, "replica 4") {
		t.Errorf("the canvas has no lane per replica: %q", labels)
	}
}
