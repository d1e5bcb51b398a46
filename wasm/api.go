//go:build js && wasm

package main

import (
	"encoding/json"
	"servelab/sim/scenario"
	"servelab/wasm/play"
	"strconv"
	"strings"
	"syscall/js"
)

// installAPI sets window.servelab on the page (and on the iframe) for slides and tests.
func (a *App) installAPI() {
	api := js.Global().Get("Object").New()
	fn := func(name string, f func(args []js.Value) any) {
		api.Set(name, js.FuncOf(func(this js.Value, args []js.Value) (out any) {
			defer func() {
				if r := recover(); r != nil {
					a.fail("servelab."+name, r)
					out = nil
				}
			}()
			return f(args)
		}))
	}
	snap := func() published {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.pub
	}
	fn("getState", func([]js.Value) any { return stateJS(snap().state) })
	fn("query", func([]js.Value) any { return snap().state.Query() })
	fn("setLang", func(args []js.Value) any {
		if len(args) > 0 {
			a.emit(evLang{args[0].String()})
		}
		return nil
	})
	fn("openChapter", func(args []js.Value) any {
		if len(args) > 0 {
			a.emit(evChapter{args[0].String()})
		}
		return nil
	})
	fn("setState", func(args []js.Value) any {
		if len(args) == 0 || args[0].Type() != js.TypeObject {
			return "setState wants an object of settings"
		}
		keys := js.Global().Get("Object").Call("keys", args[0])
		kv := map[string]string{}
		for i := 0; i < keys.Length(); i++ {
			k := keys.Index(i).String()
			kv[k] = js.Global().Get("String").Invoke(args[0].Get(k)).String()
		}
		a.post(func() {
			var notes []string
			if p, ok := kv["preset"]; ok {
				a.applyPreset(p)
			}
			for k, v := range kv {
				if k == "preset" {
					continue
				}
				if n := a.s.state.Set(k, v); n != "" {
					notes = append(notes, n)
				} else {
					a.choose(k)
				}
			}
			a.s.notes = notes
			a.s.needSim = true
		})
		return nil
	})
	fn("figures", func([]js.Value) any { return jsonParse(figuresJSONOf(snap())) })
	fn("timings", func([]js.Value) any {
		p := snap()
		return map[string]any{"simMs": p.simMs, "simMsB": p.simMsB, "drawMs": p.drawMs, "gen": p.gen, "drawnGen": p.drawnGen, "gcs": gcCycles()}
	})
	fn("presets", func([]js.Value) any {
		out := make([]any, len(play.Presets))
		for i, p := range play.Presets {
			out[i] = map[string]any{"name": p.Name, "title": p.Title, "about": p.About}
		}
		return out
	})
	fn("loadMeasured", func(args []js.Value) any {
		if len(args) < 1 {
			return "loadMeasured wants (text, name)"
		}
		text := args[0].String()
		name := "measured.json"
		if len(args) > 1 {
			name = args[1].String()
		}
		a.post(func() { a.loadMeasured(name, []byte(text)) })
		return nil
	})
	// selfTest lets the browser tests check that a Go panic is caught and
	// reported while the page keeps working.
	fn("selfTest", func(args []js.Value) any {
		if len(args) > 0 && args[0].String() == "panic" {
			a.post(func() { panic("self-test panic") })
		}
		return nil
	})
	fn("status", func([]js.Value) any {
		p := snap()
		return map[string]any{"error": p.err, "notes": strings.Join(p.notes, "; "), "overlays": p.overlays,
			"reducedMotion": a.tl.reduced, "projector": p.projector,
			"live": p.live, "liveProbed": p.liveProbed, "liveFrames": p.liveFrames, "liveRunning": p.liveRunning,
			"liveEdge": p.liveEdge, "simulating": p.simPending}
	})
	// liveResult is the last measurement through the edge proxy as lab JSON ("" before one ended).
	fn("liveResult", func([]js.Value) any { return snap().liveJSON })
	// lecture is the lecture mode's status: the chapter ("" outside it),
	// whether its table is complete, how many tables completed, the last
	// one's time from the change (ms), the language and embed mode.
	fn("lecture", func([]js.Value) any {
		p := snap()
		return map[string]any{"chapter": p.lecID, "done": p.lecDone, "gen": p.lecGen, "tookMs": p.lecMs, "lang": p.lang, "embed": p.embed, "query": p.query}
	})
	// lectureJSON computes every demo for the current settings with the
	// chapters' code (play.RunLecture) and returns it as `servelab demo
	// interference --json` prints it. It takes about a second.
	fn("lectureJSON", func([]js.Value) any {
		res, err := play.RunLecture(snap().state, nil)
		if err != nil {
			return `{"error":` + strconv.Quote(err.Error()) + `}`
		}
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return `{"error":` + strconv.Quote(err.Error()) + `}`
		}
		return string(b)
	})
	api.Set("ready", true)
	api.Set("version", "1")
	a.pg.win.Set("servelab", api)
	js.Global().Set("servelab", api)
}

func stateJS(s play.State) any {
	m := map[string]any{"preset": s.Preset, "workload": s.Workload, "policy": s.Policy, "model": s.Model, "gpu": s.GPU, "profile": s.Profile,
		"lendist": s.LengthDist, "t0": s.View.T0, "span": s.View.Span, "cursor": s.View.Cursor, "sel": s.View.Sel}
	for _, c := range play.Controls() {
		m[c.URL] = c.Value(s)
	}
	for i := range scenario.Knobs { // the other choices (a router, a drafter), as the URL spells them
		if k := &scenario.Knobs[i]; k.URL != "" {
			if _, ok := m[k.URL]; !ok {
				m[k.URL] = k.URLText(&s.Experiment)
			}
		}
	}
	return m
}

func jsonParse(s string) js.Value { return js.Global().Get("JSON").Call("parse", s) }

// figuresJSONOf is the figures export: what is shown, in seconds and req/s.
// In compare mode it is {"a": run A's, "b": run B's}.
func figuresJSONOf(p published) string {
	var out any = runFiguresJSON(p.figState, p.figs, p.kvA, p.rates, p.err, p)
	if p.cmpOn {
		out = map[string]any{"a": out, "b": runFiguresJSON(p.figStateB, p.figsB, p.kvB, nil, p.errB, p)}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return `{"error":` + strconv.Quote(err.Error()) + `}`
	}
	return string(b)
}

// runFiguresJSON is one run's figures: latency percentiles, SLO
// attainment, throughput, goodput, the KV cache and the KV transfers.
func runFiguresJSON(st play.State, f play.Figures, kv kvFigures, rates []play.RatePoint, errText string, p published) map[string]any {
	pct := func(v [3]float64) map[string]float64 {
		return map[string]float64{"p50": v[0], "p90": v[1], "p99": v[2]}
	}
	out := map[string]any{
		"query": st.Query(), "ttft": pct(f.TTFT), "tpot": pct(f.TPOT), "itl": pct(f.ITL), "itl_max": f.ITLMax,
		"slo":        map[string]float64{"ttft": (st.SLO.TTFT * 1e3) / 1e3, "tpot": (st.SLO.TPOT * 1e3) / 1e3},
		"attainment": f.Attainment, "completed": f.Completed, "submitted": f.Submitted,
		"throughput_tok_s": f.Throughput, "truncated": f.Truncated, "latency_vs_rate": rates,
		"sim_ms": p.simMs, "draw_ms": p.drawMs, "kv": kv.cache(), "transfers": kv.transfers(),
	}
	if f.Goodput >= 0 {
		out["goodput"] = f.Goodput
	}
	if p.simPending {
		out["simulating"] = true // these figures (and query) are the last run's; the settings' run is under way
	}
	if errText != "" {
		out["error"] = errText
	}
	return out
}
