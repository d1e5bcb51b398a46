//go:build js && wasm

// Command wasm is servelab's browser playground: an ebiten canvas (the
// timeline) inside an iframe, driven by the DOM controls of the page around
// it. Every change re-simulates at once; everything drawn comes from the
// simulation's trace and results.
package main

import (
	"fmt"
	"image"
	"math"
	"runtime/debug"
	"servelab/wasm/play"
	"sync"
	"syscall/js"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"honnef.co/go/js/dom/v2"
)

func imageRect(x0, y0, x1, y1 int) image.Rectangle { return image.Rect(x0, y0, x1, y1) }

// App is the playground's state. A frame's work owns it (tick, then
// ebiten's Update and Draw: "the Update goroutine" below); DOM callbacks
// only queue work (under mu) and read the published snapshot.
type App struct {
	mu    sync.Mutex
	queue []func()
	pub   published // what the JS API reads

	win, doc js.Value // the controls page (the iframe's parent)
	own      js.Value // the iframe's own document
	pdoc     dom.Document
	pg       *page

	sess  *play.Session // what this page uploaded, and the memory its runs reuse (every state names it)
	pn    panels        // the page's panels: each renders from ui() and emits events to handle
	lang  string        // "en" or "zh"
	info  string        // the preset's or the last upload's description, kept on screen
	embed bool          // ?embed=1: the canvas and the chapter's figure only
	lec   *lecture      // lecture mode's open chapter; nil outside it
	calib calibration   // the "Calibrate from this measurement" job
	big   bigUpload     // a large upload being read in slices

	state     play.State
	run       *play.SimRun
	simErr    string
	notes     []string
	gen       int // bumps on every re-simulation
	needSim   bool
	rs        *resim // a re-simulation under way (nil: none)
	dirty     bool   // the canvas must be repainted
	drawnGen  int
	figs      play.Figures
	rates     []play.RatePoint
	oldRates  []play.RatePoint // the points last shown: dimmed, they hold the chart's place while a change's are computed (the side panel does not jump)
	bgPending bool
	figGen    int       // counts the figures' recomputations (a re-simulation or a new SLO): the background's are for one
	changedAt time.Time // when a setting last changed (the background figures wait for a rest)
	eventAt   time.Time // when the event being handled came (zero: none)
	inFrame   bool      // a tick, an Update, a Draw or workNow is under way
	simmed    bool      // a re-simulation began since the last tick
	landed    bool      // a re-simulation landed since the last tick
	soon      bool      // workNow is due (workSoon)
	soonFn    js.Func
	bgAt      time.Time

	view      View
	playing   bool
	speed     float64
	lastTick  time.Time
	reduced   bool
	projector bool

	overlays [2]*play.Overlay // A and B
	cmp      compareState     // compare mode: run B on the same clock
	touch    touchState
	ask      uploadAsk
	split    splitState

	dpr        float64
	w, h       int
	batch      *batch
	off        *ebiten.Image
	labels     []label
	labelsHTML string // the labels' markup last set
	simMs      float64
	drawMs     float64
	urlDirty   bool
	urlAt      time.Time
	frameAt    time.Time // when this frame's work began (tick ends a frame)
	press      bool
	pressX     float64
	pressT0    float64
	dragged    bool
	// lastDragged tells the click that ends a drag not to select.
	lastDragged bool
	exportReq   bool
	live        liveState
}

// published is the snapshot the JS API reads without touching the Update goroutine.
type published struct {
	state    play.State
	figs     play.Figures
	rates    []play.RatePoint
	simMs    float64
	drawMs   float64
	gen      int
	figGen   int // the figures' generation (App.figGen)
	drawnGen int
	err      string
	notes    []string
	overlays int
	// simPending: a change waits for its re-simulation (background figures are stale)
	simPending bool
	// figState(B): the state of the run(s) whose figures are shown
	figState, figStateB play.State
	// compare mode: run B's state and figures
	cmpOn  bool
	stateB play.State
	figsB  play.Figures
	errB   string
	kvA    kvFigures
	kvB    kvFigures
	simMsB float64 // run B's part of simMs
	// live mode: companion present, token frames received, a run in progress
	projector   bool
	live        bool
	liveProbed  bool
	liveFrames  int
	liveRunning bool
	liveEdge    bool   // live mode measures through the edge proxy, in the page
	liveJSON    string // the last edge run's lab JSON
	// lecture mode: the chapter, whether its table is complete, how many
	// tables were completed, how long the last took (ms), the language
	lecID   string
	lecDone bool
	lecGen  int
	lecMs   float64
	lang    string
	embed   bool
	query   string
}

// post queues f to run on the Update goroutine. Safe from any callback.
func (a *App) post(f func()) {
	a.mu.Lock()
	a.queue = append(a.queue, f)
	a.mu.Unlock()
}

// postNow runs f at once when no frame is under way, else queues it. A
// goroutine that is running holds the one wasm thread, so between frames
// nothing else touches the state; f's result is then on the page at the
// next frame, not one frame later (under a busy renderer 10-65 ms).
func (a *App) postNow(where string, f func()) {
	if a.inFrame {
		a.post(f)
		return
	}
	a.guard(where, f)
}

// mark notes a start-up stage in the page's servelabMarks (ms since navigation).
func (a *App) mark(name string) {
	if m := a.win.Get("servelabMarks"); m.Type() == js.TypeObject {
		m.Set(name, a.win.Get("performance").Call("now"))
	}
}

// fail reports a recovered panic on the page; the app keeps running.
func (a *App) fail(where string, r any) {
	println(fmt.Sprintf("internal error in %s: %v", where, r), string(debug.Stack()))
	a.message(play.Tf(a.lang, "msg.internal", where, fmt.Sprint(r)), true)
}

// guard runs f, turning a panic into a message on the page.
func (a *App) guard(where string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			a.fail(where, r)
		}
	}()
	f()
}

// message shows a line in the page's alert area (errors); "" hides it.
func (a *App) message(text string, isErr bool) { showMessage(a.pg, text, isErr) }

func (a *App) el(id string) js.Value { return a.pg.el(id) }

// listen adds a guarded DOM listener (see page.listen).
func (a *App) listen(target js.Value, event string, f func(ev js.Value)) {
	a.pg.listen(target, event, f)
}

// panels are the page's panels (a new one: a field here and in all).
type panels struct {
	controls controlsPanel
	figures  figuresPanel
	measured measuredPanel
	stepInfo stepPanel
	msgs     messagesPanel
	glossary glossaryPanel
	lang     langPanel
	chapter  chapterPanel
	compare  comparePanel
	upload   uploadPanel
	split    splitPanel
	profile  profilePanel
	calib    calibratePanel
	bench    benchNotesPanel
	big      bigUploadPanel
}

// all is every panel, in render order.
func (p *panels) all() []panel {
	return []panel{&p.lang, &p.glossary, &p.controls, &p.msgs, &p.figures, &p.measured, p.stepInfo, &p.chapter, p.compare, p.upload, p.split, &p.profile, p.calib, p.bench, p.big}
}

// emit queues a panel's event for the Update goroutine, with the time it
// came (a setting's rest counts from its input, not from the next frame).
func (a *App) emit(ev event) {
	at := time.Now()
	a.post(func() {
		a.eventAt = at
		a.handle(ev)
		a.eventAt = time.Time{}
	})
	a.workSoon()
}

// workSoon runs workNow once the JavaScript task under way has ended, so a
// burst of events in one task (a fast drag's, a script's) is one change.
func (a *App) workSoon() {
	if a.soon {
		return
	}
	a.soon = true
	if !a.soonFn.Truthy() {
		a.soonFn = a.jsFunc("an event", nil, func([]js.Value) {
			a.soon = false
			go a.workNow() // a DOM callback must not block
		})
	}
	js.Global().Call("setTimeout", a.soonFn, 0)
}

// ui is the state the panels render.
func (a *App) ui() *uiState {
	u := &uiState{lang: a.lang, st: &a.state, run: a.run, simErr: a.simErr, figs: a.figs, rates: a.rates, oldRates: a.oldRates,
		overlays: a.overlays, notes: a.notes, info: a.info, playing: a.playing, cursor: a.view.Cursor,
		stepRow: a.view.HoverRow, step: a.view.Hover, projector: a.projector, embed: a.embed,
		cmp: &a.cmp, stepPane: a.view.HoverPane, speed: a.speed, ask: &a.ask, split: &a.split,
		calib: &a.calib, big: &a.big}
	if u.step < 0 {
		u.stepRow, u.step, u.stepPane = a.view.SelRow, a.view.Sel, a.view.SelPane
	}
	if a.lec != nil {
		u.lec = a.lec.view()
	}
	return u
}

// render shows the state on every panel.
func (a *App) render() {
	u := a.ui()
	for _, p := range a.pn.all() {
		a.guard("a panel", func() { p.render(a.pg, u) })
	}
	a.publish()
}

// renderFigures refreshes what the background figures change: the figures
// (goodput, latency vs rate) and compare mode's table. Rendering every
// panel would cost a frame.
func (a *App) renderFigures() {
	u := a.ui()
	for _, p := range []panel{&a.pn.figures, a.pn.compare} {
		a.guard("a panel", func() { p.render(a.pg, u) })
	}
	a.publish()
}

// renderStep refreshes the step explanation only (hover moves often).
func (a *App) renderStep() { a.pn.stepInfo.render(a.pg, a.ui()) }

func main() {
	// A collection stops the one wasm thread; a larger heap goal makes them
	// rarer (the live heap is ~20 MB).
	debug.SetGCPercent(400)
	a := &App{speed: 0.25, view: View{Sel: -1, Hover: -1, SelRow: -1, HoverRow: -1}, sess: play.NewSession()}
	a.own = js.Global().Get("document")
	a.win = js.Global().Get("parent")
	if a.win.IsUndefined() || a.win.IsNull() {
		a.win = js.Global()
	}
	a.doc = a.win.Get("document")
	a.mark("main")
	// Elements of the parent page come back as *dom.BasicHTMLElement (the
	// iframe's constructors do not match them), so only Underlying() is used.
	a.pdoc = dom.WrapDocument(a.doc)
	a.pg = &page{doc: a.doc, pdoc: a.pdoc, guard: a.guard}
	a.dpr = ebiten.Monitor().DeviceScaleFactor()
	if a.dpr <= 0 {
		a.dpr = 1
	}
	mq := a.win.Call("matchMedia", "(prefers-reduced-motion: reduce)")
	a.reduced = mq.Truthy() && mq.Get("matches").Bool()

	q := a.win.Get("location").Get("search").String()
	a.lang = play.PickLang(q, a.win.Get("navigator").Get("language").String())
	st, notes := play.ParseQueryIn(q, a.lang)
	st.Sess = a.sess
	a.state = st
	a.notes = notes
	a.embed = play.QueryFlag(q, "embed")
	a.readScreenQuery(q)
	if p, ok := play.PresetByName(st.Preset); ok {
		a.info = presetInfo(a.lang, p.Name)
	}
	if ch := play.QueryValue(q, "chapter"); ch != "" {
		a.openChapter(ch, false)
	}
	a.needSim = true
	a.bindControls()
	a.installAPI()
	a.probeLive()
	a.batch = newBatch()

	ebiten.SetRunnableOnUnfocused(true)
	ebiten.SetScreenClearedEveryFrame(false)
	ebiten.SetWindowTitle("servelab timeline")
	a.startFrames()
	a.mark("rungame")
	if err := ebiten.RunGame(&game{a}); err != nil {
		a.message(play.Tf(a.lang, "msg.stopped", err.Error()), true)
	}
}

// busy marks the page's work under way (inFrame) until the function it
// returns, deferred, ends it; a panic is then reported, not fatal, and
// with dropSim the pending re-simulation is dropped (it would panic again).
func (a *App) busy(where string, dropSim bool) func() {
	a.inFrame = true
	return func() {
		a.inFrame = false
		if r := recover(); r != nil {
			a.fail(where, r)
			if dropSim {
				a.needSim = false
			}
		}
	}
}

type game struct{ a *App }

// Update reads the mouse and makes a requested PNG (both need ebiten's
// frame); the rest of a frame's work is tick's. A panic is reported, not
// fatal.
func (g *game) Update() error {
	a := g.a
	if a.inFrame {
		return nil // (a tick's work blocked: it ends first)
	}
	defer a.busy("Update", true)()
	a.mouse()
	if a.exportReq {
		a.exportReq = false
		a.exportPNG()
	}
	return nil
}

// work drains the queued changes and runs what they ask for: a chapter's
// table first, then the re-simulation. now: called as an event comes, not
// in a frame; it then begins at most one re-simulation per frame drawn (a
// drag's events coalesce as they would in frames) and advances no job
// already under way (those run a slice per frame).
func (a *App) work(now bool) {
	// The frame's work is measured from its first (workNow's, when an
	// event began a long run before it).
	if a.frameAt.IsZero() {
		a.frameAt = time.Now()
	}
	a.mu.Lock()
	q := a.queue
	a.queue = nil
	a.mu.Unlock()
	for _, f := range q {
		a.guard("a queued change", f)
	}
	// A chapter's table comes first; the timeline re-simulates once it is
	// shown (in the same frame if that leaves room, else the next).
	a.tickLecture(a.frameAt)
	began := false
	if a.needSim && !(now && a.simmed) && !a.lectureBusy(a.frameAt) {
		a.needSim, a.simmed, began = false, true, true
		a.beginResim()
	}
	if a.rs != nil && (!now || began) && !a.lectureBusy(a.frameAt) {
		a.advanceResim()
	}
	a.mu.Lock()
	a.pub.simPending = a.needSim || a.rs != nil // (the background figures are stale already)
	a.mu.Unlock()
}

// workNow is work as an event comes, between frames: the change is
// simulated at once, not at the next frame, which a busy renderer was seen
// to hold back 10-100 ms.
func (a *App) workNow() {
	if a.inFrame {
		return // the frame under way drains the queue
	}
	defer a.busy("an event", true)()
	prev := a.frameAt
	a.work(true)
	if a.rs == nil {
		// The next frame has its own budget: a chapter's jobs run some
		// each frame. (A long run under way keeps this one's: its slices
		// are a frame's.)
		a.frameAt = prev
	}
}

// Draw repaints only when something changed; the screen is kept between frames.
func (g *game) Draw(screen *ebiten.Image) {
	a := g.a
	defer a.busy("Draw", false)()
	w, h := screen.Bounds().Dx(), screen.Bounds().Dy()
	if w != a.w || h != a.h || a.off == nil {
		a.w, a.h = w, h
		if a.off != nil {
			a.off.Deallocate()
		}
		a.off = ebiten.NewImage(w, h)
		a.dirty = true
	}
	if a.dirty {
		t0 := time.Now()
		a.dirty = false
		a.labels = a.paintAll(a.off)
		a.drawMs = float64(time.Since(t0).Microseconds()) / 1e3
		if a.drawnGen == 0 && a.run != nil {
			// The parent page's clock starts at its navigation: this is the time to the first frame.
			a.win.Set("servelabFirstFrameMs", a.win.Get("performance").Call("now"))
			a.mark("drawn")
		}
		a.drawnGen = a.gen
		if el := a.own.Call("getElementById", "labels"); !el.IsNull() {
			if h := labelsHTML(a.labels, a.dpr); h != a.labelsHTML { // (unchanged labels: no relayout)
				el.Set("innerHTML", h)
				a.labelsHTML = h
			}
			el.Get("classList").Call("toggle", "projector", a.projector)
		}
		a.publish()
		// The screen is kept between frames, so copy only a new picture:
		// under a software renderer every full-screen copy costs CPU.
		screen.DrawImage(a.off, nil)
	}
}

// LayoutF renders at device pixels so lines stay sharp on HiDPI screens.
func (g *game) LayoutF(w, h float64) (float64, float64) {
	return math.Max(1, w*g.a.dpr), math.Max(1, h*g.a.dpr)
}

// Layout is required by ebiten.Game; LayoutF is what ebiten uses.
func (g *game) Layout(w, h int) (int, int) {
	x, y := g.LayoutF(float64(w), float64(h))
	return int(x), int(y)
}

// geom is the current layout of run A's pane (for hit tests and zoom:
// every pane shares its time axis).
func (a *App) geom() geom { return a.panes()[0].geo }

// locateStep turns a global step index into (row, index).
func (a *App) locateStep(k int) (int, int) {
	for ri, row := range a.run.Rows {
		if k < len(row.Iters) {
			return ri, k
		}
		k -= len(row.Iters)
	}
	return 0, -1
}

// globalStep is the inverse of locateStep.
func (a *App) globalStep(row, k int) int {
	if a.run == nil || k < 0 {
		return -1
	}
	n := 0
	for ri := 0; ri < row && ri < len(a.run.Rows); ri++ {
		n += len(a.run.Rows[ri].Iters)
	}
	return n + k
}

func (a *App) publish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pub = published{state: a.state.Clone(), figs: a.figs, rates: append([]play.RatePoint(nil), a.rates...),
		simMs: a.simMs, drawMs: a.drawMs, gen: a.gen, figGen: a.figGen, drawnGen: a.drawnGen, err: a.simErr,
		notes: append([]string(nil), a.notes...), simPending: a.needSim || a.rs != nil}
	for _, o := range a.overlays {
		if o != nil {
			a.pub.overlays++
		}
	}
	a.pub.cmpOn, a.pub.figsB, a.pub.errB = a.cmp.pair.On, a.cmp.figsB, a.cmp.errB
	if a.cmp.runB != nil {
		a.pub.simMsB = a.cmp.runB.SimMs
	}
	if a.cmp.pair.On {
		a.pub.stateB = a.cmp.stateB.Clone()
	}
	a.pub.figState, a.pub.figStateB = a.pub.state, a.pub.stateB
	if a.pub.simPending && a.run != nil {
		a.pub.figState = a.run.State.Clone() // while a re-simulation is under way the figures are the run's shown
	}
	if a.pub.simPending && a.cmp.runB != nil {
		a.pub.figStateB = a.cmp.runB.State.Clone()
	}
	a.pub.kvA, a.pub.kvB = kvOf(a.run), kvOf(a.cmp.runB)
	a.pub.liveProbed = a.live.probed
	a.pub.projector = a.projector
	a.pub.live, a.pub.liveFrames, a.pub.liveRunning = a.live.available, a.live.frames, a.live.runID != "" || a.live.edgeRunning
	a.pub.liveEdge, a.pub.liveJSON = a.live.edge != nil, a.live.edgeJSON
	a.pub.lang, a.pub.embed, a.pub.query = a.lang, a.embed, a.query()
	if l := a.lec; l != nil {
		a.pub.lecID, a.pub.lecDone, a.pub.lecGen, a.pub.lecMs = l.ch.ID, l.done, l.gen, l.tookMs
	}
}

// setView stores the view into the state (so the URL has it) and repaints.
func (a *App) setView() {
	if a.view.Span <= 0 || math.IsNaN(a.view.Span) {
		a.view.Span = 1
	}
	a.view.Span = math.Max(1e-4, math.Min(a.view.Span, 1e6))
	if a.view.T0 < 0 || math.IsNaN(a.view.T0) {
		a.view.T0 = 0
	}
	v := &a.state.View
	v.T0, v.Span, v.Cursor = round6(a.view.T0), round6(a.view.Span), round6(a.view.Cursor)
	if a.view.Cursor < 0 {
		v.Cursor = -1
	}
	v.Sel = a.globalStep(a.view.SelRow, a.view.Sel)
	a.dirty = true
	a.urlDirty = true
	a.pn.controls.renderPlayback(a.pg, a.ui())
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// tickPlayback advances the cursor while playing.
func (a *App) tickPlayback() {
	now := time.Now()
	dt := now.Sub(a.lastTick).Seconds()
	a.lastTick = now
	if !a.playing || a.run == nil {
		return
	}
	if dt > 0.25 {
		dt = 0.25
	}
	if a.reduced {
		// Reduced motion: jump a step at a time, a few times a second, no smooth scrolling.
		if dt > 0 && int(now.UnixMilli()/400) == int(now.Add(-time.Duration(dt*1e9)).UnixMilli()/400) {
			return
		}
		a.stepOnce()
	} else {
		a.view.Cursor += dt * a.speed
	}
	if a.view.Cursor >= a.run.End {
		a.view.Cursor = a.run.End
		a.playing = false
	}
	if a.view.Cursor > a.view.T0+0.9*a.view.Span {
		if a.reduced {
			a.view.T0 = a.view.Cursor
		} else {
			a.view.T0 = a.view.Cursor - 0.9*a.view.Span
		}
	}
	a.setView()
}

// stepOnce moves the cursor to the end of the next step on any row.
func (a *App) stepOnce() {
	if a.run == nil {
		return
	}
	c := a.view.Cursor
	if c < 0 {
		c = a.view.T0
	}
	next := math.Inf(1)
	for _, row := range a.run.Rows {
		its := row.Iters
		lo, hi := 0, len(its)
		for lo < hi {
			m := (lo + hi) / 2
			if its[m].End() > c+1e-12 {
				hi = m
			} else {
				lo = m + 1
			}
		}
		if lo < len(its) {
			next = math.Min(next, its[lo].End())
		}
	}
	if math.IsInf(next, 1) {
		return
	}
	a.view.Cursor = next
	if next > a.view.T0+a.view.Span || next < a.view.T0 {
		a.view.T0 = math.Max(0, next-0.5*a.view.Span)
	}
	a.setView()
}

func (a *App) togglePlay() {
	if a.run == nil {
		return
	}
	a.playing = !a.playing
	if a.playing {
		if a.view.Cursor < 0 || a.view.Cursor >= a.run.End {
			a.view.Cursor = a.view.T0
		}
		a.lastTick = time.Now()
	}
	a.setView()
}

// zoom scales the view span by f around time t.
func (a *App) zoom(f, t float64) {
	v := &a.view
	ns := math.Max(1e-4, math.Min(v.Span*f, math.Max(1, 1.2*a.spanAll())))
	v.T0 = math.Max(0, t-(t-v.T0)*ns/v.Span)
	v.Span = ns
	a.setView()
}

func (a *App) spanAll() float64 {
	if a.run == nil {
		return 1
	}
	return a.run.Span()
}

func (a *App) pan(frac float64) {
	a.view.T0 = math.Max(0, a.view.T0+frac*a.view.Span)
	a.setView()
}

func (a *App) fit() {
	a.view.T0, a.view.Span = 0, a.spanAll()
	a.setView()
}

// mouse handles hover, click-to-select, drag-to-pan and wheel zoom on the canvas.
func (a *App) mouse() {
	if a.run == nil || a.w == 0 {
		return
	}
	g := a.geom()
	cx, cy := ebiten.CursorPosition()
	x, y := float64(cx), float64(cy)
	in := x >= 0 && y >= 0 && x < float64(a.w) && y < float64(a.h)
	if _, wy := ebiten.Wheel(); wy != 0 && in {
		f := 1.2
		if wy > 0 {
			f = 1 / 1.2
		}
		a.zoom(f, a.view.t(g, math.Max(g.left, x)))
	}
	down := ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft)
	switch {
	case down && !a.press && in:
		a.press, a.pressX, a.pressT0, a.dragged = true, x, a.view.T0, false
	case down && a.press:
		if math.Abs(x-a.pressX) > 4*a.dpr {
			a.dragged = true
		}
		if a.dragged {
			a.view.T0 = math.Max(0, a.pressT0-(x-a.pressX)/g.plotW()*a.view.Span)
			a.setView()
		}
	case !down && a.press:
		// Selection comes from the DOM click event (selectAt): a quick
		// click can fall between two ticks and never be seen here.
		a.press = false
		a.lastDragged = a.dragged
	}
	if in && !a.press {
		pn, row, k := a.hitPane(x, y)
		if row != a.view.HoverRow || k != a.view.Hover || pn != a.view.HoverPane {
			a.view.HoverPane, a.view.HoverRow, a.view.Hover = pn, row, k
			a.dirty = true
			a.renderStep()
		}
	}
}

// selectAt selects the step under a click at CSS pixel (cx, cy) of the frame.
func (a *App) selectAt(cx, cy float64) {
	if a.lastDragged {
		a.lastDragged = false
		return
	}
	if a.run == nil || a.w == 0 {
		return
	}
	pn, row, k := a.hitPane(cx*a.dpr, cy*a.dpr)
	a.view.SelPane, a.view.SelRow, a.view.Sel = pn, row, k
	a.setView()
	a.renderStep()
}

// writeURL puts the whole state into the page's address (no history entry per change).
func (a *App) writeURL() {
	a.urlDirty = false
	a.urlAt = time.Now()
	a.win.Get("history").Call("replaceState", js.Null(), "", "?"+a.query())
	a.publish()
}
