//go:build js && wasm

package main

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"servelab/sim"
	"servelab/sim/scenario"
	"servelab/wasm/play"
)

// liveState is the live mode: present only when the page is served by
// `servelab serve`, whose companion answers GET /api/health. A measurement
// runs there against a lab server and its token frames stream back (SSE);
// they land on the timeline as measured run A while they arrive.
type liveState struct {
	probed    bool // the health probe has answered (or failed)
	available bool
	labs      []liveLab
	runID     string
	result    string // URL of the finished measured JSON
	es        js.Value
	inject    float64 // the measurement's injection time on its own clock
	overlay   *play.Overlay
	frames    int
	// The edge proxy (the Cloudflare Worker): no companion, so the page runs
	// the closed loop itself (edge.go).
	edge        *play.EdgeLimits
	edgeRunning bool // owned by the Update goroutine, like the rest of liveState
	lastProg    float64
	// The loop runs in the fetch callbacks and a timer, not on the Update
	// goroutine, so that a re-submit or the injection never waits for the
	// next animation frame. edgeMu guards these; no JS call is made under it.
	edgeMu   sync.Mutex
	loop     *play.Loop
	loopGen  int          // bumps per edge run: callbacks of an old run are ignored
	aborts   map[int]bool // requests in flight, to abort when the loop stops
	worker   js.Value     // the Web Worker that fetches and reads the streams (site/stream-worker.js)
	aborting bool
	timer    js.Func // the setInterval callback of the run
	timerID  js.Value
	edgeJSON string
	edgeName string
	painted  time.Time // last repaint for arriving frames
	latest   float64   // latest frame time on the measurement's clock
}

type liveLab struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
}

// fetchJSON runs fetch(url, init) and hands the status and body text to
// done on the Update goroutine. It never blocks the caller.
func (a *App) fetchJSON(url string, init map[string]any, done func(status int, body string, err error)) {
	fetch := a.pg.win.Get("fetch")
	if fetch.IsUndefined() {
		done(0, "", fmt.Errorf("this browser has no fetch"))
		return
	}
	var onRes, onText, onErr js.Func
	status := 0
	var once sync.Once
	release := func() { once.Do(func() { onRes.Release(); onText.Release(); onErr.Release() }) }
	// A panicking callback still answers, so the caller never waits forever.
	failed := func() { a.post(func() { done(0, "", fmt.Errorf("fetch %s: a callback failed", url)) }); release() }
	onText = a.jsFunc("fetch "+url, failed, func(args []js.Value) {
		body := args[0].String()
		st := status
		a.post(func() { done(st, body, nil) })
		release()
	})
	onRes = a.jsFunc("fetch "+url, failed, func(args []js.Value) {
		status = args[0].Get("status").Int()
		args[0].Call("text").Call("then", onText).Call("catch", onErr)
	})
	onErr = a.jsFunc("fetch "+url, failed, func(args []js.Value) {
		msg := "network error"
		if len(args) > 0 {
			msg = js.Global().Get("String").Invoke(args[0]).String()
		}
		a.post(func() { done(0, "", fmt.Errorf("%s", msg)) })
		release()
	})
	if init == nil {
		init = map[string]any{}
	}
	fetch.Invoke(url, init).Call("then", onRes).Call("catch", onErr)
}

// probeLive asks for the companion; a static host answers 404 (or not
// JSON) and the live controls stay hidden.
func (a *App) probeLive() {
	a.fetchJSON("api/health", map[string]any{"cache": "no-store"}, func(status int, body string, err error) {
		if err != nil || status != 200 {
			a.probeEdge() // not the companion: perhaps the edge proxy
			return
		}
		a.live.probed = true
		defer a.publish()
		var h struct {
			OK      bool      `json:"ok"`
			Labs    []liveLab `json:"labs"`
			Default string    `json:"default_lab"`
			Running string    `json:"running"`
		}
		if json.Unmarshal([]byte(body), &h) != nil || !h.OK {
			a.probeEdge()
			return
		}
		a.live.available = true
		a.live.labs = h.Labs
		if el := a.el("live"); !el.IsNull() {
			el.Set("hidden", false)
		}
		if el := a.el("live-lab"); !el.IsNull() {
			var sb strings.Builder
			for _, l := range h.Labs {
				sel := ""
				if l.Name == h.Default {
					sel = " selected"
				}
				fmt.Fprintf(&sb, `<option value="%s"%s>%s (%s)</option>`, html.EscapeString(l.Name), sel, html.EscapeString(l.Name), html.EscapeString(l.Kind))
			}
			el.Set("innerHTML", sb.String())
		}
		a.liveStatus(a.tr("live.ready"))
		a.publish()
	})
	a.listen(a.el("live-start"), "click", func(js.Value) {
		lab := a.el("live-lab").Get("value").String()
		a.post(func() { a.startLive(lab) })
	})
	a.listen(a.el("live-stop"), "click", func(js.Value) { a.post(a.stopLive) })
}

func (a *App) liveStatus(s string) {
	if el := a.el("live-status"); !el.IsNull() {
		el.Set("textContent", s)
	}
}

// startLive starts a measurement with the lab knobs on the page and
// simulates the same workload beside it.
func (a *App) startLive(lab string) {
	if lab == edgeLab {
		a.startEdge()
		return
	}
	if a.live.runID != "" {
		a.liveStatus(a.tr("live.busy"))
		return
	}
	s := &a.s.state
	if s.Workload != scenario.Lab {
		s.Workload = scenario.Lab
		if !play.OneGPUColocated(s.Policy) {
			s.Policy = scenario.Chunked
		}
		a.s.needSim = true
	}
	body := map[string]any{
		"lab": lab, "label": "live-" + s.Policy,
		"short_concurrency": s.Lab.ShortConcurrency, "short_input_len": s.Lab.ShortInputLen, "short_output_len": s.Lab.ShortOutputLen,
		"long_input_len": s.Lab.LongInputLen, "long_output_len": s.Lab.LongOutputLen, "long_count": s.Lab.LongCount,
		"duration": s.Lab.Duration, "inject_after": s.Lab.InjectAfter,
	}
	data, _ := json.Marshal(body)
	a.liveStatus(a.tr("live.starting"))
	a.fetchJSON("api/measure", map[string]any{"method": "POST", "headers": map[string]any{"Content-Type": "application/json"}, "body": string(data)},
		func(status int, text string, err error) {
			if err != nil {
				a.liveStatus(a.trf("live.nostart", err.Error()))
				return
			}
			var r struct {
				ID     string `json:"id"`
				Events string `json:"events"`
				Result string `json:"result"`
				Error  struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(text), &r) != nil || status != 202 || r.ID == "" {
				msg := r.Error.Message
				if msg == "" {
					msg = fmt.Sprintf("status %d", status)
				}
				a.liveStatus(a.trf("live.nostart", msg))
				return
			}
			a.live.runID, a.live.result = r.ID, r.Result
			a.live.inject = s.Lab.InjectAfter
			a.live.frames, a.live.latest = 0, 0
			a.live.overlay = &play.Overlay{Name: "live " + lab, Kind: "lab", Origin: math.Max(0, s.Lab.InjectAfter)}
			a.s.overlays = [2]*play.Overlay{a.live.overlay, nil}
			a.tl.playing = false
			a.tl.view.Cursor = 0
			a.tl.view.T0 = 0
			a.tl.view.Span = math.Max(2, math.Min(10, s.Lab.Duration/4))
			a.setView()
			a.subscribe(strings.TrimPrefix(r.Events, "/"))
			a.liveStatus(a.trf("live.measuring", lab, r.ID))
		})
}

// subscribe follows the run's events: token frames land on the timeline as
// they arrive and the playback cursor follows the measurement's clock.
func (a *App) subscribe(url string) {
	es := a.pg.win.Get("EventSource").New(url)
	a.live.es = es
	on := func(event string, f func(data string)) {
		es.Call("addEventListener", event, a.jsFunc("live "+event+" event", nil, func(args []js.Value) {
			data := ""
			if len(args) > 0 && args[0].Get("data").Type() == js.TypeString {
				data = args[0].Get("data").String()
			}
			a.post(func() { f(data) })
		}))
	}
	on("phase", func(data string) {
		var p struct {
			Phase string  `json:"phase"`
			T     float64 `json:"t"`
		}
		if json.Unmarshal([]byte(data), &p) == nil {
			if p.Phase == "inject" {
				a.live.inject = p.T
			}
			a.liveStatus(a.trf("live.phase", p.Phase, p.T))
		}
	})
	on("tokens", func(data string) {
		var fs []struct {
			T    float64 `json:"t"`
			Long bool    `json:"long"`
			Gap  float64 `json:"gap"`
		}
		if json.Unmarshal([]byte(data), &fs) != nil || a.live.overlay == nil {
			return
		}
		frames := make([]liveTok, len(fs))
		for i, f := range fs {
			frames[i] = liveTok{T: f.T, Long: f.Long, Gap: f.Gap}
		}
		a.liveTokens(frames)
	})
	on("progress", func(data string) {
		var p struct {
			T      float64 `json:"t"`
			Frames int     `json:"frames"`
			Worst  float64 `json:"worst"`
		}
		if json.Unmarshal([]byte(data), &p) == nil {
			a.liveStatus(a.trf("live.progress", p.T, p.Frames, ms(p.Worst)))
		}
	})
	on("error", func(data string) {
		if data != "" {
			var e struct {
				Message string `json:"message"`
			}
			json.Unmarshal([]byte(data), &e)
			a.liveStatus(a.trf("live.err", e.Message))
		}
	})
	on("end", func(string) {
		es.Call("close")
		a.finishLive()
	})
}

// finishLive loads the finished measured JSON (config, summary, gaps) as run A.
func (a *App) finishLive() {
	id, url := a.live.runID, a.live.result
	a.live.runID = ""
	if url == "" {
		return
	}
	a.fetchResult(id, strings.TrimPrefix(url, "/"), 20)
}

// fetchResult fetches a run's measured JSON, retrying while the companion
// still answers 202 (it saves the run after the stream ends).
func (a *App) fetchResult(id, url string, tries int) {
	a.fetchJSON(url, map[string]any{"cache": "no-store"}, func(status int, body string, err error) {
		switch {
		case err == nil && status == 202 && tries > 1:
			var retry js.Func
			retry = a.jsFunc("live result retry", nil, func([]js.Value) {
				retry.Release()
				a.post(func() { a.fetchResult(id, url, tries-1) })
			})
			a.pg.win.Call("setTimeout", retry, 300)
		case err != nil || status != 200:
			a.liveStatus(a.trf("live.noresult", id, status))
		default:
			a.s.overlays = [2]*play.Overlay{}
			a.loadMeasured("live-"+id+".json", []byte(body))
			a.liveStatus(a.trf("live.done", id))
		}
	})
}

// liveTok is one token frame on the measurement's clock (seconds since
// its load started).
type liveTok struct {
	T    float64
	Long bool
	Gap  float64
}

// liveTokens lays arriving token frames on the timeline as run A and keeps
// the playback cursor on the measurement's clock.
func (a *App) liveTokens(fs []liveTok) {
	if a.live.overlay == nil || len(fs) == 0 {
		return
	}
	latest := 0.0
	for _, f := range fs {
		latest = math.Max(latest, f.T)
		if f.Long || f.Gap <= 0 {
			continue // the lab's gaps are the short streams' gaps after their first frame
		}
		a.live.overlay.Gaps = append(a.live.overlay.Gaps, sim.Gap{TRelInject: f.T - a.live.inject, Gap: f.Gap})
		a.live.frames++
	}
	if latest > a.live.latest {
		a.live.latest = latest
	}
	// Repainting runs on the page's one thread, the thread that stamps the
	// frames: a few repaints a second keep it free to read them on time.
	now := time.Now()
	if now.Sub(a.live.painted) < 250*time.Millisecond {
		return
	}
	a.live.painted = now
	// The measurement's clock and the simulation's share the injection time.
	c := a.live.latest - a.live.inject + a.live.overlay.Origin
	if c > a.tl.view.Cursor {
		a.tl.view.Cursor = c
		if c > a.tl.view.T0+0.9*a.tl.view.Span {
			a.tl.view.T0 = c - 0.5*a.tl.view.Span
		}
		a.setView()
	}
	a.tl.dirty = true
	a.publish()
}

func (a *App) stopLive() {
	if a.live.edgeRunning {
		a.stopEdge("stopped")
		return
	}
	if a.live.runID == "" {
		return
	}
	a.fetchJSON("api/runs/"+a.live.runID, map[string]any{"method": "DELETE"}, func(status int, body string, err error) {
		if err != nil {
			a.liveStatus(a.trf("live.nostop", err.Error()))
		}
	})
}
