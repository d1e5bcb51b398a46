package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// canvasLabels is the text the app lays over its canvas (row names, lanes).
const canvasLabels = `document.getElementById("view").contentDocument.getElementById("labels").textContent`

// frameShot is a screenshot of the timeline frame.
func frameShot(t *testing.T, ctx context.Context) image.Image {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#view")))
	if err != nil {
		t.Fatalf("screenshot the timeline: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// countNear counts pixels (every second one) within tol of the colour c in rows [y0, y1) of img.
func countNear(img image.Image, c [3]int, y0, y1 float64, tol int) int {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y + int(y0*float64(b.Dy())); y < b.Min.Y+int(y1*float64(b.Dy())); y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-c[0]) <= tol && abs(int(g>>8)-c[1]) <= tol && abs(int(bl>>8)-c[2]) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestCompareChunkingDrawsTwoRuns: ?preset=compare-chunking runs the same
// workload prefill-first (A) and chunked 512 (B) on one clock; figures()
// returns both, with different P99 ITL; both panes are drawn; the pair is in
// the URL and a shared link reopens it.
func TestCompareChunkingDrawsTwoRuns(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	open(t, ctx, base+"?preset=compare-chunking")
	waitFor(t, ctx, `servelab.figures().a && servelab.figures().b && servelab.figures().b.completed > 0`, "both runs' figures")
	f := eval[map[string]map[string]any](t, ctx, `servelab.figures()`)
	itl := func(run string) float64 { return f[run]["itl"].(map[string]any)["p99"].(float64) }
	if a, b := itl("a"), itl("b"); !(a > 0 && b > 0) || math.Abs(a-b) < 1e-4 {
		t.Fatalf("P99 ITL A %.4f s, B %.4f s: want two different positive figures", a, b)
	}
	if !strings.Contains(f["a"]["query"].(string), "policy=prefill-first") || !strings.Contains(f["b"]["query"].(string), "policy=chunked") || !strings.Contains(f["b"]["query"].(string), "budget=512") {
		t.Errorf("runs are A %q, B %q: want prefill-first vs chunked 512", f["a"]["query"], f["b"]["query"])
	}
	if f["a"]["submitted"] != f["b"]["submitted"] {
		t.Errorf("A submitted %v, B %v: the same workload has the same requests", f["a"]["submitted"], f["b"]["submitted"])
	}
	labels := eval[string](t, ctx, canvasLabels)
	if !strings.Contains(labels, "A · ") || !strings.Contains(labels, "B · ") {
		t.Errorf("canvas labels %q name no A and B panes", labels)
	}
	// Both halves of the canvas carry a drawn timeline (request colours), not one blank.
	img := frameShot(t, ctx)
	orange := [3]int{0xE6, 0x9F, 0x00}
	if top, bottom := countNear(img, orange, 0, 0.5, 24), countNear(img, orange, 0.5, 1, 24); top < 50 || bottom < 50 {
		t.Errorf("request-coloured pixels: %d in the top half, %d in the bottom: want both timelines drawn", top, bottom)
	}
	// The side-by-side table has a B/A column with numbers.
	if txt := eval[string](t, ctx, `document.getElementById("cmp-table").textContent`); !strings.Contains(txt, "×") {
		t.Errorf("compare table %q has no B/A ratios", txt)
	}
	// The form edits run B: its budget changes, A's settings and figures stay (A is not simulated again).
	eval[chromedp.Void](t, ctx, `document.getElementById("cmp-edit-b").click()`)
	waitFor(t, ctx, `document.body.classList.contains("edit-b") && document.getElementById("budget").value === "512"`, "the form showing run B")
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	setRange(t, ctx, "budget", 1024)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d && servelab.figures().b.query.includes("budget=1024")`, gen), "run B with a 1024-token budget")
	f2 := eval[map[string]map[string]any](t, ctx, `servelab.figures()`)
	if f2["a"]["query"] != f["a"]["query"] || f2["a"]["itl"].(map[string]any)["p99"] != f["a"]["itl"].(map[string]any)["p99"] {
		t.Errorf("editing B changed A: %v -> %v", f["a"]["query"], f2["a"]["query"])
	}
	if tm := eval[map[string]float64](t, ctx, `servelab.timings()`); tm["simMs"] != tm["simMsB"] {
		t.Errorf("editing B re-simulated A too: simMs %.1f, B's %.1f", tm["simMs"], tm["simMsB"])
	}
	eval[chromedp.Void](t, ctx, `document.getElementById("cmp-edit-a").click()`)
	setRange(t, ctx, "budget", 512)
	waitFor(t, ctx, `location.search.includes("cmp=1") && location.search.includes("b.policy=chunked") && location.search.includes("b.budget=1024")`, "the pair in the URL")
	q := eval[string](t, ctx, `location.search.replace("preset=compare-chunking&", "")`)
	ctx2 := browser(t) // a second page at once: a context of its own
	open(t, ctx2, base+q)
	waitFor(t, ctx2, `servelab.figures().b && servelab.figures().b.completed > 0`, "run B from the shared link")
	if got, want := eval[float64](t, ctx2, `servelab.figures().b.itl.p99`), eval[float64](t, ctx, `servelab.figures().b.itl.p99`); math.Abs(got-want) > 1e-9 {
		t.Errorf("shared link: B's P99 ITL %.6f, the original %.6f", got, want)
	}
}

// TestDisaggReportsATransferPerRequest: in distserve-2p1d every completed
// request moved its KV cache from a prefill GPU to the decode GPU, and
// figures().transfers says so; the step explanation of a prefill step names
// the transfer.
func TestDisaggReportsATransferPerRequest(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=distserve-2p1d")
	f := eval[map[string]any](t, ctx, `servelab.figures()`)
	tr := f["transfers"].(map[string]any)
	if c := f["completed"].(float64); c < 100 || tr["count"].(float64) != c {
		t.Fatalf("%v completed requests, %v KV transfers: want one per completed request", c, tr["count"])
	}
	if m := tr["mean_s"].(float64); !(m > 0 && m < 0.1) {
		t.Errorf("mean KV transfer %g s, want a positive link time", m)
	}
	if labels := eval[string](t, ctx, canvasLabels); !strings.Contains(labels, "→ ") {
		t.Errorf("row labels %q do not say what the router sent each GPU", labels)
	}
	// Select the first step of prefill GPU 1 (global step 0): it finishes prompts.
	eval[chromedp.Void](t, ctx, `servelab.setState({sel: 0})`)
	waitFor(t, ctx, `document.getElementById("step-info").textContent.includes("decode 1")`, "the transfer in the step explanation")
}

// TestMemoryPressurePreemptsAndDrawsTheLane: the memory-pressure preset fills
// the KV cache: figures() counts preemptions, the peak stays within the
// capacity, and the memory lane is drawn (its green blocks-in-use bars).
func TestMemoryPressurePreemptsAndDrawsTheLane(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=memory-pressure")
	kv := eval[map[string]float64](t, ctx, `servelab.figures().kv`)
	if kv["preemptions"] < 1 || kv["capacity_blocks"] < 1 || kv["peak_blocks"] > kv["capacity_blocks"] || kv["peak_blocks"] < 0.9*kv["capacity_blocks"] {
		t.Fatalf("kv figures %v: want preemptions and a peak near (not over) the capacity", kv)
	}
	if labels := eval[string](t, ctx, canvasLabels); !strings.Contains(labels, "KV cache") {
		t.Errorf("canvas labels %q have no memory lane", labels)
	}
	if n := countNear(frameShot(t, ctx), [3]int{0x00, 0x9E, 0x73}, 0, 1, 10); n < 100 {
		t.Errorf("%d blocks-in-use pixels: the memory lane is not drawn", n)
	}
	// A step where memory held the queue back says so (figures() names the first).
	k := kv["first_held_step"]
	if k < 0 {
		t.Fatalf("no step was held back by the KV cache: %v", kv)
	}
	eval[chromedp.Void](t, ctx, fmt.Sprintf(`servelab.setState({sel: %g})`, k))
	waitFor(t, ctx, `document.getElementById("step-info").textContent.includes("Memory, not compute")`, "the explanation that memory held a request back")
	if txt := eval[string](t, ctx, `document.getElementById("step-info").textContent`); !strings.Contains(txt, "KV cache:") || !strings.Contains(txt, "largest") {
		t.Errorf("step explanation %q lacks the cache's use and its holders", txt)
	}
}

// TestTouchTapSelectsAndDragPans: a synthesized tap on a step selects it, a
// one-finger drag moves the view, a pinch zooms.
func TestTouchTapSelectsAndDragPans(t *testing.T) {
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 2}); err != nil {
		t.Fatal(err)
	}
	open(t, ctx, serve(t)+"?preset=demo2&t0=1&span=1")
	r := eval[map[string]float64](t, ctx, `(() => { const r = document.getElementById("view").getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width}; })()`)
	// The first GPU row starts 42 CSS px down (under the legend and the time axis), at least 28 tall; the plot 92 px in.
	x, y := r["x"]+92+(r["w"]-104)*0.4, r["y"]+56
	touch := func(typ input.DispatchTouchEventType, pts ...*input.TouchPoint) {
		t.Helper()
		if pts == nil {
			pts = []*input.TouchPoint{}
		}
		if _, err := chromedp.Call(ctx, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts}); err != nil {
			t.Fatal(err)
		}
	}
	touch(input.DispatchTouchEventTypeTouchStart, &input.TouchPoint{X: x, Y: y})
	touch(input.DispatchTouchEventTypeTouchEnd)
	waitFor(t, ctx, `servelab.getState().sel >= 0`, "the tap to select a step")
	if txt := eval[string](t, ctx, `document.getElementById("step-info").textContent`); !strings.Contains(txt, "ms") {
		t.Errorf("step explanation after the tap: %q", txt)
	}
	t0 := eval[float64](t, ctx, `servelab.getState().t0`)
	touch(input.DispatchTouchEventTypeTouchStart, &input.TouchPoint{X: x, Y: y})
	for i := 1; i <= 5; i++ {
		touch(input.DispatchTouchEventTypeTouchMove, &input.TouchPoint{X: x - float64(i)*40, Y: y})
	}
	touch(input.DispatchTouchEventTypeTouchEnd)
	waitFor(t, ctx, fmt.Sprintf(`servelab.getState().t0 > %g + 0.1`, t0), "the drag to pan the view later in time")
	// Two fingers moving apart zoom in.
	span := eval[float64](t, ctx, `servelab.getState().span`)
	id1, id2 := 1.0, 2.0
	touch(input.DispatchTouchEventTypeTouchStart, &input.TouchPoint{X: x - 40, Y: y, ID: &id1}, &input.TouchPoint{X: x + 40, Y: y, ID: &id2})
	for i := 1; i <= 4; i++ {
		d := 40 + float64(i)*30
		touch(input.DispatchTouchEventTypeTouchMove, &input.TouchPoint{X: x - d, Y: y, ID: &id1}, &input.TouchPoint{X: x + d, Y: y, ID: &id2})
	}
	touch(input.DispatchTouchEventTypeTouchEnd)
	waitFor(t, ctx, fmt.Sprintf(`servelab.getState().span < %g * 0.6`, span), "the pinch to zoom in")
}

// TestPhoneShowsTheTimelineFirst: at 390x844 the canvas's top is on the first screen.
func TestPhoneShowsTheTimelineFirst(t *testing.T) {
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	open(t, ctx, serve(t)+"?preset=demo2")
	top := eval[float64](t, ctx, `document.getElementById("view").getBoundingClientRect().top + scrollY`)
	if top < 0 || top > 844-200 {
		t.Fatalf("the canvas starts %.0f px down on a 390x844 phone: want it within the first screen, with room to see it", top)
	}
}

// TestProjectorKeepsTheStepOnScreen: in projector mode at 1280x720 and
// 1920x1080 the step explanation is on the first screen, beside or over the
// canvas; projector mode and speed come back from the URL.
func TestProjectorKeepsTheStepOnScreen(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}} {
		viewport(t, ctx, sz[0], sz[1])
		open(t, ctx, base+"?preset=demo1&proj=1&speed=5&sel=3")
		waitFor(t, ctx, `servelab.status().projector && document.getElementById("step-info").textContent.includes("ms")`, "projector mode with a step explained")
		box := eval[map[string]float64](t, ctx, `(() => { const s = document.getElementById("step-info").getBoundingClientRect(), v = document.getElementById("view").getBoundingClientRect();
			return {top: s.top + scrollY, bottom: s.bottom + scrollY, vtop: v.top + scrollY, vbottom: v.bottom + scrollY}; })()`)
		if box["top"] > float64(sz[1])-80 || box["top"] < 0 || box["top"] > box["vbottom"] || box["bottom"] < box["vtop"] {
			t.Errorf("%dx%d projector: step explanation at y=%.0f..%.0f, canvas %.0f..%.0f: want it on the first screen beside or over the canvas",
				sz[0], sz[1], box["top"], box["bottom"], box["vtop"], box["vbottom"])
		}
		coverShown(t, ctx, fmt.Sprintf("%dx%d projector", sz[0], sz[1]))
		if sp := eval[string](t, ctx, `document.getElementById("speed").value`); sp != "5" {
			t.Errorf("speed %q from ?speed=5", sp)
		}
		waitFor(t, ctx, `location.search.includes("proj=1") && location.search.includes("speed=5")`, "projector mode and speed in the URL")
	}
}

// TestProjectorStepCoversNoControl: in projector mode the step explanation
// over the canvas covers none of the toolbar's controls, however the toolbar
// wraps (at 1280x720 it covered Zoom − and Fit), on a phone too.
func TestProjectorStepCoversNoControl(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	for _, sz := range [][2]int64{{1280, 720}, {1920, 1080}, {390, 844}} {
		viewport(t, ctx, sz[0], sz[1])
		for _, q := range []string{"preset=demo1&proj=1&sel=3", "preset=compare-chunking&proj=1&sel=40&lang=zh"} {
			open(t, ctx, base+"?"+q)
			waitFor(t, ctx, `servelab.status().projector && document.getElementById("step-info").textContent.includes("ms")`, "projector mode with a step explained")
			coverShown(t, ctx, fmt.Sprintf("%dx%d %s", sz[0], sz[1], q))
		}
	}
}

// coverShown fails when the step explanation overlaps a control of the
// playback toolbar.
func coverShown(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	hit := eval[[]string](t, ctx, `(() => {
		const s = document.getElementById("step-info").getBoundingClientRect();
		return [...document.querySelectorAll(".playback button, .playback select, .playback input")].filter(e => {
			const r = e.getBoundingClientRect();
			return r.width > 0 && r.left < s.right && r.right > s.left && r.top < s.bottom && r.bottom > s.top;
		}).map(e => e.id);
	})()`)
	if len(hit) > 0 {
		t.Errorf("%s: the step explanation covers %v", what, hit)
	}
}

// TestRunsScreenshots writes screenshots of compare mode, the memory lane,
// disaggregation and projector mode (en and zh; 1280x720, 1920x1080 in
// projector mode, 390x844) into $SERVELAB_SHOTS, for a person to look at.
func TestRunsScreenshots(t *testing.T) {
	dir := os.Getenv("SERVELAB_SHOTS")
	if dir == "" {
		t.Skip("set SERVELAB_SHOTS=DIR to write screenshots")
	}
	ctx := tab(t)
	base := serve(t)
	for _, c := range []struct {
		name string
		size [2]int64
		q    string
		js   string // run after the page opened (e.g. select a step)
	}{
		{"memory-held", [2]int64{1280, 720}, "preset=memory-pressure", `servelab.setState({sel: servelab.figures().kv.first_held_step})`},
		{"cmp-chunking", [2]int64{1280, 720}, "preset=compare-chunking&sel=40", ""},
		{"cmp-disagg", [2]int64{1280, 720}, "preset=compare-disagg&sel=10", ""},
		{"memory", [2]int64{1280, 720}, "preset=memory-pressure", ""},
		{"disagg", [2]int64{1280, 720}, "preset=distserve-2p1d&sel=0&span=0.3", ""},
		{"proj-1920", [2]int64{1920, 1080}, "preset=compare-chunking&proj=1&sel=40", ""},
		{"proj-1280", [2]int64{1280, 720}, "preset=demo1&proj=1&sel=3", ""},
		{"phone", [2]int64{390, 844}, "preset=memory-pressure", ""},
	} {
		viewport(t, ctx, c.size[0], c.size[1])
		for _, lang := range []string{"en", "zh"} {
			open(t, ctx, base+"?"+c.q+"&lang="+lang)
			if c.js != "" {
				eval[chromedp.Void](t, ctx, c.js)
			}
			time.Sleep(500 * time.Millisecond)
			buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c.name+"-"+lang+".png"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// upload puts files into the page's upload button as a user would.
func upload(t *testing.T, ctx context.Context, paths ...string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), paths)); err != nil {
		t.Fatalf("upload: %v", err)
	}
}

// writeFile writes text into a fresh temporary file called name.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUploadedConfigJoinsThePicker: a Hugging Face config.json joins the
// model picker, is chosen, and runs (a smaller model: a shorter TTFT).
func TestUploadedConfigJoinsThePicker(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2")
	before := eval[float64](t, ctx, `servelab.figures().ttft.p50`)
	upload(t, ctx, writeFile(t, "tiny-llama-config.json", `{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
		"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
		"num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048}`))
	waitFor(t, ctx, `[...document.getElementById("model").options].some(o => o.value === "tiny-llama") && servelab.getState().model === "tiny-llama"`, "the uploaded model in the picker")
	waitFor(t, ctx, `servelab.figures().query.includes("model=tiny-llama") && servelab.figures().completed > 0`, "the uploaded model to run")
	if after := eval[float64](t, ctx, `servelab.figures().ttft.p50`); !(after > 0 && after < before) {
		t.Errorf("P50 TTFT %.4f s with the 1B model, %.4f s with the 8B: want a shorter one", after, before)
	}
	if v := eval[string](t, ctx, `document.getElementById("model").value`); v != "tiny-llama" {
		t.Errorf("the picker shows %q", v)
	}
}

// TestUploadedTraceIsReplayed: a trace CSV (as servelab sim --trace reads
// it) becomes the workload, request for request.
func TestUploadedTraceIsReplayed(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	var b strings.Builder
	b.WriteString("arrival,prompt,output\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "%.3f,%d,%d\n", float64(i)*0.05, 256+16*i, 32)
	}
	upload(t, ctx, writeFile(t, "requests.csv", b.String()))
	waitFor(t, ctx, `servelab.getState().workload === "trace" && servelab.figures().submitted === 40`, "the trace's 40 requests")
}

// TestThirdUploadAsksAndClearClearsMessages: a third measured file asks
// which run it replaces; a file whose label names another scheduler offers
// to switch; Clear measured clears the files, the questions and the messages.
func TestThirdUploadAsksAndClearClearsMessages(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=lab-chunked")
	lab, err := os.ReadFile(labJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	unchunked := writeFile(t, "unchunked.json", string(lab))
	upload(t, ctx, unchunked)
	waitFor(t, ctx, `servelab.status().overlays === 1 && document.getElementById("up-switch") !== null`, "the offer to switch to the file's scheduler")
	eval[chromedp.Void](t, ctx, `document.getElementById("up-switch").click()`)
	waitFor(t, ctx, `servelab.getState().policy === "prefill-first"`, "the switch to prefill-first")
	upload(t, ctx, writeFile(t, "b.json", string(lab)))
	waitFor(t, ctx, `servelab.status().overlays === 2`, "run B")
	upload(t, ctx, writeFile(t, "c.json", string(lab)))
	waitFor(t, ctx, `document.getElementById("up-replace-b") !== null`, "the question which run the third file replaces")
	if n := eval[float64](t, ctx, `servelab.status().overlays`); n != 2 {
		t.Fatalf("%v overlays while asking: the third file must not replace both", n)
	}
	eval[chromedp.Void](t, ctx, `document.getElementById("up-replace-b").click()`)
	waitFor(t, ctx, `document.getElementById("measured-table").textContent.includes("c.json") && document.getElementById("measured-table").textContent.includes("unchunked.json")`, "c.json as run B beside A")
	upload(t, ctx, writeFile(t, "broken.json", `{"summary": {`))
	waitFor(t, ctx, `!document.getElementById("message").hidden && document.getElementById("message").textContent.includes("broken.json")`, "the error message")
	eval[chromedp.Void](t, ctx, `document.getElementById("clear-measured").click()`)
	waitFor(t, ctx, `servelab.status().overlays === 0 && document.getElementById("message").hidden && document.getElementById("upload-ask").hidden`, "Clear to clear the files and the messages")
}

// TestBestSplitInThePage: the split search (demo 3) finds an x:y for three
// GPUs and "Use" sets it.
func TestBestSplitInThePage(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=distserve-2p1d")
	eval[chromedp.Void](t, ctx, `(() => { document.getElementById("split-gpus").value = "3"; document.getElementById("split-go").click(); })()`)
	waitFor(t, ctx, `document.getElementById("split-use") !== null`, "the best split")
	txt := eval[string](t, ctx, `document.getElementById("split-out").textContent`)
	var x, y int
	if i := strings.Index(txt, "P+"); i < 1 {
		t.Fatalf("split result %q names no x:y", txt)
	} else {
		fmt.Sscanf(txt[i-1:], "%dP+%dD", &x, &y)
	}
	if x < 1 || y < 1 || x+y > 3 {
		t.Fatalf("split %q: want x+y <= 3 GPUs", txt)
	}
	eval[chromedp.Void](t, ctx, `document.getElementById("split-use").click()`)
	waitFor(t, ctx, fmt.Sprintf(`servelab.getState().xp === %d && servelab.getState().yd === %d`, x, y), "the split taken")
}
