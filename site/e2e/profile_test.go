package e2e

import (
	"servelab/wasm/play"

	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servelab/sim"
	"servelab/sim/lab"

	"github.com/chromedp/chromedp"
)

// pick chooses an option of a <select> as a user would.
func pick(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); })()`, id, value))
}

// The profile picker switches the step model: the vllm profile's fitted
// constants go on the sliders, every constant is listed with its source,
// the step explanation names them, the link keeps the profile, and a
// lecture preset brings the lecture's profile back.
func TestProfilePickerChangesTheStep(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo1")
	stepMs := func() float64 {
		// demo1's first step under the state's profile, read off the trace the page simulated.
		return eval[float64](t, ctx, `servelab.figures().tpot.p50`)
	}
	before := stepMs()
	consts := eval[string](t, ctx, `document.getElementById("profile-constants").textContent`)
	for _, want := range []string{"eff_compute", "0.6", "lecture: reproduces", "overhead", "1 ms"} {
		if !strings.Contains(consts, want) {
			t.Errorf("lecture's constants lack %q: %s", want, consts)
		}
	}
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	pick(t, ctx, "profile", "vllm")
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d && servelab.getState().profile === "vllm"`, gen), "a re-simulation under vllm")
	st := eval[map[string]any](t, ctx, `servelab.getState()`)
	// The profile's own H100 constants, as the page's model reads them.
	want := play.DefaultState()
	want.Set("profile", "vllm")
	play.ApplyProfile(&want)
	if st["effc"] != want.EffCompute || st["effm"] != want.EffMem {
		t.Errorf("vllm's H100 constants not on the sliders: effc %v effm %v; want %v %v", st["effc"], st["effm"], want.EffCompute, want.EffMem)
	}
	after := stepMs()
	if math.Abs(after-before) < 1e-6 {
		t.Errorf("TPOT P50 %g ms under lecture and %g under vllm: the profile changed nothing", before, after)
	}
	consts = eval[string](t, ctx, `document.getElementById("profile-constants").textContent`)
	for _, want := range []string{"roofline_p", "eff_kv", "seq_cost", "H100-SXM"} {
		if !strings.Contains(consts, want) {
			t.Errorf("vllm's constants lack %q: %s", want, consts)
		}
	}
	// A GPU without published points says so.
	pick(t, ctx, "gpu", "L40S")
	waitFor(t, ctx, `document.getElementById("profile-gpu-note").textContent.includes("no published points")`, "the unfitted GPU's note")
	pick(t, ctx, "gpu", "H100-SXM")
	waitFor(t, ctx, fmt.Sprintf(`servelab.getState().effc === %v`, want.EffCompute), "H100's own constants back")
	// A slider moved off the profile's value says it was set here.
	setRange(t, ctx, "effm", 0.5)
	waitFor(t, ctx, `document.querySelector('#profile-constants tr[data-const="eff_mem"]').textContent.includes("set on this page")`, "the user's value marked")
	setRange(t, ctx, "effm", want.EffMem)
	// Why this step took X ms: the constants with their sources.
	box := eval[[]float64](t, ctx, `(() => { const b = document.getElementById("view").getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; })()`)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(box[0]+box[2]*0.5, box[1]+60)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("step-info").textContent.includes("Constants used (profile vllm)")`, "the step's constants")
	info := eval[string](t, ctx, `document.getElementById("step-info").textContent`)
	for _, w := range []string{"roofline_p = ", "eff_compute = " + play.FormatNum(want.EffCompute), "fitted"} {
		if !strings.Contains(info, w) {
			t.Errorf("step explanation lacks %q: %s", w, info)
		}
	}
	// The link keeps the profile.
	waitFor(t, ctx, `location.search.includes("profile=vllm")`, "the profile in the URL")
	url := eval[string](t, ctx, `location.href`)
	open(t, ctx, url)
	if st := eval[map[string]any](t, ctx, `servelab.getState()`); st["profile"] != "vllm" || st["effc"] != want.EffCompute {
		t.Errorf("the link did not restore the profile: %v", st)
	}
	// The lecture's presets run the lecture's profile.
	pick(t, ctx, "preset", "demo2")
	waitFor(t, ctx, `servelab.getState().profile === "lecture" && servelab.getState().effc === 0.6 && servelab.getState().ovh === 1`, "demo2 back on the lecture's profile")
}

// labFile writes a lab JSON measured on a "server" whose constants are the
// issue's (eff_compute 0.45, eff_mem 0.7, 3 ms a step): the closed loop
// simulated with them, as labserver --ideal would run it.
func labFile(t *testing.T, c lab.Config) string {
	t.Helper()
	st, _ := sim.DefaultStepModel()
	st.EffCompute, st.EffMem, st.Overhead = 0.45, 0.7, 0.003
	st, err := st.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := sim.NewPolicy("prefill-first", 0)
	lo, err := sim.RunLab(sim.Config{Step: st, Policy: pol}, c.LabWorkload)
	if err != nil {
		t.Fatal(err)
	}
	m := &lab.Measured{Config: c, Summary: lab.Of(lo), Gaps: lab.GapsFrom(lo.Run.Arrivals, c.InjectAfter)}
	var b bytes.Buffer
	if err := lab.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "slowlab.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lateness installs a 10 ms timer in the page that records how late it
// fires while the predicate while holds: a page whose thread is held fires late.
func lateness(while string) string {
	return `(() => { window.__late = []; let last = performance.now();
	window.__lateTimer = setInterval(() => { const now = performance.now(); if (` + while + `) window.__late.push(now - last - 10); last = now; }, 10); })()`
}

// lateStats stops the timer and returns the worst and the 99th-percentile lateness (ms).
func lateStats(t *testing.T, ctx context.Context) (worst, p99 float64, n int) {
	v := eval[[]float64](t, ctx, `(() => { clearInterval(window.__lateTimer); const l = window.__late.slice().sort((a, b) => a - b);
		return [l[l.length-1] || 0, l[Math.floor(0.99*(l.length-1))] || 0, l.length]; })()`)
	return v[0], v[1], int(v[2])
}

// Calibrate from this measurement: the fit runs without holding the page,
// shows progress, can be cancelled, and when it lands the assumptions hold
// the fitted constants and the before/after table is on screen.
func TestCalibrateFromLabUpload(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 8, 20, 5, 16000
	f := labFile(t, c)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{f})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.status().overlays === 1 && document.getElementById("calibrate") !== null`, "the lab file and the calibrate button")
	// Cancel leaves the assumptions as they were.
	eval[chromedp.Void](t, ctx, `document.getElementById("calibrate").click()`)
	waitFor(t, ctx, `document.getElementById("calibrate-cancel") !== null`, "the calibration's progress and Cancel")
	eval[chromedp.Void](t, ctx, `document.getElementById("calibrate-cancel").click()`)
	waitFor(t, ctx, `document.getElementById("calibrate") !== null && servelab.getState().profile === "lecture"`, "the cancelled calibration")
	if st := eval[map[string]any](t, ctx, `servelab.getState()`); st["effc"] != 0.6 || st["effm"] != 0.85 {
		t.Errorf("a cancelled calibration changed the assumptions: %v", st)
	}
	// The whole fit, with the page's timer watched (and, to compare, the idle page's).
	eval[chromedp.Void](t, ctx, lateness("true"))
	waitFor(t, ctx, `window.__late.length >= 100`, "100 ticks of the idle page's timer")
	iw, ip, in := lateStats(t, ctx)
	t.Logf("the idle page: a 10 ms timer fired %d times, worst %.0f ms late, p99 %.0f ms", in, iw, ip)
	gcs0 := eval[float64](t, ctx, `servelab.timings().gcs`)
	eval[chromedp.Void](t, ctx, lateness(`document.getElementById("calibrate-progress") !== null`))
	eval[chromedp.Void](t, ctx, `document.getElementById("calibrate").click()`)
	waitFor(t, ctx, `document.getElementById("calibrate-table") !== null && servelab.getState().profile.startsWith("cal-")`, "the calibrated profile")
	worst, p99, n := lateStats(t, ctx)
	t.Logf("while the calibration ran: a 10 ms timer fired %d times, worst %.0f ms late, p99 %.0f ms; %v garbage collections", n, worst, p99, eval[float64](t, ctx, `servelab.timings().gcs`)-gcs0)
	if worst > 1000 {
		t.Errorf("the page was held %.0f ms during the calibration", worst)
	}
	st := eval[map[string]any](t, ctx, `servelab.getState()`)
	effm, ovh, effc := st["effm"].(float64), st["ovh"].(float64), st["effc"].(float64)
	t.Logf("calibrated: eff_compute %.4g eff_mem %.4g overhead %.4g ms (truth 0.45, 0.7, 3 ms)", effc, effm, ovh)
	if math.Abs(effm-0.7)/0.7 > 0.1 || math.Abs(ovh-3)/3 > 0.1 || math.Abs(effc-0.45)/0.45 > 0.15 {
		t.Errorf("calibration recovered effc %g effm %g ovh %g ms, want 0.45, 0.7, 3 ms", effc, effm, ovh)
	}
	table := eval[string](t, ctx, `document.getElementById("calibrate-box").textContent`)
	for _, want := range []string{"before", "after", "measured", "eff_mem: 0.85 →"} {
		if !strings.Contains(table, want) {
			t.Errorf("calibration table lacks %q: %s", want, table)
		}
	}
	consts := eval[string](t, ctx, `document.getElementById("profile-constants").textContent`)
	if !strings.Contains(consts, "servelab calibrate on slowlab.json") {
		t.Errorf("the fitted constants do not cite the file: %s", consts)
	}
}

// A GuideLLM file's notes and its whole figure table are on the page, in
// both languages.
func TestBenchNotesAndFigureTable(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	f, _ := filepath.Abs(filepath.Join("..", "..", "sim", "testdata", "bench", "guidellm.json"))
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{f})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("bench-notes").textContent.includes("cannot give")`, "the file's notes")
	notes := eval[string](t, ctx, `document.getElementById("bench-notes").textContent`)
	for _, want := range []string{"guidellm.json", "requests", "TTFT P50", "ITL per token P99", "the file states"} {
		if !strings.Contains(notes, want) {
			t.Errorf("bench notes lack %q: %s", want, notes)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#bench-notes tr[data-fig]").length`); n < 9 {
		t.Errorf("figure table has %d rows", n)
	}
	pick(t, ctx, "lang", "zh")
	waitFor(t, ctx, `document.getElementById("bench-notes").textContent.includes("无法给出")`, "the notes in Chinese")
}
