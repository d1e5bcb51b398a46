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
)

func imageRect(x0, y0, x1, y1 int) image.Rectangle { return image.Rect(x0, y0, x1, y1) }

// App is the playground's state. A frame's work owns it (tick, then
// ebiten's Update and Draw: "the Update goroutine" below); DOM callbacks
// only queue work (under mu) and read the published snapshot.
type App struct {
	mu  sync.Mutex // guards pub
	pub published  // what the JS API reads

	pg    *page     // the controls page (the iframe's parent) and the iframe's own document
	disp  display   // language, projector, embed: how the page is shown
	pn    panels    // the page's panels: each renders from ui() and emits events to handle
	s     session   // the experiment, its run and the runs beside it
	bg    figures   // the background figures: goodput, latency vs rate
	sched scheduler // what waits to run, and the long jobs under way
	tl    timeline  // the canvas: the view window, playback, the drawing
	in    input     // the pointer's press and drag, touches
	lec   *lecture  // lecture mode's open chapter; nil outside it
	live  liveState
}

// display is how the page is shown.
type display struct {
	lang      string // a code of play.Languages
	info      string // the preset's or the last upload's description, kept on screen
	embed     bool   // ?embed=1: the canvas and the chapter's figure only
	projector bool
}

// session is what the page simulates and shows: the experiment (state),
// its run, the measured overlays, compare mode's run B, and the uploads and
// memory every run reuses (files).
type session struct {
	files    *play.Session
	state    play.State
	run      *play.SimRun
	simErr   string
	notes    []string
	gen      int              // bumps on every re-simulation
	needSim  bool             // the state changed since the run began
	overlays [2]*play.Overlay // A and B
	cmp      compareState     // compare mode: run B on the same clock
	// chosen are the settings (URL keys) the link or the student set since
	// the last preset: a measurement through the edge keeps them where it
	// puts its own defaults in place of the lab script's (play.ApplyEdgeDefaults).
	chosen map[string]bool
}

// figures are the side panel's figures, computed in the background once
// the settings rest.
type figures struct {
	figs      play.Figures
	rates     []play.RatePoint
	oldRates  []play.RatePoint // the points last shown: dimmed, they hold the chart's place while a change's are computed (the side panel does not jump)
	pending   bool
	gen       int       // counts the figures' recomputations (a re-simulation or a new SLO): the background's are for one
	changedAt time.Time // when a setting last changed (the background figures wait for a rest)
	at        time.Time
	simMs     float64
}

// scheduler is the one place work waits: changes queued from callbacks,
// the frame's bookkeeping, and the long jobs (re-simulation, calibration,
// a large upload) that advance a slice per frame.
type scheduler struct {
	qmu     sync.Mutex // guards queue
	queue   []func()
	inFrame bool // a tick, an Update, a Draw or workNow is under way
	simmed  bool // a re-simulation began since the last tick
	landed  bool // a re-simulation landed since the last tick
	soon    bool // workNow is due (workSoon)
	soonFn  js.Func
	// paintWait: a result was just written to the page (a chapter's
	// table); the re-simulation waits until the browser has painted it.
	paintWait bool
	// restDue: a re-simulation landed and only its results were rendered;
	// the other panels follow once the canvas has drawn it (restAt: when
	// it landed, so that they never wait long for a canvas that does not draw).
	restDue bool
	restAt  time.Time
	// presenting: the canvas drew a new run in the frame just ended; the
	// frame after it does no work that can wait (the other panels, the
	// chapter's next rows, the background figures), so the browser puts
	// the picture on the screen first (in software GL that frame was seen
	// to take the canvas 30-60 ms later when it ran a table's rows).
	presenting       bool
	paintFn, afterFn js.Func
	frameAt          time.Time // when this frame's work began (tick ends a frame)
	eventAt          time.Time // when the event being handled came (zero: none)
	urlDirty         bool
	urlAt            time.Time
	rs               *resim      // a re-simulation under way (nil: none)
	calib            calibration // the "Calibrate from this measurement" job
	big              bigUpload   // a large upload being read in slices
}

// timeline is the canvas: its view window, playback and what was drawn.
type timeline struct {
	view       View
	playing    bool
	speed      float64
	lastTick   time.Time
	reduced    bool
	dpr        float64   // the canvas's pixels per CSS px: dprFull, or less while a slider moves
	dprFull    float64   // the device's
	slideAt    time.Time // a slider's last move
	sliding    bool      // a slider moved and has not rested yet
	w, h       int
	batch      *batch
	labels     []label
	labelsHTML string // the labels' markup last set
	drawMs     float64
	dirty      bool // the canvas must be repainted
	drawnGen   int
	exportReq  bool
}

// input is the pointer's state between frames.
type input struct {
	press   bool
	pressX  float64
	pressT0 float64
	dragged bool
	// lastDragged tells the click that ends a drag not to select.
	lastDragged bool
	touch       touchState
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
	a.sched.qmu.Lock()
	a.sched.queue = append(a.sched.queue, f)
	a.sched.qmu.Unlock()
}

// postNow runs f at once when no frame is under way, else queues it. A
// goroutine that is running holds the one wasm thread, so between frames
// nothing else touches the state; f's result is then on the page at the
// next frame, not one frame later (under a busy renderer 10-65 ms).
func (a *App) postNow(where string, f func()) {
	if a.sched.inFrame {
		a.post(f)
		return
	}
	a.guard(where, f)
}

// mark notes a start-up stage in the page's servelabMarks (ms since navigation).
func (a *App) mark(name string) {
	if m := a.pg.win.Get("servelabMarks"); m.Type() == js.TypeObject {
		m.Set(name, a.pg.win.Get("performance").Call("now"))
	}
}

// fail reports a recovered panic on the page; the app keeps running.
func (a *App) fail(where string, r any) {
	println(fmt.Sprintf("internal error in %s: %v", where, r), string(debug.Stack()))
	a.message(play.Tf(a.disp.lang, "msg.internal", where, fmt.Sprint(r)), true)
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

	ask     uploadAsk  // the upload panel's question (a third file, another policy)
	splitSt splitState // the split panel's state
}

// all is every panel, in render order.
func (p *panels) all() []panel {
	return []panel{&p.lang, &p.glossary, &p.controls, &p.msgs, &p.figures, &p.measured, p.stepInfo, &p.chapter, p.compare, p.upload, p.split, &p.profile, p.calib, p.bench, p.big}
}

// emit queues a panel's event for the Update goroutine, with the time it
// came (a setting's rest counts from its input, not from the next frame).
func (a *App) emit(ev event) {
	at := time.Now()
	a.trace("event")
	a.post(func() {
		a.sched.eventAt = at
		a.handle(ev)
		a.sched.eventAt = time.Time{}
	})
	a.workSoon()
}

// workSoon runs workNow once the JavaScript task under way has ended, so a
// burst of events in one task (a fast drag's, a script's) is one change.
func (a *App) workSoon() {
	if a.sched.soon {
		return
	}
	a.sched.soon = true
	if !a.sched.soonFn.Truthy() {
		a.sched.soonFn = a.jsFunc("an event", nil, func([]js.Value) {
			a.sched.soon = false
			go a.workNow() // a DOM callback must not block
		})
	}
	js.Global().Call("setTimeout", a.sched.soonFn, 0)
}

// waitPaint holds re-simulation back until the browser has painted what
// was just written to the page: a chapter's table computed in a
// millisecond must not wait behind tens of ms of simulation (a task that
// runs blocks the paint, and an animation-frame callback runs before it).
// After the paint (a timer set from the frame's callback runs after it)
// the work goes on.
func (a *App) waitPaint() {
	if a.sched.paintWait {
		return
	}
	a.sched.paintWait = true
	if !a.sched.paintFn.Truthy() {
		a.sched.afterFn = a.jsFunc("after a paint", nil, func([]js.Value) {
			a.trace("painted")
			a.sched.paintWait = false
			go a.workNow() // a DOM callback must not block
		})
		a.sched.paintFn = a.jsFunc("a paint", nil, func([]js.Value) {
			js.Global().Call("setTimeout", a.sched.afterFn, 0)
		})
	}
	a.pg.win.Call("requestAnimationFrame", a.sched.paintFn)
}

// ui is the state the panels render.
func (a *App) ui() *uiState {
	u := &uiState{lang: a.disp.lang, st: &a.s.state, run: a.s.run, simErr: a.s.simErr, figs: a.bg.figs, rates: a.bg.rates, oldRates: a.bg.oldRates,
		overlays: a.s.overlays, notes: a.s.notes, info: a.disp.info, playing: a.tl.playing, cursor: a.tl.view.Cursor,
		stepRow: a.tl.view.HoverRow, step: a.tl.view.Hover, projector: a.disp.projector, embed: a.disp.embed,
		cmp: &a.s.cmp, stepPane: a.tl.view.HoverPane, speed: a.tl.speed, ask: &a.pn.ask, split: &a.pn.splitSt,
		calib: &a.sched.calib, big: &a.sched.big}
	if u.step < 0 {
		u.stepRow, u.step, u.stepPane = a.tl.view.SelRow, a.tl.view.Sel, a.tl.view.SelPane
	}
	if a.lec != nil {
		u.lec = a.lec.view()
	}
	return u
}

// render shows the state on every panel.
func (a *App) render() {
	a.sched.restDue = false
	a.renderPanels(a.pn.all())
}

// renderPanels shows the state on the panels ps.
func (a *App) renderPanels(ps []panel) {
	u := a.ui()
	for _, p := range ps {
		a.guard("a panel", func() { p.render(a.pg, u) })
	}
	a.publish()
}

// renderLanded shows a re-simulation's results at once: the figures,
// compare mode's table, the measured runs' comparison and the form. The
// other panels (the step explained, the chapter's narrative, the profile's
// trust line) are rendered by renderRest once the canvas has drawn the
// run: their DOM work, and the layout it costs, would otherwise come
// between the change and its timeline (at 4× CPU, tens of ms each).
func (a *App) renderLanded() {
	a.renderPanels([]panel{&a.pn.controls, &a.pn.msgs, &a.pn.figures, &a.pn.measured, a.pn.compare})
	a.sched.restDue, a.sched.restAt = true, time.Now()
}

// renderRest renders every panel once the landed run is on the canvas (or
// 100 ms after it landed, whatever the canvas does).
func (a *App) renderRest() {
	if a.sched.restDue && (a.tl.drawnGen == a.s.gen && !a.tl.dirty || time.Since(a.sched.restAt) > 100*time.Millisecond) {
		a.trace("rest")
		a.render()
	}
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
	a := &App{tl: timeline{speed: 0.25, view: View{Sel: -1, Hover: -1, SelRow: -1, HoverRow: -1}}, s: session{files: play.NewSession()}}
	a.pg = &page{guard: a.guard}
	a.pg.own = js.Global().Get("document")
	a.pg.win = js.Global().Get("parent")
	if a.pg.win.IsUndefined() || a.pg.win.IsNull() {
		a.pg.win = js.Global()
	}
	a.pg.doc = a.pg.win.Get("document")
	initTrace(a.pg.win)
	a.mark("main")
	a.tl.dpr = ebiten.Monitor().DeviceScaleFactor()
	if a.tl.dpr <= 0 {
		a.tl.dpr = 1
	}
	a.tl.dprFull = a.tl.dpr
	mq := a.pg.win.Call("matchMedia", "(prefers-reduced-motion: reduce)")
	a.tl.reduced = mq.Truthy() && mq.Get("matches").Bool()

	q := a.pg.win.Get("location").Get("search").String()
	a.disp.lang = play.PickLang(q, a.pg.win.Get("navigator").Get("language").String())
	st, notes := play.ParseQueryIn(q, a.disp.lang)
	st.Sess = a.s.files
	a.s.state = st
	a.s.notes = notes
	a.disp.embed = play.QueryFlag(q, "embed")
	a.readScreenQuery(q)
	if p, ok := play.PresetByName(st.Preset); ok {
		a.disp.info = presetInfo(a.disp.lang, p.Name)
	}
	if ch := play.QueryValue(q, "chapter"); ch != "" {
		a.openChapter(ch, false)
	}
	a.s.chosen = play.QueryKeys(q)
	a.s.needSim = true
	a.bindControls()
	a.installAPI()
	a.probeLive()
	a.tl.batch = newBatch()

	// The first run is made before ebiten starts, not in a frame after it:
	// ebiten's first frame (after its shaders and the WebGL context are
	// made) then draws the run rather than an empty canvas.
	a.tick()
	ebiten.SetRunnableOnUnfocused(true)
	ebiten.SetScreenClearedEveryFrame(false)
	ebiten.SetWindowTitle("servelab timeline")
	a.startFrames()
	a.mark("rungame")
	if err := ebiten.RunGame(&game{a}); err != nil {
		a.message(play.Tf(a.disp.lang, "msg.stopped", err.Error()), true)
	}
}

// busy marks the page's work under way (inFrame) until the function it
// returns, deferred, ends it; a panic is then reported, not fatal, and
// with dropSim the pending re-simulation is dropped (it would panic again).
func (a *App) busy(where string, dropSim bool) func() {
	a.sched.inFrame = true
	return func() {
		a.sched.inFrame = false
		if r := recover(); r != nil {
			a.fail(where, r)
			if dropSim {
				a.s.needSim = false
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
	if a.sched.inFrame {
		return nil // (a tick's work blocked: it ends first)
	}
	defer a.busy("Update", true)()
	a.mouse()
	if a.tl.exportReq {
		a.tl.exportReq = false
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
	if a.sched.frameAt.IsZero() {
		a.sched.frameAt = time.Now()
	}
	a.sched.qmu.Lock()
	q := a.sched.queue
	a.sched.queue = nil
	a.sched.qmu.Unlock()
	for _, f := range q {
		a.guard("a queued change", f)
	}
	if now && len(q) > 0 {
		a.sched.presenting = false // a change came: the picture drawn is old already
	}
	// A chapter's table comes first; the timeline re-simulates once it is
	// shown (in the same frame if that leaves room, else the next).
	a.tickLecture(a.sched.frameAt)
	began := false
	if a.s.needSim && !(now && a.sched.simmed) && !a.lectureBusy(a.sched.frameAt) && !a.sched.paintWait {
		a.s.needSim, a.sched.simmed, began = false, true, true
		a.beginResim()
	}
	if a.sched.rs != nil && (!now || began) && !a.lectureBusy(a.sched.frameAt) && !a.sched.paintWait {
		a.advanceResim()
	}
	a.mu.Lock()
	a.pub.simPending = a.timelineDue() // (the background figures are stale already)
	a.mu.Unlock()
}

// workNow is work as an event comes, between frames: the change is
// simulated at once, not at the next frame, which a busy renderer was seen
// to hold back 10-100 ms.
func (a *App) workNow() {
	if a.sched.inFrame {
		return // the frame under way drains the queue
	}
	defer a.busy("an event", true)()
	a.trace("workNow")
	prev := a.sched.frameAt
	a.work(true)
	if a.sched.rs == nil {
		// The next frame has its own budget: a chapter's jobs run some
		// each frame. (A long run under way keeps this one's: its slices
		// are a frame's.)
		a.sched.frameAt = prev
	}
}

// Draw repaints only when something changed; the screen is kept between frames.
func (g *game) Draw(screen *ebiten.Image) {
	a := g.a
	defer a.busy("Draw", false)()
	w, h := screen.Bounds().Dx(), screen.Bounds().Dy()
	if w != a.tl.w || h != a.tl.h {
		a.tl.w, a.tl.h = w, h
		a.tl.dirty = true
	}
	if a.tl.dirty {
		a.trace("draw")
		t0 := time.Now()
		a.tl.dirty = false
		// Painted straight onto the screen, which ebiten keeps between
		// frames: a picture painted off screen and copied would cost the
		// GPU a second full-canvas pass.
		a.tl.labels = a.paintAll(screen)
		a.tl.drawMs = float64(time.Since(t0).Microseconds()) / 1e3
		if a.tl.drawnGen == 0 && a.s.run != nil {
			// The parent page's clock starts at its navigation: this is the time to the first frame.
			a.pg.win.Set("servelabFirstFrameMs", a.pg.win.Get("performance").Call("now"))
			a.mark("drawn")
		}
		if a.tl.drawnGen != a.s.gen && a.tl.drawnGen != 0 {
			a.sched.presenting = true // (not the first: the page's panels fill at once on load)
		}
		a.tl.drawnGen = a.s.gen
		if el := a.pg.own.Call("getElementById", "labels"); !el.IsNull() {
			if h := labelsHTML(a.tl.labels, a.tl.dpr); h != a.tl.labelsHTML { // (unchanged labels: no relayout)
				el.Set("innerHTML", h)
				a.tl.labelsHTML = h
			}
			el.Get("classList").Call("toggle", "projector", a.disp.projector)
		}
		a.publish()
		a.trace("drawn")
	}
}

// While a slider moves the canvas is painted at coarseScale of the
// device's resolution (a fourth of the pixels) and sharp again coarseRest
// after its last move: without a GPU (WebGL in software, as in a browser
// on a machine without a usable one, and in the tests) the pixels painted,
// composited and read back are most of a change's time to the screen.
const (
	coarseScale = 0.5
	coarseRest  = 250 * time.Millisecond
)

// slide notes a slider's move: the run it makes is drawn coarse (coarsen)
// and the canvas stays so until the slider rests.
func (a *App) slide() {
	a.tl.slideAt, a.tl.sliding = time.Now(), true
}

// coarsen lowers the canvas's resolution for a run that lands while a
// slider moves. (Not at the move itself: the old run would be painted
// again, coarse, before the new one.)
func (a *App) coarsen() {
	if a.tl.sliding && a.tl.dpr == a.tl.dprFull && a.tl.dprFull*coarseScale >= 0.5 {
		a.tl.dpr = a.tl.dprFull * coarseScale
	}
}

// sharpen paints the canvas at the device's resolution again once the
// slider has rested and its run is drawn.
func (a *App) sharpen() {
	if !a.tl.sliding || time.Since(a.tl.slideAt) < coarseRest || a.timelineDue() || a.tl.dirty {
		return
	}
	a.tl.sliding = false
	if a.tl.dpr != a.tl.dprFull {
		a.tl.dpr = a.tl.dprFull
		a.tl.dirty = true
	}
}

// LayoutF renders at device pixels so lines stay sharp on HiDPI screens.
func (g *game) LayoutF(w, h float64) (float64, float64) {
	return math.Max(1, w*g.a.tl.dpr), math.Max(1, h*g.a.tl.dpr)
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
	for ri, row := range a.s.run.Rows {
		if k < len(row.Iters) {
			return ri, k
		}
		k -= len(row.Iters)
	}
	return 0, -1
}

// globalStep is the inverse of locateStep.
func (a *App) globalStep(row, k int) int {
	if a.s.run == nil || k < 0 {
		return -1
	}
	n := 0
	for ri := 0; ri < row && ri < len(a.s.run.Rows); ri++ {
		n += len(a.s.run.Rows[ri].Iters)
	}
	return n + k
}

func (a *App) publish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pub = published{state: a.s.state.Clone(), figs: a.bg.figs, rates: append([]play.RatePoint(nil), a.bg.rates...),
		simMs: a.bg.simMs, drawMs: a.tl.drawMs, gen: a.s.gen, figGen: a.bg.gen, drawnGen: a.tl.drawnGen, err: a.s.simErr,
		notes: append([]string(nil), a.s.notes...), simPending: a.timelineDue()}
	for _, o := range a.s.overlays {
		if o != nil {
			a.pub.overlays++
		}
	}
	a.pub.cmpOn, a.pub.figsB, a.pub.errB = a.s.cmp.pair.On, a.s.cmp.figsB, a.s.cmp.errB
	if a.s.cmp.runB != nil {
		a.pub.simMsB = a.s.cmp.runB.SimMs
	}
	if a.s.cmp.pair.On {
		a.pub.stateB = a.s.cmp.stateB.Clone()
	}
	a.pub.figState, a.pub.figStateB = a.pub.state, a.pub.stateB
	if a.pub.simPending && a.s.run != nil {
		a.pub.figState = a.s.run.State.Clone() // while a re-simulation is under way the figures are the run's shown
	}
	if a.pub.simPending && a.s.cmp.runB != nil {
		a.pub.figStateB = a.s.cmp.runB.State.Clone()
	}
	a.pub.kvA, a.pub.kvB = kvOf(a.s.run), kvOf(a.s.cmp.runB)
	a.pub.liveProbed = a.live.probed
	a.pub.projector = a.disp.projector
	a.pub.live, a.pub.liveFrames, a.pub.liveRunning = a.live.available, a.live.frames, a.live.runID != "" || a.live.edgeRunning
	a.pub.liveEdge, a.pub.liveJSON = a.live.edge != nil, a.live.edgeJSON
	a.pub.lang, a.pub.embed, a.pub.query = a.disp.lang, a.disp.embed, a.query()
	if l := a.lec; l != nil {
		a.pub.lecID, a.pub.lecDone, a.pub.lecGen, a.pub.lecMs = l.ch.ID, l.done, l.gen, l.tookMs
	}
}

// setView stores the view into the state (so the URL has it) and repaints.
func (a *App) setView() {
	if a.tl.view.Span <= 0 || math.IsNaN(a.tl.view.Span) {
		a.tl.view.Span = 1
	}
	a.tl.view.Span = math.Max(1e-4, math.Min(a.tl.view.Span, 1e6))
	if a.tl.view.T0 < 0 || math.IsNaN(a.tl.view.T0) {
		a.tl.view.T0 = 0
	}
	v := &a.s.state.View
	v.T0, v.Span, v.Cursor = round6(a.tl.view.T0), round6(a.tl.view.Span), round6(a.tl.view.Cursor)
	if a.tl.view.Cursor < 0 {
		v.Cursor = -1
	}
	v.Sel = a.globalStep(a.tl.view.SelRow, a.tl.view.Sel)
	a.tl.dirty = true
	a.sched.urlDirty = true
	a.pn.controls.renderPlayback(a.pg, a.ui())
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// tickPlayback advances the cursor while playing.
func (a *App) tickPlayback() {
	now := time.Now()
	dt := now.Sub(a.tl.lastTick).Seconds()
	a.tl.lastTick = now
	if !a.tl.playing || a.s.run == nil {
		return
	}
	if dt > 0.25 {
		dt = 0.25
	}
	if a.tl.reduced {
		// Reduced motion: jump a step at a time, a few times a second, no smooth scrolling.
		if dt > 0 && int(now.UnixMilli()/400) == int(now.Add(-time.Duration(dt*1e9)).UnixMilli()/400) {
			return
		}
		a.stepOnce()
	} else {
		a.tl.view.Cursor += dt * a.tl.speed
	}
	if a.tl.view.Cursor >= a.s.run.End {
		a.tl.view.Cursor = a.s.run.End
		a.tl.playing = false
	}
	if a.tl.view.Cursor > a.tl.view.T0+0.9*a.tl.view.Span {
		if a.tl.reduced {
			a.tl.view.T0 = a.tl.view.Cursor
		} else {
			a.tl.view.T0 = a.tl.view.Cursor - 0.9*a.tl.view.Span
		}
	}
	a.setView()
}

// stepOnce moves the cursor to the end of the next step on any row.
func (a *App) stepOnce() {
	if a.s.run == nil {
		return
	}
	c := a.tl.view.Cursor
	if c < 0 {
		c = a.tl.view.T0
	}
	next := math.Inf(1)
	for _, row := range a.s.run.Rows {
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
	a.tl.view.Cursor = next
	if next > a.tl.view.T0+a.tl.view.Span || next < a.tl.view.T0 {
		a.tl.view.T0 = math.Max(0, next-0.5*a.tl.view.Span)
	}
	a.setView()
}

func (a *App) togglePlay() {
	if a.s.run == nil {
		return
	}
	a.tl.playing = !a.tl.playing
	if a.tl.playing {
		if a.tl.view.Cursor < 0 || a.tl.view.Cursor >= a.s.run.End {
			a.tl.view.Cursor = a.tl.view.T0
		}
		a.tl.lastTick = time.Now()
	}
	a.setView()
}

// zoom scales the view span by f around time t.
func (a *App) zoom(f, t float64) {
	v := &a.tl.view
	ns := math.Max(1e-4, math.Min(v.Span*f, math.Max(1, 1.2*a.spanAll())))
	v.T0 = math.Max(0, t-(t-v.T0)*ns/v.Span)
	v.Span = ns
	a.setView()
}

func (a *App) spanAll() float64 {
	if a.s.run == nil {
		return 1
	}
	return a.s.run.Span()
}

func (a *App) pan(frac float64) {
	a.tl.view.T0 = math.Max(0, a.tl.view.T0+frac*a.tl.view.Span)
	a.setView()
}

func (a *App) fit() {
	a.tl.view.T0, a.tl.view.Span = 0, a.spanAll()
	a.setView()
}

// mouse handles hover, click-to-select, drag-to-pan and wheel zoom on the canvas.
func (a *App) mouse() {
	if a.s.run == nil || a.tl.w == 0 {
		return
	}
	g := a.geom()
	cx, cy := ebiten.CursorPosition()
	x, y := float64(cx), float64(cy)
	in := x >= 0 && y >= 0 && x < float64(a.tl.w) && y < float64(a.tl.h)
	if _, wy := ebiten.Wheel(); wy != 0 && in {
		f := 1.2
		if wy > 0 {
			f = 1 / 1.2
		}
		a.zoom(f, a.tl.view.t(g, math.Max(g.left, x)))
	}
	down := ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft)
	switch {
	case down && !a.in.press && in:
		a.in.press, a.in.pressX, a.in.pressT0, a.in.dragged = true, x, a.tl.view.T0, false
	case down && a.in.press:
		if math.Abs(x-a.in.pressX) > 4*a.tl.dpr {
			a.in.dragged = true
		}
		if a.in.dragged {
			a.tl.view.T0 = math.Max(0, a.in.pressT0-(x-a.in.pressX)/g.plotW()*a.tl.view.Span)
			a.setView()
		}
	case !down && a.in.press:
		// Selection comes from the DOM click event (selectAt): a quick
		// click can fall between two ticks and never be seen here.
		a.in.press = false
		a.in.lastDragged = a.in.dragged
	}
	if in && !a.in.press {
		pn, row, k := a.hitPane(x, y)
		if row != a.tl.view.HoverRow || k != a.tl.view.Hover || pn != a.tl.view.HoverPane {
			a.tl.view.HoverPane, a.tl.view.HoverRow, a.tl.view.Hover = pn, row, k
			a.tl.dirty = true
			a.renderStep()
		}
	}
}

// selectAt selects the step under a click at CSS pixel (cx, cy) of the frame.
func (a *App) selectAt(cx, cy float64) {
	if a.in.lastDragged {
		a.in.lastDragged = false
		return
	}
	if a.s.run == nil || a.tl.w == 0 {
		return
	}
	pn, row, k := a.hitPane(cx*a.tl.dpr, cy*a.tl.dpr)
	a.tl.view.SelPane, a.tl.view.SelRow, a.tl.view.Sel = pn, row, k
	a.setView()
	a.renderStep()
}

// writeURL puts the whole state into the page's address (no history entry per change).
func (a *App) writeURL() {
	a.sched.urlDirty = false
	a.sched.urlAt = time.Now()
	a.pg.win.Get("history").Call("replaceState", js.Null(), "", "?"+a.query())
	a.publish()
}
