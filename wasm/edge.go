//go:build js && wasm

package main

// Live mode through the edge proxy (cmd/worker): the worker cannot run a
// measurement server-side, so the page runs the lab's closed loop itself
// (play.Loop) against the proxy's /api/v1/completions. The requests are
// fetched and read in a Web Worker (site/stream-worker.js), which stamps
// each chunk as it arrives: on the page's own thread a chunk would wait for
// the drawing before it could be stamped. The loop runs in the worker's
// message callbacks; net/http stays out of the wasm.

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"strconv"
	"syscall/js"

	"servelab/sim/lab"
	"servelab/sim/scenario"
	"servelab/wasm/play"
)

// edgeLab is the live panel's choice for the edge proxy's lab server.
const edgeLab = "@edge"

// probeEdge asks for the proxy's /api/info: when it answers, live mode
// measures through it.
func (a *App) probeEdge() {
	a.fetchJSON("api/info", map[string]any{"cache": "no-store"}, func(status int, body string, err error) {
		a.live.probed = true
		defer a.publish()
		var in play.EdgeLimits
		if err != nil || status != 200 || json.Unmarshal([]byte(body), &in) != nil || in.Proxy != "servelab" {
			return
		}
		a.live.available, a.live.edge = true, &in
		if el := a.el("live"); !el.IsNull() {
			el.Set("hidden", false)
		}
		if el := a.el("live-lab"); !el.IsNull() {
			el.Set("innerHTML", `<option value="`+edgeLab+`" selected>`+html.EscapeString(a.tr("edge.lab"))+`</option>`)
		}
		a.liveStatus(a.trf("edge.ready", in.MaxTokens, in.MaxBodyBytes, in.RatePerMin, in.RateBurst))
	})
}

// perfNow is the page's monotonic clock in seconds.
func (a *App) perfNow() float64 { return a.pg.win.Get("performance").Call("now").Float() / 1000 }

// startEdge fits the lab knobs to the proxy's limits, asks the lab server
// for its model and starts the loop.
func (a *App) startEdge() {
	if a.live.edgeRunning || a.live.runID != "" {
		a.liveStatus(a.tr("live.busy"))
		return
	}
	lim := a.live.edge
	if lim == nil {
		a.liveStatus(a.tr("edge.noinfo"))
		return
	}
	s := &a.s.state
	s.Workload = scenario.Lab
	if !play.OneGPUColocated(s.Policy) {
		s.Policy = scenario.Chunked
	}
	play.ApplyEdgeDefaults(s, func(key string) bool { return a.s.chosen[key] })
	maxConns := 0
	if a.pg.win.Get("location").Get("protocol").String() == "http:" {
		maxConns = 6 // HTTP/1.1: Chromium and Firefox hold 6 connections per host
	}
	w, notes := play.EdgeWorkload(*s, *lim, maxConns)
	// The simulation beside the measurement runs the same workload.
	s.Lab = w
	s.Preset = ""
	a.s.notes = notes
	a.s.needSim = true
	a.sched.urlDirty = true
	a.liveStatus(a.tr("edge.asking"))
	a.fetchJSON("api/v1/models", map[string]any{"cache": "no-store"}, func(status int, body string, err error) {
		if err != nil || status != 200 {
			a.liveStatus(a.trf("live.nostart", edgeError(status, body, err)))
			return
		}
		var ms struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &ms) != nil || len(ms.Data) == 0 || ms.Data[0].ID == "" {
			a.liveStatus(a.tr("live.nomodel"))
			return
		}
		loc := a.pg.win.Get("location")
		cfg := lab.DefaultConfig()
		cfg.LabWorkload = w
		cfg.LongCount = 1
		cfg.Model = ms.Data[0].ID
		cfg.Label = "edge-" + a.s.state.Policy
		cfg.BaseURL = loc.Get("origin").String() + "/api"
		cfg.Host = loc.Get("hostname").String()
		cfg.Port, _ = strconv.Atoi(loc.Get("port").String())
		cfg.Warmup = 1 // run.py's 2, less one: every request counts against the rate limit
		cfg.Seed = int(a.s.state.Seed)
		loop, err := play.NewLoop(cfg)
		if err != nil {
			a.liveStatus(a.trf("live.nostart", err.Error()))
			return
		}
		a.live.edgeRunning = true
		a.live.edgeMu.Lock()
		a.live.loopGen++
		gen := a.live.loopGen
		a.live.loop, a.live.aborts, a.live.aborting = loop, map[int]bool{}, false
		a.live.edgeMu.Unlock()
		a.live.inject, a.live.frames, a.live.lastProg, a.live.edgeJSON, a.live.latest = w.InjectAfter, 0, 0, "", 0
		a.live.overlay = &play.Overlay{Name: "live (edge proxy)", Kind: "lab", Origin: math.Max(0, w.InjectAfter)}
		a.s.overlays = [2]*play.Overlay{a.live.overlay, nil}
		a.tl.playing = false
		a.tl.view.Cursor, a.tl.view.T0 = 0, 0
		a.tl.view.Span = math.Max(2, math.Min(10, w.Duration/4))
		a.setView()
		a.liveStatus(a.trf("edge.warm", w.ShortConcurrency, w.Duration, cfg.Model))
		a.live.edgeMu.Lock()
		first := loop.Start(a.perfNow())
		a.live.edgeMu.Unlock()
		a.edgeSend(gen, first)
		// The injection and the end are noticed by a timer, not by the
		// animation frames (which a busy or hidden page slows down).
		a.live.timer = a.jsFunc("edge timer", nil, func([]js.Value) { a.edgeTick(gen) })
		a.live.timerID = a.pg.win.Call("setInterval", a.live.timer, 20)
		a.publish()
	})
}

// edgeError names why a proxy request failed, with the proxy's message and
// what to do about a rate limit.
func edgeError(status int, body string, err error) string {
	if err != nil {
		return err.Error()
	}
	var e struct {
		Error struct {
			Message    string  `json:"message"`
			RetryAfter float64 `json:"retry_after"`
		} `json:"error"`
	}
	json.Unmarshal([]byte(body), &e)
	msg := fmt.Sprintf("HTTP %d", status)
	if e.Error.Message != "" {
		msg += ": " + e.Error.Message
	}
	if status == 429 {
		msg += fmt.Sprintf(". The edge proxy's rate limit was reached (retry in %gs): use fewer streams, a shorter duration or longer outputs, "+
			"or ask whoever runs the worker to raise RATE_LIMIT_PER_MINUTE and RATE_LIMIT_BURST", e.Error.RetryAfter)
	}
	return msg
}

// edgeSend starts the requests the loop asks for.
func (a *App) edgeSend(gen int, ls []play.Launch) {
	for _, x := range ls {
		a.edgeFetch(gen, x)
	}
}

// jsFunc wraps f for JS: a panic becomes a message on the page and then
// onPanic runs (so that a request never hangs on a failed callback).
func (a *App) jsFunc(where string, onPanic func(), f func(args []js.Value)) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) any {
		defer func() {
			if r := recover(); r != nil {
				a.fail(where, r)
				if onPanic != nil {
					a.guard(where, onPanic)
				}
			}
		}()
		f(args)
		return nil
	})
}

// streamer returns the Web Worker that reads the streams, started on first
// use; ok is false (with the reason on the page) when it cannot start.
func (a *App) streamer() (w js.Value, ok bool) {
	if a.live.worker.Truthy() {
		return a.live.worker, true
	}
	defer func() {
		if r := recover(); r != nil { // new Worker throws, e.g. where workers are blocked
			a.post(func() { a.liveStatus(a.trf("edge.noreader", r)) })
			ok = false
		}
	}()
	w = a.pg.win.Get("Worker").New("stream-worker.js")
	var id, gen int
	var status int
	onMsg := a.jsFunc("edge stream", func() {
		// A frame the page could not file: end that request rather than hang.
		a.edgeAbort(id)
		a.edgeEnd(gen, id, a.perfNow(), status, "the page failed reading this stream")
	}, func(args []js.Value) {
		m := args[0].Get("data")
		id, gen = m.Get("id").Int(), m.Get("gen").Int()
		origin := a.pg.win.Get("performance").Get("timeOrigin").Float()
		if c := m.Get("chunk"); c.Truthy() {
			status = 200 // chunks come only from answers that stream
			// The chunk is a Uint8Array of the parent page's realm, which
			// CopyBytesToGo does not take: view its buffer from this one.
			v := js.Global().Get("Uint8Array").New(c.Get("buffer"), c.Get("byteOffset"), c.Get("byteLength"))
			b := make([]byte, v.Get("length").Int())
			js.CopyBytesToGo(b, v)
			a.edgeChunk(gen, id, b, (m.Get("t").Float()-origin)/1000)
			return
		}
		status = m.Get("status").Int()
		errText := ""
		switch {
		case m.Get("aborted").Truthy():
			errText = play.Interrupted
		case m.Get("error").Truthy():
			errText = m.Get("error").String()
		case status != 200:
			errText = edgeError(status, m.Get("text").String(), nil)
		}
		a.edgeEnd(gen, id, (m.Get("end").Float()-origin)/1000, status, errText)
	})
	w.Set("onmessage", onMsg)
	a.live.worker = w
	return w, true
}

// edgeFetch has the stream reader send one request.
func (a *App) edgeFetch(gen int, x play.Launch) {
	w, ok := a.streamer()
	if !ok {
		const why = "the stream reader (stream-worker.js) did not start"
		a.edgeLocked(func() {
			if l := a.live.loop; l != nil && gen == a.live.loopGen {
				l.Stop(why) // or each failed request would send the next
			}
		})
		a.edgeEnd(gen, x.ID, a.perfNow(), 0, why)
		return
	}
	a.live.edgeMu.Lock()
	if a.live.aborts != nil && gen == a.live.loopGen {
		a.live.aborts[x.ID] = true
	}
	a.live.edgeMu.Unlock()
	url := a.pg.win.Get("URL").New("api/v1/completions", a.pg.win.Get("document").Get("baseURI")).Call("toString")
	w.Call("postMessage", map[string]any{"id": x.ID, "gen": gen, "url": url, "body": string(x.Body)})
}

// edgeAbort has the stream reader abort a request.
func (a *App) edgeAbort(id int) {
	if a.live.worker.Truthy() {
		a.live.worker.Call("postMessage", map[string]any{"abort": id})
	}
}

// edgeChunk files a chunk (in the read callback) and hands the token frames
// to the view.
func (a *App) edgeChunk(gen, id int, b []byte, t float64) {
	var fs []play.TokenFrame
	a.edgeLocked(func() {
		if gen == a.live.loopGen && a.live.loop != nil {
			fs = a.live.loop.Chunk(id, b, t)
		}
	})
	a.edgeFrames(fs)
}

// edgeLocked runs f holding edgeMu, which a panic in f releases too: the
// panic is reported and the request ended, and nothing may then wait on a
// lock left held, or the whole app would stop.
func (a *App) edgeLocked(f func()) {
	a.live.edgeMu.Lock()
	defer a.live.edgeMu.Unlock()
	f()
}

// edgeFrames queues token frames for the view (liveTokens, on Update).
func (a *App) edgeFrames(fs []play.TokenFrame) {
	if len(fs) == 0 {
		return
	}
	ts := make([]liveTok, len(fs))
	for i, f := range fs {
		ts[i] = liveTok{T: f.T, Long: f.Long, Gap: f.Gap}
	}
	a.post(func() { a.liveTokens(ts) })
}

// edgeEnd files a request's end (in its last callback) and sends the next
// one at once: the closed loop's re-submit.
func (a *App) edgeEnd(gen, id int, t float64, status int, errText string) {
	var fs []play.TokenFrame
	var next []play.Launch
	a.edgeLocked(func() {
		if l := a.live.loop; l != nil && gen == a.live.loopGen {
			delete(a.live.aborts, id)
			if status == 429 && l.Stopped() == "" {
				l.Stop(errText)
			}
			fs, next = l.End(id, t, status, errText)
		}
	})
	a.edgeFrames(fs)
	a.edgeSend(gen, next)
	a.edgeTick(gen)
}

// stopEdge stops the loop; the timer aborts what is in flight, and the run
// ends (and is summarised) when the last request has reported.
func (a *App) stopEdge(why string) {
	a.live.edgeMu.Lock()
	if a.live.loop != nil {
		a.live.loop.Stop(why)
	}
	gen := a.live.loopGen
	a.live.edgeMu.Unlock()
	a.edgeTick(gen)
}

// edgeTick runs on the timer and after every request's end: it sends the
// long prompt on time, aborts the requests of a stopped loop and ends the run.
func (a *App) edgeTick(gen int) {
	now := a.perfNow()
	var launches []play.Launch
	var abort []int
	var done *play.Loop
	inject, injected := 0.0, false
	a.live.edgeMu.Lock()
	l := a.live.loop
	if l == nil || gen != a.live.loopGen {
		a.live.edgeMu.Unlock()
		return
	}
	launches = l.Tick(now)
	if len(launches) > 0 {
		inject, injected = l.Inject()
	}
	if l.Stopped() != "" && !a.live.aborting {
		a.live.aborting = true
		for id := range a.live.aborts {
			abort = append(abort, id)
		}
	}
	if l.Done() {
		done, a.live.loop, a.live.aborts = l, nil, nil
	}
	a.live.edgeMu.Unlock()
	for _, id := range abort {
		a.edgeAbort(id)
	}
	if injected {
		a.post(func() {
			a.live.inject = inject
			a.liveStatus(a.trf("edge.inject", inject))
		})
	}
	a.edgeSend(gen, launches)
	if done != nil {
		a.post(func() { a.finishEdge(done) })
	}
}

// tickEdge runs every frame on the Update goroutine: a progress line.
func (a *App) tickEdge() {
	if !a.live.edgeRunning {
		return
	}
	now := a.perfNow()
	if now-a.live.lastProg < 0.5 {
		return
	}
	a.live.lastProg = now
	a.live.edgeMu.Lock()
	l := a.live.loop
	var loading bool
	var t0 float64
	var frames, inflight int
	if l != nil {
		loading, t0 = l.Loading()
		frames, inflight = l.Frames(), len(l.InFlight())
	}
	a.live.edgeMu.Unlock()
	if loading {
		a.liveStatus(a.trf("edge.progress", now-t0, frames, inflight))
		a.publish()
	}
}

// finishEdge summarises the run as lab JSON (run.py's analysis, via
// lab.Summarise), overlays it as run A and offers it for download.
func (a *App) finishEdge(l *play.Loop) {
	a.live.edgeRunning = false
	if !a.live.timerID.IsUndefined() {
		a.pg.win.Call("clearInterval", a.live.timerID)
		a.live.timer.Release()
		a.live.timerID = js.Undefined()
	}
	m := l.Result()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		a.liveStatus(a.trf("edge.nowrite", err.Error()))
		return
	}
	a.live.edgeJSON = string(data)
	name := m.Config.Label + ".json"
	if m.Summary.Error != "" {
		a.liveStatus(a.trf("edge.notokens", l.Stopped()))
		a.publish()
		return
	}
	a.s.overlays = [2]*play.Overlay{}
	a.loadMeasured(name, data)
	msg := a.trf("edge.done", ms(m.Summary.WorstGap), m.Summary.WorstGapOffset, m.Summary.TokensObserved, ms(m.Summary.LongTTFT))
	if why := l.Stopped(); why != "" {
		msg = a.trf("edge.early", why, msg)
	}
	a.liveStatus(msg)
	a.offerDownload(name, string(data))
	a.publish()
}

// offerDownload puts a "Download measured JSON" button in the live panel.
func (a *App) offerDownload(name, data string) {
	panel := a.el("live")
	if panel.IsNull() {
		return
	}
	btn := a.el("live-download")
	if btn.IsNull() {
		btn = a.pg.doc.Call("createElement", "button")
		btn.Set("id", "live-download")
		btn.Set("type", "button")
		btn.Set("textContent", a.tr("edge.download"))
		panel.Call("appendChild", btn)
		a.listen(btn, "click", func(js.Value) {
			a.post(func() {
				if a.live.edgeJSON != "" {
					a.download(a.live.edgeName, "application/json", a.live.edgeJSON)
				}
			})
		})
	}
	a.live.edgeName = name
	btn.Set("hidden", false)
}
