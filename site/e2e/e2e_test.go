// Package e2e drives the playground in headless Chromium: the page served by
// site.Handler from the files `make wasm` put in site/, loaded as a student
// would load it. It needs /usr/bin/chromium (`.ci/run` installs it) and
// site/app.wasm (`make wasm`); without either it fails and says which.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"servelab/sim"
	"servelab/sim/lab"
	"servelab/site"
	"servelab/wasm/play"
)

// siteDir is the directory make wasm builds into.
const siteDir = ".."

// chromiumPath is the browser the tests drive; CHROMIUM overrides it.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// serve starts site.Handler on the built site at 127.0.0.1 and returns its URL.
func serve(t testing.TB) string { return serveDir(t, siteDir) }

// serveDir starts site.Handler on the site built in dir and returns its URL.
func serveDir(t testing.TB, dir string) string {
	t.Helper()
	for _, f := range []string{"app.wasm", "wasm_exec.js", "index.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s is missing: run `make wasm` first (%v)", filepath.Join(dir, f), err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: site.Handler(os.DirFS(dir))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// gpuCompositing reports whether the test browser keeps headless
// Chromium's GPU compositing (see browser).
func gpuCompositing() bool { return os.Getenv("SERVELAB_GPU_COMPOSITING") != "" }

// compositing names how the test browser composites the page.
func compositing() string {
	if gpuCompositing() {
		return "GPU compositing through SwiftShader"
	}
	return "software compositing"
}

// browser returns a tab of headless Chromium in a browser context of its
// own (its own cache, storage and service workers, as a fresh profile
// would have), closed when the test ends. The Chromium process is shared by
// the package's tests: starting one per test cost about a second each. It
// runs with the flags that let ebiten render through SwiftShader, and the
// page is composited in software, as Chrome does on a machine without a
// usable GPU (WebGL alone goes through SwiftShader): headless Chromium's own
// default composites through SwiftShader's emulated GL too, which no user's
// browser does and which here cost about 120 ms of CPU a changed frame,
// twice the software compositor's. SERVELAB_GPU_COMPOSITING=1 keeps that
// default, to compare.
func browser(t testing.TB, ctxOpts ...chromedp.ContextOption) context.Context {
	t.Helper()
	root, err := sharedChromium()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancelC := chromedp.NewContext(root, append([]chromedp.ContextOption{chromedp.WithNewBrowserContext()}, ctxOpts...)...)
	limit := 120 * time.Second
	if _, bench := t.(*testing.B); bench {
		limit = 30 * time.Minute // a benchmark's tab makes hundreds of timed moves
	}
	ctx, cancelT := context.WithTimeout(ctx, limit)
	t.Cleanup(func() { cancelT(); cancelC() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// tab returns the package's shared tab, for a test that loads its own page
// and sets nothing on the browser that outlives the test but what the
// cleanup here resets (the viewport, emulated media, touch and focus
// emulation). Its isolation is the origin's: each test serves the site on a
// port of its own (serve), so its page starts with empty storage, HTTP cache
// and service workers, as in a fresh profile. What it shares is the renderer
// process, where V8 keeps the module compiled for the page before: a page
// then loads in about 1.5 s, against 3.5 to 4 s in a browser context of its
// own (a new renderer: app.wasm compiled anew, its first runs in baseline
// code). The tests take the tab in turn; a test that holds it and asks for a
// second page gets a context of its own (browser). A test that fails
// leaves the tab to be closed, and the next test gets a new one.
func tab(t testing.TB) context.Context {
	t.Helper()
	shared.mu.Lock()
	if shared.busy {
		shared.mu.Unlock()
		return browser(t)
	}
	if shared.tab == nil {
		root, err := sharedChromium()
		if err != nil {
			shared.mu.Unlock()
			t.Fatal(err)
		}
		ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
		if err := chromedp.Do(ctx); err != nil {
			cancel()
			shared.mu.Unlock()
			t.Fatalf("open a tab: %v", err)
		}
		shared.tab, shared.close = ctx, cancel
	}
	shared.busy = true
	tabCtx := shared.tab
	shared.mu.Unlock()
	ctx, cancelT := context.WithTimeout(tabCtx, 120*time.Second)
	t.Cleanup(func() {
		cancelT()
		rctx, cancelR := context.WithTimeout(tabCtx, 10*time.Second)
		_, err1 := chromedp.Call(rctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		_, err2 := chromedp.Call(rctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{}})
		_, err3 := chromedp.Call(rctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
		_, err4 := chromedp.Call(rctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: false})
		cancelR()
		shared.mu.Lock()
		defer shared.mu.Unlock()
		shared.busy = false
		if t.Failed() || err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			shared.close()
			shared.tab, shared.close = nil, nil
		}
	})
	return ctx
}

// shared is the tab the package's tests take in turn (tab).
var shared struct {
	mu    sync.Mutex
	tab   context.Context
	close context.CancelFunc
	busy  bool
}

// The package's one Chromium: started by the first test that asks for a
// tab, stopped by TestMain.
var (
	chromiumOnce sync.Once
	chromiumCtx  context.Context
	chromiumErr  error
	chromiumStop = func() {}
)

// sharedChromium is the context of the package's Chromium (a browser with
// no tab of its own use), started on first use.
func sharedChromium() (context.Context, error) {
	chromiumOnce.Do(func() {
		path := chromiumPath()
		if _, err := exec.LookPath(path); err != nil {
			chromiumErr = fmt.Errorf("Chromium not found at %s (install it with `apt-get install -y chromium`, as .ci/run does): %v", path, err)
			return
		}
		dir, err := os.MkdirTemp("", "servelab-chromium-")
		if err != nil {
			chromiumErr = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1400, 900),
			chromedp.Flag("use-angle", "swiftshader"),
			chromedp.Flag("enable-unsafe-swiftshader", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-background-timer-throttling", true),
			chromedp.Flag("disable-renderer-backgrounding", true),
			chromedp.Flag("disable-backgrounding-occluded-windows", true),
		}
		if !gpuCompositing() {
			opts = append(opts, chromedp.Flag("disable-gpu-compositing", true))
		}
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelC := chromedp.NewContext(actx)
		if err := chromedp.Do(ctx); err != nil {
			cancelC()
			cancelA()
			chromiumErr = fmt.Errorf("start Chromium: %v", err)
			return
		}
		chromiumCtx = ctx
		chromiumStop = func() { cancelC(); cancelA(); os.RemoveAll(dir) }
	})
	return chromiumCtx, chromiumErr
}

// TestMain stops the shared Chromium after the package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.close != nil {
		shared.close()
	}
	chromiumStop()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// open loads the page and waits until the app has simulated and drawn.
func open(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
	waitFor(t, ctx, `window.servelab && servelab.ready && servelab.timings().drawnGen >= 1`, "the app to draw its first frame")
}

// pickPreset chooses preset name from the page's preset menu, as a student
// does (no page load), and waits for its run to be drawn.
func pickPreset(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	q := strconv.Quote(name)
	if !eval[bool](t, ctx, `(() => { const s = document.getElementById("preset"); if (![...s.options].some(o => o.value === `+q+`)) return false;
		s.value = `+q+`; s.dispatchEvent(new Event("change")); return true; })()`) {
		t.Fatalf("the preset menu has no %s", name)
	}
	waitFor(t, ctx, `servelab.getState().preset === `+q+` && servelab.timings().gen > `+strconv.Itoa(gen)+` && servelab.timings().drawnGen === servelab.timings().gen`, name+" from the preset menu, drawn")
}

// pickLang chooses lang from the page's language menu, as a student does
// (no page load), and waits for the page to be written in it.
func pickLang(t testing.TB, ctx context.Context, lang string) {
	t.Helper()
	q := strconv.Quote(lang)
	eval[any](t, ctx, `(() => { const s = document.getElementById("lang"); s.value = `+q+`; s.dispatchEvent(new Event("change")); })()`)
	waitFor(t, ctx, `document.documentElement.lang === `+strconv.Quote(play.LangTag(lang))+` && servelab.lecture().lang === `+q, lang+" from the language menu")
}

// waitFor polls a JS predicate: tests wait on the app's state, never on wall time.
// A poll begun as a navigation replaces the document (in a tab reused from
// the test before, tab) can lose its execution context: it is begun again.
func waitFor(t testing.TB, ctx context.Context, pred, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			return
		}
		if strings.Contains(err.Error(), "Cannot find context with specified id") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("message")||{}).textContent || ""`))
		t.Fatalf("waiting for %s (%s): %v; page message: %q", what, pred, err, msg)
	}
}

func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// viewport sizes the page as a screen of w x h CSS pixels at scale 1, a
// phone's (touch, mobile layout) below 500 wide.
func viewport(t testing.TB, ctx context.Context, w, h int64) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: w, Height: h, DeviceScaleFactor: 1, Mobile: w < 500}); err != nil {
		t.Fatal(err)
	}
}

// setRange moves a slider as a user would: set the value, fire input.
func setRange(t testing.TB, ctx context.Context, id string, v float64) {
	t.Helper()
	eval[chromedp.Void](t, ctx, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("input", {bubbles: true})); })()`, id, fmt.Sprint(v)))
}

func TestPageLoadsAndCanvasDraws(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	// The canvas exists inside the frame, has a size, and what it shows is a
	// picture (many colours), not a blank.
	size := eval[[]int](t, ctx, `(() => { const c = document.getElementById("view").contentDocument.querySelector("canvas"); return c ? [c.width, c.height] : [0, 0]; })()`)
	if len(size) != 2 || size[0] < 100 || size[1] < 100 {
		t.Fatalf("timeline canvas size %v, want a sized canvas", size)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#view")))
	if err != nil {
		t.Fatalf("screenshot the timeline: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if n := colours(img); n < 6 {
		t.Errorf("the timeline shows %d distinct colours; a drawn timeline has many", n)
	}
	for _, id := range []string{"fig-ttft-p90", "fig-tpot-p90", "fig-itl-p99"} {
		txt := eval[string](t, ctx, fmt.Sprintf(`document.getElementById(%q).textContent`, id))
		if txt == "" || txt == "–" {
			t.Errorf("#%s shows %q, want a number", id, txt)
		}
	}
	// Every preset link on the page names a preset the app knows, and every preset has a link.
	bad := eval[[]string](t, ctx, `(() => { const known = servelab.presets().map(p => p.name);
		const linked = [...document.querySelectorAll("nav.presets a")].map(a => new URL(a.href).searchParams.get("preset"));
		return linked.filter(n => !known.includes(n)).concat(known.filter(n => !linked.includes(n)).map(n => "unlinked " + n)); })()`)
	if len(bad) > 0 {
		t.Errorf("preset links and presets disagree: %v", bad)
	}
	// Every control has an id and a label.
	unlabelled := eval[[]string](t, ctx, `[...document.querySelectorAll("input, select, button")].filter(e => !e.id || (e.tagName !== "BUTTON" && !(e.labels && e.labels.length))).map(e => e.outerHTML.slice(0, 60))`)
	if len(unlabelled) > 0 {
		t.Errorf("controls without an id or a label: %v", unlabelled)
	}
}

// colours counts distinct colours on a coarse grid of the image.
func colours(img image.Image) int {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
		}
	}
	return len(seen)
}

func TestRateSliderChangesP90TPOT(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2")
	before := eval[string](t, ctx, `document.getElementById("fig-tpot-p90").textContent`)
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	setRange(t, ctx, "rate", 50)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d`, gen), "a re-simulation after the slider moved")
	after := eval[string](t, ctx, `document.getElementById("fig-tpot-p90").textContent`)
	if after == before || after == "–" {
		t.Fatalf("P90 TPOT shown %q before and %q after moving the rate from 20 to 50 req/s; want a change", before, after)
	}
	if r := eval[float64](t, ctx, `servelab.getState().rate`); r != 50 {
		t.Errorf("state rate %g after the slider, want 50", r)
	}
	if q := eval[string](t, ctx, `servelab.query()`); !strings.Contains(q, "rate=50") {
		t.Errorf("query %q does not hold the new rate", q)
	}
}

// A change is handled as its event comes (wasm App.workNow), but a burst of
// events between two frames, as a fast drag sends, still makes one run:
// the last value's, shown once.
func TestEventsBetweenFramesMakeOneRun(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2")
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	eval[chromedp.Void](t, ctx, `(() => { const e = document.getElementById("rate");
		for (const v of [21, 23, 25, 27, 29]) { e.value = String(v); e.dispatchEvent(new Event("input", {bubbles: true})); } })()`)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d`, gen), "a re-simulation after the burst")
	time.Sleep(300 * time.Millisecond) // a second run, were there one, would land meanwhile
	if got := eval[int](t, ctx, `servelab.timings().gen`); got != gen+1 {
		t.Errorf("five events in one task made %d runs, want 1", got-gen)
	}
	if q := eval[string](t, ctx, `servelab.figures().query`); !strings.Contains(q, "rate=29&") {
		t.Errorf("the figures are for %q, want the last value's (rate=29)", q)
	}
}

func TestPresetLinkRestoresSettings(t *testing.T) {
	ctx := tab(t)
	base := serve(t)
	open(t, ctx, base+"?preset=demo4")
	got := eval[map[string]any](t, ctx, `({policy: document.getElementById("policy").value, budget: +document.getElementById("budget").value,
		rate: +document.getElementById("rate").value, bdec: document.getElementById("bdec").checked, preset: document.getElementById("preset").value})`)
	want := map[string]any{"policy": "chunked", "budget": 512.0, "rate": 40.0, "bdec": false, "preset": "demo4"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("after ?preset=demo4, %s = %v, want %v", k, got[k], v)
		}
	}
	// The URL now holds every setting: opening it reproduces the state.
	waitFor(t, ctx, `location.search.includes("budget=512")`, "the URL to hold the settings")
	q := eval[string](t, ctx, `location.search`)
	st1 := eval[map[string]any](t, ctx, `servelab.getState()`)
	ctx2 := browser(t) // a second page at once: a context of its own
	open(t, ctx2, base+q)
	st2 := eval[map[string]any](t, ctx2, `servelab.getState()`)
	for k, v := range st1 {
		if st2[k] != v {
			t.Errorf("shared link: %s = %v, want %v", k, st2[k], v)
		}
	}
	f1 := eval[string](t, ctx, `document.getElementById("fig-ttft-p90").textContent`)
	f2 := eval[string](t, ctx2, `document.getElementById("fig-ttft-p90").textContent`)
	if f1 != f2 {
		t.Errorf("shared link shows P90 TTFT %s, the original %s", f2, f1)
	}
}

func TestAbsurdURLValuesAreClamped(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?rate=1e12&prompt=-5&n=abc&policy=nonsense")
	notes := eval[string](t, ctx, `document.getElementById("notes").textContent`)
	for _, want := range []string{"Arrival rate", "Prompt length", "Requests", "policy"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not mention %s", notes, want)
		}
	}
	st := eval[map[string]any](t, ctx, `servelab.getState()`)
	if st["rate"] != 200.0 || st["prompt"] != 1.0 || st["policy"] != "prefill-first" {
		t.Errorf("clamped state %v, want rate 200, prompt 1, policy prefill-first", st)
	}
}

// labJSON writes a measured file as `servelab measure` would, from a small simulated lab run.
func labJSON(t *testing.T) string {
	t.Helper()
	c := lab.DefaultConfig()
	c.ShortConcurrency, c.Duration, c.InjectAfter, c.LongInputLen = 8, 6, 2, 8000
	st, err := sim.DefaultStepModel()
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
	p := filepath.Join(t.TempDir(), "lab.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUploadOverlayAndMalformedFile(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	good := labJSON(t)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{good})); err != nil {
		t.Fatalf("upload: %v", err)
	}
	waitFor(t, ctx, `servelab.status().overlays === 1 && servelab.getState().workload === "lab" && servelab.timings().drawnGen === servelab.timings().gen`, "the lab JSON to be overlaid")
	st := eval[map[string]any](t, ctx, `servelab.getState()`)
	if st["streams"] != 8.0 || st["long"] != 8000.0 || st["inject"] != 2.0 {
		t.Errorf("simulation not configured from the file's config: %v", st)
	}
	table := eval[string](t, ctx, `document.getElementById("measured-table").textContent`)
	for _, want := range []string{"worst gap", "spike ratio", "long TTFT", "lab.json"} {
		if !strings.Contains(table, want) {
			t.Errorf("measured table lacks %q: %s", want, table)
		}
	}

	bad := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(bad, []byte(`{"summary": {"label": 3`), 0o644)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{bad})); err != nil {
		t.Fatalf("upload: %v", err)
	}
	waitFor(t, ctx, `document.getElementById("message").className === "error" && document.getElementById("message").textContent.includes("broken.json")`, "a message about the malformed file")
	// The page keeps working: a slider still re-simulates.
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	setRange(t, ctx, "streams", 12)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d && servelab.getState().streams === 12`, gen), "a re-simulation after the malformed upload")
	if e := eval[string](t, ctx, `servelab.status().error`); e != "" {
		t.Errorf("simulation error after a malformed upload: %s", e)
	}
}

func TestExports(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2")
	// Catch the files the buttons hand to the browser.
	eval[any](t, ctx, `window.__blobs = []; URL.createObjectURL = b => { window.__blobs.push({type: b.type, size: b.size}); return "data:,"; }`)
	for _, id := range []string{"export-png", "export-csv", "export-json"} {
		eval[any](t, ctx, fmt.Sprintf(`document.getElementById(%q).click()`, id))
	}
	waitFor(t, ctx, `window.__blobs.length === 3`, "three exported files")
	blobs := eval[[]map[string]any](t, ctx, `window.__blobs`)
	types := map[string]float64{}
	for _, b := range blobs {
		types[b["type"].(string)] = b["size"].(float64)
	}
	for _, want := range []string{"image/png", "text/csv", "application/json"} {
		if types[want] < 100 {
			t.Errorf("export %s: %v bytes, want a file (got %v)", want, types[want], blobs)
		}
	}
	// The JSON API agrees with what the page shows.
	f := eval[map[string]any](t, ctx, `servelab.figures()`)
	shown := eval[string](t, ctx, `document.getElementById("fig-tpot-p90").textContent`)
	if got := fmt.Sprintf("%.2f", f["tpot"].(map[string]any)["p90"].(float64)*1e3); got != shown {
		t.Errorf("servelab.figures().tpot.p90 = %s ms, page shows %s", got, shown)
	}
}

func TestPanicIsCaughtAndReported(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	eval[any](t, ctx, `servelab.selfTest("panic")`)
	waitFor(t, ctx, `document.getElementById("message").textContent.includes("recovered")`, "the panic to be reported on the page")
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	setRange(t, ctx, "rate", 33)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d`, gen), "a re-simulation after the panic")
}

func TestTooBigRunIsCutShort(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?n=20000&rate=0.1&output=4096")
	msg := eval[string](t, ctx, `document.getElementById("message").textContent`)
	if !strings.Contains(msg, "cut short") {
		t.Errorf("message %q does not say the run was cut short", msg)
	}
	// The tab is not frozen: another change re-simulates.
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	setRange(t, ctx, "rate", 20)
	eval[any](t, ctx, `document.getElementById("n").value = "300"; document.getElementById("n").dispatchEvent(new Event("input"))`)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d && servelab.getState().n === 300`, gen), "a re-simulation after the cut-short run")
}

func TestABCompareAndVLLMUpload(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	a, b := labJSON(t), labJSON(t)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{a, b})); err != nil {
		t.Fatalf("upload: %v", err)
	}
	waitFor(t, ctx, `servelab.status().overlays === 2`, "runs A and B on one clock")
	table := eval[string](t, ctx, `document.getElementById("measured-table").textContent`)
	if !strings.Contains(table, "A: lab.json") || !strings.Contains(table, "B: lab.json") {
		t.Errorf("measured table does not show A and B side by side: %s", table)
	}

	// A vLLM bench result configures a Poisson run of its mean lengths and rate.
	vllm := filepath.Join(t.TempDir(), "vllm.json")
	os.WriteFile(vllm, []byte(`{"backend": "vllm", "duration": 10, "completed": 4,
		"input_lens": [500, 520, 510, 518], "output_lens": [60, 64, 66, 66],
		"ttfts": [0.02, 0.03, 0.025, 0.04], "errors": ["", "", "", ""],
		"itls": [[0.007, 0.008], [0.007, 0.009], [0.008, 0.007], [0.03, 0.007]]}`), 0o644)
	eval[any](t, ctx, `document.getElementById("clear-measured").click()`)
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("upload"), []string{vllm})); err != nil {
		t.Fatalf("upload: %v", err)
	}
	waitFor(t, ctx, `servelab.status().overlays === 1 && servelab.getState().workload === "poisson" && servelab.getState().prompt === 512`, "the vLLM result to configure the simulation")
	st := eval[map[string]any](t, ctx, `servelab.getState()`)
	if st["output"] != 64.0 || st["n"] != 4.0 || st["rate"] != 0.4 {
		t.Errorf("state from the vLLM result: %v, want output 64, n 4, rate 0.4", st)
	}
	waitFor(t, ctx, `document.getElementById("measured-table").textContent.includes("TTFT P90")`, "the vLLM figures beside the simulated ones")
}

func TestKeyboardPlayback(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2")
	eval[any](t, ctx, `document.activeElement && document.activeElement.blur()`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(".")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `servelab.getState().cursor > 0`, "'.' to single-step the playback")
	c1 := eval[float64](t, ctx, `servelab.getState().cursor`)
	chromedp.Do(ctx, chromedp.KeyEvent("."))
	waitFor(t, ctx, fmt.Sprintf(`servelab.getState().cursor > %g`, c1), "a second step")
	span := eval[float64](t, ctx, `servelab.getState().span`)
	chromedp.Do(ctx, chromedp.KeyEvent("+"))
	waitFor(t, ctx, fmt.Sprintf(`servelab.getState().span < %g`, span), "'+' to zoom in")
	chromedp.Do(ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("play").getAttribute("aria-pressed") === "true"`, "Space to start playback")
}

func TestClickExplainsStep(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo1")
	box := eval[[]float64](t, ctx, `(() => { const b = document.getElementById("view").getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; })()`)
	// The middle of the GPU row, in page coordinates.
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(box[0]+box[2]*0.5, box[1]+60)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("step-info").textContent.includes("-bound")`, "the step explanation")
	info := eval[string](t, ctx, `document.getElementById("step-info").textContent`)
	for _, want := range []string{"FLOPs", "Bytes", "Overhead", "max(", "989 TFLOP/s × 0.60"} {
		if !strings.Contains(info, want) {
			t.Errorf("step explanation lacks %q: %s", want, info)
		}
	}
	// The selection is part of the link.
	waitFor(t, ctx, `servelab.getState().sel >= 0 && location.search.includes("sel=")`, "the selected step in the URL")
}

func TestDropOnTimeline(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	data, err := os.ReadFile(labJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	// A file dropped on the canvas lands in the frame's document.
	eval[any](t, ctx, fmt.Sprintf(`(() => {
		const f = document.getElementById("view").contentWindow;
		const dt = new f.DataTransfer();
		dt.items.add(new f.File([%q], "dropped.json", {type: "application/json"}));
		f.document.body.dispatchEvent(new f.DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`, string(data)))
	waitFor(t, ctx, `servelab.status().overlays === 1 && document.getElementById("measured-table").textContent.includes("dropped.json")`, "the dropped file to be overlaid")
}

func TestProjectorModeAndSetState(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t))
	eval[any](t, ctx, `document.getElementById("projector").click()`)
	waitFor(t, ctx, `servelab.status().projector && document.body.classList.contains("projector") &&
		document.getElementById("view").contentDocument.getElementById("labels").classList.contains("projector")`, "projector mode on the page and the canvas labels")
	if big := eval[float64](t, ctx, `parseFloat(getComputedStyle(document.body).fontSize)`); big < 18 {
		t.Errorf("projector mode font %gpx, want large", big)
	}
	// The JS API sets state as a slide would.
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	eval[any](t, ctx, `servelab.setState({policy: "chunked", budget: 256, rate: 35})`)
	waitFor(t, ctx, fmt.Sprintf(`servelab.timings().drawnGen > %d && document.getElementById("policy").value === "chunked" && document.getElementById("budget").value === "256"`, gen), "setState to re-simulate and update the controls")
}

func TestReducedMotionIsRespected(t *testing.T) {
	ctx := tab(t)
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
		t.Fatal(err)
	}
	open(t, ctx, serve(t))
	if !eval[bool](t, ctx, `servelab.status().reducedMotion`) {
		t.Fatal("the app did not see prefers-reduced-motion")
	}
	// Playback still works, a step at a time.
	eval[any](t, ctx, `document.getElementById("play").click()`)
	waitFor(t, ctx, `servelab.getState().cursor > 0`, "playback to advance")
}

// TestSLOMoveRefigures: a new SLO changes the attainment and restarts the
// goodput on the run the page has, without simulating it again (a run does
// not read its SLO).
func TestSLOMoveRefigures(t *testing.T) {
	ctx := tab(t)
	open(t, ctx, serve(t)+"?preset=demo2&lang=en")
	waitFor(t, ctx, `servelab.figures().goodput >= 0`, "the first goodput")
	att := eval[float64](t, ctx, `servelab.figures().attainment`)
	gen := eval[int](t, ctx, `servelab.timings().gen`)
	eval[chromedp.Void](t, ctx, `(() => { const e = document.getElementById("slotpot"); e.value = "0.5"; e.dispatchEvent(new Event("change", {bubbles: true})); e.dispatchEvent(new Event("input", {bubbles: true})); })()`)
	waitFor(t, ctx, fmt.Sprintf(`servelab.figures().attainment !== %v && servelab.figures().goodput >= 0`, att), "the attainment and goodput for the new SLO")
	if got := eval[float64](t, ctx, `servelab.figures().attainment`); got >= att {
		t.Errorf("a 0.5 ms TPOT SLO gives attainment %v, was %v with 15 ms", got, att)
	}
	if g := eval[int](t, ctx, `servelab.timings().gen`); g != gen {
		t.Errorf("the SLO move simulated again (generation %d → %d)", gen, g)
	}
	// The address bar is written in a quiet frame after the change (at most
	// every 250 ms), so it may follow the figures by a frame or two.
	waitFor(t, ctx, `location.search.includes("slotpot=0.5")`, "the new SLO in the URL")
	// Two moves in a row: the goodput shown is the last SLO's, as a page
	// opened on it computes it (the first move's search is cancelled).
	eval[chromedp.Void](t, ctx, `(() => { const e = document.getElementById("slotpot"); for (const v of ["9", "40"]) { e.value = v; e.dispatchEvent(new Event("input", {bubbles: true})); } })()`)
	waitFor(t, ctx, `servelab.figures().goodput >= 0 && location.search.includes("slotpot=40")`, "the goodput for the last SLO")
	got := eval[float64](t, ctx, `servelab.figures().goodput`)
	open(t, ctx, serve(t)+"?preset=demo2&lang=en&slotpot=40")
	waitFor(t, ctx, `servelab.figures().goodput >= 0`, "a fresh page's goodput")
	if want := eval[float64](t, ctx, `servelab.figures().goodput`); got != want {
		t.Errorf("after two SLO moves the goodput is %v; a page opened on the last SLO says %v", got, want)
	}
}
