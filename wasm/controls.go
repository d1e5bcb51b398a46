//go:build js && wasm

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
	"servelab/wasm/play"
)

// listen adds a DOM listener whose body runs guarded; it never blocks.
func (a *App) listen(target js.Value, event string, f func(ev js.Value)) {
	if target.IsNull() || target.IsUndefined() {
		return
	}
	target.Call("addEventListener", event, js.FuncOf(func(this js.Value, args []js.Value) any {
		a.guard(event+" handler", func() {
			var ev js.Value
			if len(args) > 0 {
				ev = args[0]
			}
			f(ev)
		})
		return nil
	}))
}

// bindControls wires every control of the page to the state.
func (a *App) bindControls() {
	fill := func(id string, names []string) {
		el := a.el(id)
		if el.IsNull() {
			return
		}
		var sb strings.Builder
		for _, n := range names {
			fmt.Fprintf(&sb, `<option value="%s">%s</option>`, html.EscapeString(n), html.EscapeString(n))
		}
		el.Set("innerHTML", sb.String())
	}
	fill("model", modelspecs.Names())
	fill("gpu", hwspecs.Names())
	if el := a.el("preset"); !el.IsNull() {
		var sb strings.Builder
		sb.WriteString(`<option value="">(custom)</option>`)
		for _, p := range play.Presets {
			fmt.Fprintf(&sb, `<option value="%s">%s</option>`, p.Name, html.EscapeString(p.Title))
		}
		el.Set("innerHTML", sb.String())
	}
	for _, n := range play.Params {
		key := n.Key
		el := a.el(key)
		if el.IsNull() {
			continue
		}
		if el.Get("type").String() == "checkbox" {
			a.listen(el, "change", func(js.Value) {
				v := 0.0
				if el.Get("checked").Bool() {
					v = 1
				}
				a.post(func() { a.change(key, play.FormatNum(v)) })
			})
			continue
		}
		a.listen(el, "input", func(js.Value) {
			v := el.Get("value").String()
			a.post(func() { a.change(key, v) })
		})
	}
	for _, key := range []string{"workload", "policy", "model", "gpu"} {
		el := a.el(key)
		k := key
		a.listen(el, "change", func(js.Value) {
			v := el.Get("value").String()
			a.post(func() { a.change(k, v) })
		})
	}
	if el := a.el("preset"); !el.IsNull() {
		a.listen(el, "change", func(js.Value) {
			v := el.Get("value").String()
			a.post(func() { a.applyPreset(v) })
		})
	}
	click := func(id string, f func()) {
		a.listen(a.el(id), "click", func(js.Value) { a.post(f) })
	}
	click("play", a.togglePlay)
	click("step", func() { a.playing = false; a.stepOnce() })
	click("zoom-in", func() { a.zoom(1/1.5, a.view.T0+a.view.Span/2) })
	click("zoom-out", func() { a.zoom(1.5, a.view.T0+a.view.Span/2) })
	click("zoom-fit", a.fit)
	click("export-png", func() { a.exportReq = true })
	click("export-csv", func() { a.download("servelab-figures.csv", "text/csv", a.figuresCSV()) })
	click("export-json", func() { a.download("servelab-figures.json", "application/json", a.figuresJSON()) })
	click("clear-measured", func() { a.overlays = [2]*play.Overlay{}; a.showMeasured(); a.dirty = true; a.publish() })
	click("projector", func() {
		a.projector = !a.projector
		a.doc.Get("body").Get("classList").Call("toggle", "projector", a.projector)
		a.el("projector").Call("setAttribute", "aria-pressed", strconv.FormatBool(a.projector))
		a.dirty = true
		a.publish()
	})
	click("copy-link", func() {
		a.writeURL()
		href := a.win.Get("location").Get("href").String()
		if cb := a.win.Get("navigator").Get("clipboard"); cb.Truthy() {
			cb.Call("writeText", href) // a Promise; nothing waits on it
		}
		a.message("link to this view copied: "+href, false)
	})
	if el := a.el("speed"); !el.IsNull() {
		a.listen(el, "change", func(js.Value) {
			v, err := strconv.ParseFloat(el.Get("value").String(), 64)
			if err == nil && v > 0 {
				a.post(func() { a.speed = v })
			}
		})
	}
	if el := a.el("scrub"); !el.IsNull() {
		a.listen(el, "input", func(js.Value) {
			v, _ := strconv.ParseFloat(el.Get("value").String(), 64)
			a.post(func() {
				if a.run == nil {
					return
				}
				a.playing = false
				a.view.Cursor = v / 1000 * a.run.End
				if a.view.Cursor < a.view.T0 || a.view.Cursor > a.view.T0+a.view.Span {
					a.view.T0 = math.Max(0, a.view.Cursor-a.view.Span/2)
				}
				a.setView()
			})
		})
	}
	a.listen(a.own, "click", func(ev js.Value) {
		x, y := ev.Get("clientX").Float(), ev.Get("clientY").Float()
		a.post(func() { a.selectAt(x, y) })
	})
	a.bindUpload()
	a.bindKeys(a.doc)
	a.bindKeys(a.own)
}

// bindKeys gives the playback and view keyboard shortcuts (outside form fields).
func (a *App) bindKeys(doc js.Value) {
	a.listen(doc, "keydown", func(ev js.Value) {
		tag := strings.ToLower(ev.Get("target").Get("tagName").String())
		if tag == "input" || tag == "select" || tag == "textarea" || tag == "button" {
			return
		}
		if ev.Get("ctrlKey").Bool() || ev.Get("metaKey").Bool() || ev.Get("altKey").Bool() {
			return
		}
		var f func()
		switch ev.Get("key").String() {
		case " ", "k":
			f = a.togglePlay
		case ".", "l":
			f = func() { a.playing = false; a.stepOnce() }
		case "+", "=":
			f = func() { a.zoom(1/1.5, a.view.T0+a.view.Span/2) }
		case "-", "_":
			f = func() { a.zoom(1.5, a.view.T0+a.view.Span/2) }
		case "ArrowLeft":
			f = func() { a.pan(-0.25) }
		case "ArrowRight":
			f = func() { a.pan(0.25) }
		case "0", "f":
			f = a.fit
		case "Home":
			f = func() { a.view.T0 = 0; a.setView() }
		case "Escape":
			f = func() { a.view.Sel, a.view.SelRow = -1, -1; a.setView(); a.showStep() }
		default:
			return
		}
		ev.Call("preventDefault")
		a.post(f)
	})
}

// change applies one setting from a control and re-simulates.
func (a *App) change(key, value string) {
	if note := a.state.Set(key, value); note != "" {
		a.notes = []string{note}
	} else {
		a.notes = nil
	}
	a.state.Preset = ""
	a.needSim = true
}

func (a *App) applyPreset(name string) {
	if name == "" {
		a.state.Preset = ""
		a.urlDirty = true
		return
	}
	p, ok := play.PresetByName(name)
	if !ok {
		a.notes = []string{fmt.Sprintf("unknown preset %q", name)}
		a.showNotes()
		return
	}
	s := play.DefaultState()
	p.Apply(&s)
	a.state = s
	a.notes = nil
	a.playing = false
	a.needSim = true
	a.message(p.Title+": "+p.About, false)
}

// syncControls writes the state back into every control (after a preset, a link or the API).
func (a *App) syncControls() {
	for _, n := range play.Params {
		el := a.el(n.Key)
		if el.IsNull() {
			continue
		}
		v := a.state.Num[n.Key]
		if el.Get("type").String() == "checkbox" {
			el.Set("checked", v != 0)
		} else if el.Get("value").String() != play.FormatNum(v) {
			el.Set("value", play.FormatNum(v))
		}
		if out := a.el(n.Key + "-out"); !out.IsNull() {
			txt := play.FormatNum(v)
			if n.Unit != "" {
				txt += " " + n.Unit
			}
			out.Set("textContent", txt)
		}
	}
	for key, v := range map[string]string{"workload": a.state.Workload, "policy": a.state.Policy, "model": a.state.Model, "gpu": a.state.GPU, "preset": a.state.Preset} {
		if el := a.el(key); !el.IsNull() {
			el.Set("value", v)
		}
	}
	// Show only the knobs that apply.
	a.doc.Get("body").Set("className", strings.TrimSpace(fmt.Sprintf("wl-%s pol-%s %s", a.state.Workload, a.state.Policy, map[bool]string{true: "projector"}[a.projector])))
	a.syncPlayback()
}

func (a *App) syncPlayback() {
	if el := a.el("play"); !el.IsNull() {
		txt := "Play"
		if a.playing {
			txt = "Pause"
		}
		el.Set("textContent", txt)
		el.Call("setAttribute", "aria-pressed", strconv.FormatBool(a.playing))
	}
	if el := a.el("scrub"); !el.IsNull() && a.run != nil && a.run.End > 0 {
		c := a.view.Cursor
		if c < 0 {
			c = a.run.End
		}
		el.Set("value", play.FormatNum(math.Round(c/a.run.End*1000)))
	}
	if el := a.el("scrub-out"); !el.IsNull() {
		txt := "end"
		if a.view.Cursor >= 0 {
			txt = fmtDur(a.view.Cursor)
		}
		el.Set("textContent", txt)
	}
}

func (a *App) showNotes() {
	el := a.el("notes")
	if el.IsNull() {
		return
	}
	el.Set("textContent", strings.Join(a.notes, "; "))
	el.Set("hidden", len(a.notes) == 0)
}

func ms(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v*1e3, 'f', 2, 64)
}

// showFigures writes the figures table, the latency-vs-rate chart and the aria-live summary.
func (a *App) showFigures() {
	f := a.figs
	set := func(id, txt string) {
		if el := a.el(id); !el.IsNull() {
			el.Set("textContent", txt)
		}
	}
	for i, name := range []string{"ttft", "tpot", "itl"} {
		vals := [][3]float64{f.TTFT, f.TPOT, f.ITL}[i]
		for j, p := range []string{"p50", "p90", "p99"} {
			txt := "–"
			if a.run != nil {
				txt = ms(vals[j])
			}
			set("fig-"+name+"-"+p, txt)
		}
	}
	if a.run == nil {
		set("fig-attain", "–")
		set("fig-goodput", "–")
		set("fig-throughput", "–")
		set("fig-summary", "No simulation: "+a.simErr)
		return
	}
	set("fig-attain", fmt.Sprintf("%.1f%%", f.Attainment*100))
	set("fig-throughput", fmt.Sprintf("%.0f tok/s", f.Throughput))
	gp := "computing…"
	switch {
	case f.GoodputNote != "":
		gp = f.GoodputNote
	case f.Goodput >= 0 && a.state.Policy == "disagg":
		gpus := a.state.I("xp") + a.state.I("yd")
		gp = fmt.Sprintf("%.2f req/s (%.2f per GPU, %d GPUs)", f.Goodput, f.Goodput/float64(gpus), gpus)
	case f.Goodput >= 0:
		gp = fmt.Sprintf("%.2f req/s", f.Goodput)
	}
	set("fig-goodput", gp)
	sum := fmt.Sprintf("%s, %s. P90 TTFT %s ms, P90 TPOT %s ms, P99 ITL %s ms, worst gap %s ms. %d of %d requests completed; %.1f%% met the SLOs.",
		a.state.Policy, a.state.Workload, ms(f.TTFT[1]), ms(f.TPOT[1]), ms(f.ITL[2]), ms(f.ITLMax), f.Completed, f.Submitted, f.Attainment*100)
	if a.run.Lab != nil && a.run.Lab.Error == "" {
		l := a.run.Lab
		sum += fmt.Sprintf(" Lab: worst gap %s ms at %+.2f s from injection, spike ratio %.1f×, long TTFT %s ms.", ms(l.WorstGap), l.WorstGapOffset, l.SpikeRatio, ms(l.LongTTFT))
	}
	if f.Goodput >= 0 {
		sum += fmt.Sprintf(" Goodput at 90%% SLO attainment: %.2f req/s.", f.Goodput)
	}
	if len(a.rates) > 0 {
		var pts []string
		for _, p := range a.rates {
			pts = append(pts, fmt.Sprintf("%g req/s: %s / %s", p.Rate, ms(p.TTFTP90), ms(p.TPOTP90)))
		}
		sum += " Latency vs rate (P90 TTFT / TPOT, ms): " + strings.Join(pts, "; ") + "."
	}
	if f.Truncated {
		sum += " The run was cut short."
	}
	set("fig-summary", sum)
	a.showRates()
	a.showMeasured()
}

// showRates draws the latency-vs-rate view as an SVG with a text table.
func (a *App) showRates() {
	el := a.el("rate-chart")
	if el.IsNull() {
		return
	}
	if a.state.Workload == "lab" {
		el.Set("innerHTML", `<p class="small">The lab's closed loop has no arrival rate; the latency-vs-rate view applies to Poisson workloads.</p>`)
		return
	}
	if len(a.rates) == 0 {
		msg := "computing latency vs rate…"
		if a.figs.GoodputNote != "" {
			msg = "latency vs rate: " + a.figs.GoodputNote
		}
		el.Set("innerHTML", `<p class="small">`+html.EscapeString(msg)+`</p>`)
		return
	}
	const W, H, L, B = 320.0, 150.0, 44.0, 22.0
	// Latency explodes past saturation: a log scale keeps the knee and the flat part readable.
	lo, hi, maxRate := math.Inf(1), 0.0, 0.0
	for _, p := range a.rates {
		for _, v := range []float64{p.TTFTP90, p.TPOTP90} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		maxRate = math.Max(maxRate, p.Rate)
	}
	if hi <= 0 {
		lo, hi = 1e-3, 1e-2
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	x := func(r float64) float64 { return L + r/maxRate*(W-L-8) }
	y := func(v float64) float64 {
		v = math.Max(v, lo)
		return H - B - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(H-B-8)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg viewBox="0 0 %g %g" role="img" aria-label="P90 TTFT and P90 TPOT against arrival rate">`, W, H)
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" class="axis"/><line x1="%g" y1="8" x2="%g" y2="%g" class="axis"/>`, L, H-B, W-8, H-B, L, L, H-B)
	fmt.Fprintf(&sb, `<text x="2" y="14" class="lbl">%s</text><text x="2" y="%g" class="lbl">%s</text><text x="2" y="%g" class="lbl">log</text>`, fmtDur(hi), H-B, fmtDur(lo), (H-B)/2)
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl">%g req/s</text>`, W-70, H-4, maxRate)
	for _, s := range []struct {
		cls string
		get func(play.RatePoint) float64
	}{{"ttft", func(p play.RatePoint) float64 { return p.TTFTP90 }}, {"tpot", func(p play.RatePoint) float64 { return p.TPOTP90 }}} {
		var pts []string
		for _, p := range a.rates {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Rate), y(s.get(p))))
		}
		fmt.Fprintf(&sb, `<polyline class="%s" points="%s"/>`, s.cls, strings.Join(pts, " "))
		for _, p := range a.rates {
			fmt.Fprintf(&sb, `<circle class="%s" cx="%.1f" cy="%.1f" r="2.5"/>`, s.cls, x(p.Rate), y(s.get(p)))
		}
	}
	cur := a.state.F("rate")
	fmt.Fprintf(&sb, `<line class="cur" x1="%.1f" y1="8" x2="%.1f" y2="%g"/>`, x(cur), x(cur), H-B)
	sb.WriteString(`</svg><p class="small"><span class="k-ttft">━ P90 TTFT</span> · <span class="k-tpot">╍ P90 TPOT</span> · dotted: the current rate</p><table class="small"><caption>P90 latency vs rate</caption><tr><th scope="col">req/s</th><th scope="col">TTFT ms</th><th scope="col">TPOT ms</th><th scope="col">SLO met</th></tr>`)
	for _, p := range a.rates {
		fmt.Fprintf(&sb, `<tr><td>%g</td><td>%s</td><td>%s</td><td>%.0f%%</td></tr>`, p.Rate, ms(p.TTFTP90), ms(p.TPOTP90), p.Attainment*100)
	}
	sb.WriteString(`</table>`)
	el.Set("innerHTML", sb.String())
}

// showStep explains the hovered (else the selected) step: "why this step took X ms".
func (a *App) showStep() {
	el := a.el("step-info")
	if el.IsNull() {
		return
	}
	row, k := a.view.HoverRow, a.view.Hover
	if k < 0 {
		row, k = a.view.SelRow, a.view.Sel
	}
	if a.run == nil || row < 0 || row >= len(a.run.Rows) || k < 0 || k >= len(a.run.Rows[row].Iters) {
		el.Set("innerHTML", `<p class="small">Hover or click a step on the timeline to see why it took as long as it did.</p>`)
		return
	}
	it := &a.run.Rows[row].Iters[k]
	st := a.run.Step
	c := it.Cost
	var reqs []string
	for i, item := range it.Items {
		if i == 12 {
			reqs = append(reqs, fmt.Sprintf("… %d more", len(it.Items)-12))
			break
		}
		kind := "decode"
		if item.Prefill {
			kind = fmt.Sprintf("prefill %d", item.Tokens)
		}
		reqs = append(reqs, fmt.Sprintf("#%d %s", item.ID, kind))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<h3>Step %d on %s took %s ms — %s-bound</h3>`, it.Index, html.EscapeString(a.run.Rows[row].Name), ms(it.Duration), c.Bound)
	fmt.Fprintf(&sb, `<p>At %s: %s step carrying %d decode tokens and %d prefill tokens (%s).</p>`, fmtDur(it.Start), it.Kind, it.Decodes, it.Prefill, html.EscapeString(strings.Join(reqs, ", ")))
	sb.WriteString(`<dl>`)
	fmt.Fprintf(&sb, `<dt>FLOPs</dt><dd>%.3g → compute time %s ms (at %.0f TFLOP/s × %.2f efficiency × TP %d)</dd>`, c.FLOPs, ms(c.ComputeTime), st.GPU.FLOPS/1e12, st.EffCompute, st.TP)
	fmt.Fprintf(&sb, `<dt>Bytes</dt><dd>%.3g → memory time %s ms (at %.2f TB/s × %.2f efficiency × TP %d)</dd>`, c.Bytes, ms(c.MemoryTime), st.GPU.MemBW/1e12, st.EffMem, st.TP)
	if c.CommTime > 0 {
		fmt.Fprintf(&sb, `<dt>All-reduce</dt><dd>%s ms</dd>`, ms(c.CommTime))
	}
	fmt.Fprintf(&sb, `<dt>Overhead</dt><dd>%s ms per step</dd>`, ms(c.Overhead))
	fmt.Fprintf(&sb, `<dt>Step time</dt><dd>max(%s, %s) + %s = %s ms</dd></dl>`, ms(c.ComputeTime), ms(c.MemoryTime), ms(c.Overhead+c.CommTime), ms(c.Seconds))
	el.Set("innerHTML", sb.String())
}

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
				if n := a.state.Set(k, v); n != "" {
					notes = append(notes, n)
				}
			}
			a.notes = notes
			a.needSim = true
		})
		return nil
	})
	fn("figures", func([]js.Value) any { return jsonParse(figuresJSONOf(snap())) })
	fn("timings", func([]js.Value) any {
		p := snap()
		return map[string]any{"simMs": p.simMs, "drawMs": p.drawMs, "gen": p.gen, "drawnGen": p.drawnGen, "gcs": gcCycles()}
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
			"reducedMotion": a.reduced, "projector": p.projector,
			"live": p.live, "liveProbed": p.liveProbed, "liveFrames": p.liveFrames, "liveRunning": p.liveRunning,
			"liveEdge": p.liveEdge}
	})
	// liveResult is the last measurement through the edge proxy as lab JSON ("" before one ended).
	fn("liveResult", func([]js.Value) any { return snap().liveJSON })
	api.Set("ready", true)
	api.Set("version", "1")
	a.win.Set("servelab", api)
	js.Global().Set("servelab", api)
}

func stateJS(s play.State) any {
	m := map[string]any{"preset": s.Preset, "workload": s.Workload, "policy": s.Policy, "model": s.Model, "gpu": s.GPU}
	for k, v := range s.Num {
		m[k] = v
	}
	return m
}

func jsonParse(s string) js.Value { return js.Global().Get("JSON").Call("parse", s) }

// figuresJSONOf is the figures export: what is shown, in seconds and req/s.
func figuresJSONOf(p published) string {
	f := p.figs
	pct := func(v [3]float64) map[string]float64 {
		return map[string]float64{"p50": v[0], "p90": v[1], "p99": v[2]}
	}
	out := map[string]any{
		"query": p.state.Query(), "ttft": pct(f.TTFT), "tpot": pct(f.TPOT), "itl": pct(f.ITL), "itl_max": f.ITLMax,
		"slo":        map[string]float64{"ttft": p.state.F("slottft") / 1e3, "tpot": p.state.F("slotpot") / 1e3},
		"attainment": f.Attainment, "completed": f.Completed, "submitted": f.Submitted,
		"throughput_tok_s": f.Throughput, "truncated": f.Truncated, "latency_vs_rate": p.rates,
		"sim_ms": p.simMs, "draw_ms": p.drawMs,
	}
	if f.Goodput >= 0 {
		out["goodput"] = f.Goodput
	}
	if p.err != "" {
		out["error"] = p.err
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return `{"error":` + strconv.Quote(err.Error()) + `}`
	}
	return string(b)
}

func (a *App) figuresJSON() string {
	a.publish()
	return figuresJSONOf(a.pub)
}

func (a *App) figuresCSV() string {
	f := a.figs
	var sb strings.Builder
	sb.WriteString("metric,p50_ms,p90_ms,p99_ms\n")
	for i, n := range []string{"ttft", "tpot", "itl"} {
		v := [][3]float64{f.TTFT, f.TPOT, f.ITL}[i]
		fmt.Fprintf(&sb, "%s,%s,%s,%s\n", n, ms(v[0]), ms(v[1]), ms(v[2]))
	}
	fmt.Fprintf(&sb, "\nattainment,%g\ngoodput_req_s,%g\nthroughput_tok_s,%g\n", f.Attainment, f.Goodput, f.Throughput)
	sb.WriteString("\nrate_req_s,ttft_p90_ms,tpot_p90_ms,attainment\n")
	for _, p := range a.rates {
		fmt.Fprintf(&sb, "%g,%s,%s,%g\n", p.Rate, ms(p.TTFTP90), ms(p.TPOTP90), p.Attainment)
	}
	fmt.Fprintf(&sb, "\nquery,%q\n", a.state.Query())
	return sb.String()
}

// download hands text to the browser as a file.
func (a *App) download(name, mime, text string) {
	blob := a.win.Get("Blob").New([]any{text}, map[string]any{"type": mime})
	a.saveBlob(name, blob)
}

func (a *App) saveBlob(name string, blob js.Value) {
	u := a.win.Get("URL").Call("createObjectURL", blob)
	link := a.doc.Call("createElement", "a")
	link.Set("href", u)
	link.Set("download", name)
	a.doc.Get("body").Call("appendChild", link)
	link.Call("click")
	link.Call("remove")
	var revoke js.Func
	revoke = a.jsFunc("download", nil, func([]js.Value) { revoke.Release(); a.win.Get("URL").Call("revokeObjectURL", u) })
	a.win.Call("setTimeout", revoke, 10000)
}

// exportPNG reads the painted timeline back and writes it with its labels into a PNG.
func (a *App) exportPNG() {
	if a.off == nil || a.w == 0 {
		return
	}
	pix := make([]byte, 4*a.w*a.h)
	a.off.ReadPixels(pix)
	// The frame's own constructors: CopyBytesToJS checks the array's type in this realm.
	arr := js.Global().Get("Uint8ClampedArray").New(len(pix))
	js.CopyBytesToJS(arr, pix)
	cv := a.own.Call("createElement", "canvas")
	cv.Set("width", a.w)
	cv.Set("height", a.h)
	ctx := cv.Call("getContext", "2d")
	ctx.Call("putImageData", js.Global().Get("ImageData").New(arr, a.w, a.h), 0, 0)
	ctx.Set("fillStyle", "#dddddd")
	ctx.Set("textBaseline", "top")
	ctx.Set("font", fmt.Sprintf("%dpx sans-serif", int(12*a.dpr)))
	for _, l := range a.labels {
		ctx.Call("fillText", l.text, l.x, l.y)
	}
	cv.Call("toBlob", js.FuncOf(func(this js.Value, args []js.Value) any {
		a.guard("PNG export", func() {
			if len(args) > 0 && args[0].Truthy() {
				a.saveBlob("servelab-timeline.png", args[0])
			}
		})
		return nil
	}), "image/png")
}

// bindUpload wires the file button and drag-and-drop: the first file is run A, a second run B.
func (a *App) bindUpload() {
	read := func(files js.Value) {
		n := files.Length()
		if n == 0 {
			return
		}
		for i := 0; i < n && i < 2; i++ {
			f := files.Index(i)
			name := f.Get("name").String()
			if size := f.Get("size").Float(); size > sim.MaxMeasuredBytes {
				a.message(fmt.Sprintf("%s is %.0f MB, more than the %d MB a measured file may be", name, size/1e6, sim.MaxMeasuredBytes>>20), true)
				continue
			}
			var then, catch js.Func
			var once sync.Once
			release := func() { once.Do(func() { then.Release(); catch.Release() }) }
			then = a.jsFunc("reading "+name, release, func(args []js.Value) {
				text := args[0].String()
				a.post(func() { a.loadMeasured(name, []byte(text)) })
				release()
			})
			catch = a.jsFunc("reading "+name, release, func(args []js.Value) {
				a.message("could not read "+name+": "+js.Global().Get("String").Invoke(args[0]).String(), true)
				release()
			})
			f.Call("text").Call("then", then).Call("catch", catch)
		}
	}
	if el := a.el("upload"); !el.IsNull() {
		a.listen(el, "change", func(js.Value) {
			read(el.Get("files"))
			el.Set("value", "")
		})
	}
	// Drops land on the controls page's stage or, over the timeline, in the frame's own document.
	zone := a.el("stage")
	for _, target := range []js.Value{zone, a.own} {
		a.listen(target, "dragover", func(ev js.Value) {
			ev.Call("preventDefault")
			zone.Get("classList").Call("add", "drop")
		})
		a.listen(target, "dragleave", func(js.Value) { zone.Get("classList").Call("remove", "drop") })
		a.listen(target, "drop", func(ev js.Value) {
			ev.Call("preventDefault")
			ev.Call("stopPropagation")
			zone.Get("classList").Call("remove", "drop")
			read(ev.Get("dataTransfer").Get("files"))
		})
	}
}

// loadMeasured parses an uploaded file, configures the simulation from it
// and lays it over the timeline: the first as A, a later one as B.
func (a *App) loadMeasured(name string, data []byte) {
	o, err := play.ParseMeasured(name, data)
	if err != nil {
		a.message("could not use the file: "+err.Error(), true)
		return
	}
	if a.overlays[0].Absorb(o) { // a tool's summary file dropped with its per-request file
		a.message(fmt.Sprintf("took %s's own figures into run A", name), false)
		a.showMeasured()
		a.publish()
		return
	}
	slot := 0
	if a.overlays[0] != nil && a.overlays[1] == nil {
		slot = 1
	} else if a.overlays[0] != nil {
		a.overlays = [2]*play.Overlay{}
	}
	if slot == 0 {
		a.notes = o.ApplyConfig(&a.state)
		a.state.Preset = ""
		a.needSim = true
	}
	o.Origin = math.Max(0, a.state.F("inject"))
	a.overlays[slot] = o
	a.dirty = true
	a.message(fmt.Sprintf("overlaid %s as run %s (%s)", name, "AB"[slot:slot+1], o.Kind), false)
	a.showMeasured()
	a.publish()
}

// showMeasured puts the measured figures beside the simulated ones.
func (a *App) showMeasured() {
	el := a.el("measured-table")
	if el.IsNull() {
		return
	}
	if a.overlays[0] == nil {
		el.Set("innerHTML", `<p class="small">No measured run. Upload a lab JSON (run.py or <code>servelab measure</code>) or a vLLM bench result, or drop it on the timeline.</p>`)
		return
	}
	var sb strings.Builder
	sb.WriteString(`<table><caption>Measured vs simulated</caption><tr><th scope="col"></th>`)
	cols := []string{"simulated"}
	for i, o := range a.overlays {
		if o != nil {
			cols = append(cols, fmt.Sprintf("%s: %s", "AB"[i:i+1], o.Name))
		}
	}
	for _, c := range cols {
		fmt.Fprintf(&sb, `<th scope="col">%s</th>`, html.EscapeString(c))
	}
	sb.WriteString(`</tr>`)
	row := func(label string, simv string, get func(*play.Overlay) string) {
		fmt.Fprintf(&sb, `<tr><th scope="row">%s</th><td>%s</td>`, label, simv)
		for _, o := range a.overlays {
			if o != nil {
				fmt.Fprintf(&sb, `<td>%s</td>`, get(o))
			}
		}
		sb.WriteString(`</tr>`)
	}
	var lab *sim.LabSummary
	if a.run != nil {
		lab = a.run.Lab
	}
	labv := func(f func(*sim.LabSummary) string) string {
		if lab == nil || lab.Error != "" {
			return "–"
		}
		return f(lab)
	}
	of := func(f func(*sim.LabSummary) string, g func(*play.Overlay) string) func(*play.Overlay) string {
		return func(o *play.Overlay) string {
			if o.Lab != nil {
				return f(o.Lab)
			}
			if g != nil {
				return g(o)
			}
			return "–"
		}
	}
	worst := func(l *sim.LabSummary) string { return ms(l.WorstGap) + " ms" }
	spike := func(l *sim.LabSummary) string { return fmt.Sprintf("%.1f×", l.SpikeRatio) }
	longT := func(l *sim.LabSummary) string { return ms(l.LongTTFT) + " ms" }
	p99 := func(l *sim.LabSummary) string { return ms(l.ITLP99) + " ms" }
	row("worst gap", labv(worst), of(worst, nil))
	row("spike ratio", labv(spike), of(spike, nil))
	row("long TTFT", labv(longT), of(longT, nil))
	simITL := "–"
	if a.run != nil {
		simITL = ms(a.figs.ITL[2]) + " ms"
	}
	row("ITL P99", simITL, of(p99, func(o *play.Overlay) string { return ms(o.VLLMFig[2][2]) + " ms" }))
	if a.overlays[0].Bench != nil && a.run != nil { // any benchmark tool's run
		row("TTFT P90", ms(a.figs.TTFT[1])+" ms", func(o *play.Overlay) string { return ms(o.VLLMFig[0][1]) + " ms" })
		row("TPOT P90", ms(a.figs.TPOT[1])+" ms", func(o *play.Overlay) string { return ms(o.VLLMFig[1][1]) + " ms" })
	}
	sb.WriteString(`</table>`)
	el.Set("innerHTML", sb.String())
}

// errCancelled stops a background job whose settings are stale.
var errCancelled = errors.New("cancelled")

// startBackground computes the latency-vs-rate sweep and the goodput for
// state s without holding up the page: each simulation yields to the
// browser, and a newer change cancels the job.
func (a *App) startBackground(s play.State, gen int) {
	if a.simErr != "" {
		return
	}
	if s.Workload == "lab" || (a.run != nil && a.run.Truncated) || play.SweepTooBig(s) {
		return // Figures() already says why there is no sweep
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.post(func() { a.fail("background figures", r) })
			}
		}()
		stale := func() error {
			time.Sleep(time.Millisecond) // let the browser draw and handle input
			a.mu.Lock()
			cur := a.pub.gen
			a.mu.Unlock()
			if cur != gen {
				return errCancelled
			}
			return nil
		}
		var pts []play.RatePoint
		for _, rate := range play.RatesFor(s.F("rate")) {
			if stale() != nil {
				return
			}
			sum, att, err := play.AttainmentAt(s, rate)
			if err != nil {
				break
			}
			pts = append(pts, play.RatePoint{Rate: rate, TTFTP90: sum.TTFTP90, TPOTP90: sum.TPOTP90, Attainment: att})
		}
		ptsCopy := pts
		a.post(func() {
			if a.gen == gen {
				a.rates = ptsCopy
				a.showFigures()
				a.publish()
			}
		})
		hi := math.Min(sim.MaxRate, math.Max(400, 4*s.F("rate")))
		g, saturated, err := sim.Goodput(func(rate float64) (float64, error) {
			if err := stale(); err != nil {
				return 0, err
			}
			_, att, err := play.AttainmentAt(s, rate)
			return att, err
		}, 0.9, hi)
		if errors.Is(err, errCancelled) {
			return
		}
		note := ""
		switch {
		case err != nil:
			note = "error: " + err.Error()
		case saturated:
			note = fmt.Sprintf("≥ %g req/s", hi)
		}
		a.post(func() {
			if a.gen != gen {
				return
			}
			a.figs.Goodput, a.figs.GoodputNote = g, note
			a.showFigures()
			a.publish()
		})
	}()
}

// pickBackground starts the background figures once the settings have rested.
func (a *App) pickBackground() {
	if a.bgPending && time.Now().After(a.bgAt) {
		a.bgPending = false
		a.startBackground(a.state.Clone(), a.gen)
	}
}

var gcSample = []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}

// gcCycles is how many collections have run (for the benchmark's notes).
func gcCycles() float64 {
	metrics.Read(gcSample)
	if gcSample[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return float64(gcSample[0].Value.Uint64())
}
