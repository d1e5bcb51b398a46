//go:build js && wasm

package main

// The chapters' tables and figures, as HTML and SVG, from the tables
// lecture.Lecture computed (drawing only: every number comes from the sim).

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"

	"servelab/sim"
	"servelab/sim/lab"
	lect "servelab/sim/lecture"
	"servelab/sim/scenario"
	"servelab/wasm/play"
)

// tableHTML writes a table: caption, header (already escaped HTML, so
// terms can carry definitions) and rows of cells.
func tableHTML(caption string, head []string, rows [][]string) string {
	return pickTableHTML(nil, caption, head, rows, nil, -1)
}

// pickTableHTML is tableHTML whose rows the student can pick (click, tap,
// Enter): row i sets picks[i], settings as a query ("policy=chunked&budget=512"),
// on the chapter's experiment, so the timeline runs that row; row cur is
// the one the timeline shows now (-1: none).
func pickTableHTML(u *uiState, caption string, head []string, rows [][]string, picks []string, cur int) string {
	var sb strings.Builder
	sb.WriteString(`<table class="lecture"><caption>` + html.EscapeString(caption) + `</caption><tr>`)
	for _, h := range head {
		sb.WriteString(`<th scope="col">` + h + `</th>`)
	}
	sb.WriteString(`</tr>`)
	for i, r := range rows {
		switch {
		case i < len(picks) && picks[i] != "":
			cls := "pick"
			if i == cur {
				cls += " cur"
			}
			fmt.Fprintf(&sb, `<tr class="%s" data-act="set" data-arg="%s" tabindex="0" title="%s">`, cls, html.EscapeString(picks[i]), html.EscapeString(u.tr("ch.rowpick")))
		default:
			sb.WriteString(`<tr>`)
		}
		for i, c := range r {
			if i == 0 {
				sb.WriteString(`<th scope="row">` + c + `</th>`)
			} else {
				sb.WriteString(`<td>` + c + `</td>`)
			}
		}
		sb.WriteString(`</tr>`)
	}
	sb.WriteString(`</table>`)
	return sb.String()
}

// textW estimates a label's width in SVG units at the charts' 10px font
// (a Han character is about twice a Latin one), to lay labels out.
func textW(s string) float64 {
	w := 0.0
	for _, r := range s {
		if r >= 0x2E80 {
			w += 10
		} else {
			w += 5.8
		}
	}
	return w
}

// escaped is rows with every cell HTML-escaped.
func escaped(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, c := range r {
			out[i][j] = html.EscapeString(c)
		}
	}
	return out
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// demo1HTML is the step table and the roofline breakdown of each step.
func demo1HTML(u *uiState, res *lect.Interference, vals map[string]string) (string, string) {
	t := play.Demo1Table(u.lang, u.st.Probe.Batch, u.st.Probe.Context, res.Demo1) // the static page's table too
	head, rows := escaped([][]string{t.Head})[0], escaped(t.Rows)
	head[len(head)-1] = termHTML(u, "bound")
	for _, d := range res.Demo1 {
		vals["mixed"+strconv.Itoa(d.Prompt)] = ms(d.Mixed)
		vals["slow"+strconv.Itoa(d.Prompt)] = fmt.Sprintf("%.1f", d.DecodeSlowdown)
	}
	first, last := res.Demo1[0], res.Demo1[len(res.Demo1)-1]
	vals["dec"], vals["lastp"], vals["lastslow"], vals["lastpre"] = ms(first.DecodeOnly), strconv.Itoa(last.Prompt), fmt.Sprintf("%.1f", last.DecodeSlowdown), fmt.Sprintf("%.2f", last.PrefillSlowdown)
	vals["firstp"], vals["firstmixed"] = strconv.Itoa(first.Prompt), ms(first.Mixed)
	vals["batch"], vals["ctx"] = strconv.Itoa(u.st.Probe.Batch), strconv.Itoa(u.st.Probe.Context)
	table := tableHTML(t.Caption, head, rows)
	prompts := make([]int, len(res.Demo1))
	for i, d := range res.Demo1 {
		prompts[i] = d.Prompt
	}
	alone, mixed, err := play.StepBreakdown(*u.st, prompts)
	if err != nil {
		return table, ""
	}
	// One pair of bars per step: compute time and memory time; the step
	// takes the longer (the roofline) plus the overhead, marked by a tick.
	names := []string{u.tr("f1.alone")}
	costs := []sim.Cost{alone}
	for i, c := range mixed {
		names = append(names, u.trf("f1.plus", prompts[i]))
		costs = append(costs, c)
	}
	top := 0.0
	for _, c := range costs {
		top = math.Max(top, math.Max(c.Seconds, math.Max(c.ComputeTime, c.MemoryTime)))
	}
	const W, rowH = 420.0, 30.0
	L := 0.0
	for _, n := range names {
		L = math.Max(L, textW(n)+10)
	}
	H := rowH*float64(len(costs)) + 30
	x := func(t float64) float64 { return L + t/top*(W-L-60) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart fig1" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, html.EscapeString(u.tr("f1.aria")))
	for i, c := range costs {
		y := 8 + rowH*float64(i)
		fmt.Fprintf(&sb, `<text x="2" y="%.1f" class="lbl">%s</text>`, y+14, html.EscapeString(names[i]))
		fmt.Fprintf(&sb, `<rect class="compute" x="%g" y="%.1f" width="%.1f" height="8"/>`, L, y+2, x(c.ComputeTime)-L)
		fmt.Fprintf(&sb, `<rect class="memory" x="%g" y="%.1f" width="%.1f" height="8"/>`, L, y+12, x(c.MemoryTime)-L)
		fmt.Fprintf(&sb, `<line class="total" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x(c.Seconds), y, x(c.Seconds), y+22)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" class="lbl">%s ms</text>`, x(c.Seconds)+4, y+14, ms(c.Seconds))
	}
	lx := 2.0
	for _, k := range []struct{ cls, txt string }{{"k-compute", "▬ " + u.tr("f1.compute")}, {"k-memory", "▬ " + u.tr("f1.memory")}, {"", "| " + u.tr("f1.total")}} {
		fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl %s">%s</text>`, lx, H-6, k.cls, html.EscapeString(k.txt))
		lx += textW(k.txt) + 14
	}
	sb.WriteString(`</svg>`)
	return table, sb.String()
}

// demo2HTML is the latency-vs-rate table and its three curves.
func demo2HTML(u *uiState, res *lect.Interference, vals map[string]string) (string, string) {
	rows := make([][]string, len(res.Demo2))
	col := []curve{{"ttft", u.tr("f2.col.ttft"), nil}, {"pre", u.tr("f2.pre.ttft"), nil}}
	tp := []curve{{"tpot", u.tr("f2.col.tpot"), nil}, {"dec", u.tr("f2.dec.tpot"), nil}}
	picks, cur := make([]string, len(res.Demo2)), -1
	for i, d := range res.Demo2 {
		rows[i] = []string{fmt.Sprintf("%g", d.Rate), ms(d.ColocatedTTFT90), ms(d.ColocatedTPOT90), ms(d.PrefillTTFT90), ms(d.DecodeTPOT90)}
		picks[i] = "rate=" + play.FormatNum(d.Rate)
		if u.st.Rate == d.Rate && u.st.Policy == scenario.PrefillFirst {
			cur = i
		}
		col[0].pts = append(col[0].pts, [2]float64{d.Rate, d.ColocatedTTFT90})
		col[1].pts = append(col[1].pts, [2]float64{d.Rate, d.PrefillTTFT90})
		tp[0].pts = append(tp[0].pts, [2]float64{d.Rate, d.ColocatedTPOT90})
		tp[1].pts = append(tp[1].pts, [2]float64{d.Rate, d.DecodeTPOT90})
	}
	lo, hi := res.Demo2[0], res.Demo2[len(res.Demo2)-1]
	decMin, decMax := math.Inf(1), 0.0
	for _, d := range res.Demo2 {
		decMin, decMax = math.Min(decMin, d.DecodeTPOT90), math.Max(decMax, d.DecodeTPOT90)
	}
	vals["lorate"], vals["hirate"] = fmt.Sprintf("%g", lo.Rate), fmt.Sprintf("%g", hi.Rate)
	vals["lotpot"], vals["hitpot"] = ms(lo.ColocatedTPOT90), ms(hi.ColocatedTPOT90)
	vals["ratio"] = fmt.Sprintf("%.1f", hi.ColocatedTPOT90/lo.ColocatedTPOT90)
	vals["decmin"], vals["decmax"] = ms(decMin), ms(decMax)
	vals["prettft"], vals["colttft"] = ms(lo.PrefillTTFT90), ms(lo.ColocatedTTFT90)
	// (the table's own lengths: while a new table is computed the last one
	// is shown, and its caption must not say the slider's new value)
	vals["prompt"], vals["output"] = strconv.Itoa(res.Config.Prompt), strconv.Itoa(res.Config.Output)
	table := pickTableHTML(u, u.trf("t2.caption", res.Config.Prompt, res.Config.Output),
		[]string{u.tr("t2.rate"), u.tr("t2.colttft"), u.tr("t2.coltpot"), u.tr("t2.prettft"), u.tr("t2.dectpot")}, rows, picks, cur)
	xt := u.tr("fig.rate")
	fig := `<div class="pair"><figure>` + curvesSVG(u.tr("f2.ttft.aria"), col, 0, xt, u.tr("fig.p90ttft")) + legendHTML(col) + `</figure><figure>` +
		curvesSVG(u.tr("f2.tpot.aria"), tp, 0, xt, u.tr("fig.p90tpot")) + legendHTML(tp) + `</figure></div>`
	return table, fig
}

func legendHTML(cs []curve) string {
	var sb strings.Builder
	sb.WriteString(`<figcaption class="small">`)
	for i, c := range cs {
		if i > 0 {
			sb.WriteString(" · ")
		}
		sb.WriteString(`<span class="k-` + c.cls + `">━ ` + html.EscapeString(c.name) + `</span>`)
	}
	sb.WriteString(`</figcaption>`)
	return sb.String()
}

// demo3HTML is the goodput-per-GPU table, DistServe's published figures beside ours.
func demo3HTML(u *uiState, res *lect.Interference, vals map[string]string) (string, string) {
	d := res.Demo3
	ds := play.DistServe
	dash := "–"
	split := func(s sim.Split) string { return u.trf("t3.split", s.Prefill, s.Decode) }
	rows := [][]string{
		{html.EscapeString(u.tr("t3.colocated")), "1", f1(d.Colocated), f1(d.Colocated), f1(ds.Colocated)},
		{html.EscapeString(u.tr("t3.prefill")), "1", f1(d.Prefill), dash, f1(ds.PrefillOnly) + " " + html.EscapeString(u.tr("t3.whole"))},
		{html.EscapeString(u.tr("t3.decode")), "1", f1(d.Decode), dash, f1(ds.DecodeOnly) + " " + html.EscapeString(u.tr("t3.whole"))},
	}
	for i, s := range d.Splits {
		name := split(s)
		if i == len(d.Splits)-1 {
			name = u.trf("t3.best", s.Prefill, s.Decode)
		}
		paper := dash
		if s.Prefill == 2 && s.Decode == 1 && i < len(d.Splits)-1 {
			paper = f1(ds.PerGPU2P1D)
		}
		rows = append(rows, []string{html.EscapeString(name), strconv.Itoa(s.Prefill + s.Decode), f1(s.Total), f1(s.PerGPU), paper})
	}
	for _, s := range d.Simulated {
		paper := dash
		if s.Prefill == 2 && s.Decode == 1 {
			paper = f1(ds.PerGPU2P1D)
		}
		rows = append(rows, []string{html.EscapeString(u.trf("t3.simulated", s.Prefill, s.Decode)), strconv.Itoa(s.Prefill + s.Decode), f1(s.Total), f1(s.PerGPU), paper})
	}
	rows = append(rows, []string{html.EscapeString(u.tr("t3.advantage")), dash, dash, fmt.Sprintf("%.1f×", d.Advantage), fmt.Sprintf("%.1f×", ds.Advantage)})
	vals["col"], vals["pre"], vals["dec"] = f1(d.Colocated), f1(d.Prefill), f1(d.Decode)
	vals["bx"], vals["by"], vals["bpg"], vals["adv"] = strconv.Itoa(d.Best.Prefill), strconv.Itoa(d.Best.Decode), f1(d.Best.PerGPU), fmt.Sprintf("%.1f", d.Advantage)
	vals["ttft"], vals["tpot"] = play.FormatNum(d.SLO.TTFT*1e3), play.FormatNum(d.SLO.TPOT*1e3)
	table := tableHTML(u.trf("t3.caption", vals["ttft"], vals["tpot"], d.Attainment*100),
		[]string{u.tr("t3.config"), u.tr("t3.gpus"), termHTML(u, "goodput") + " " + u.tr("t3.unit"), u.tr("t3.pergpu"), u.tr("t3.paper")}, rows)
	// Bars of goodput per GPU: colocated first (marked), then the splits.
	bars := []chartBar{{name: u.tr("t3.colocated"), v: d.Colocated, cls: "col"}}
	for _, s := range d.Splits {
		bars = append(bars, chartBar{name: split(s), v: s.PerGPU})
	}
	for _, s := range d.Simulated {
		bars = append(bars, chartBar{name: u.trf("t3.simulated", s.Prefill, s.Decode), v: s.PerGPU})
	}
	top := 0.0
	for i := range bars {
		bars[i].label = f1(bars[i].v)
		top = math.Max(top, bars[i].v)
	}
	const W, rowH = 420.0, 20.0
	L := barsLeft(bars)
	H := rowH*float64(len(bars)) + 24
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, html.EscapeString(u.tr("f3.aria")))
	writeBars(&sb, bars, L, W-L-50, top)
	fmt.Fprintf(&sb, `<text x="2" y="%g" class="lbl">%s</text></svg>`, H-4, html.EscapeString(u.tr("f3.axis")))
	return table, sb.String()
}

// chartBar is one bar of a chapter's bar chart.
type chartBar struct {
	name, label string  // its name (left of it) and its value as written (after it)
	v           float64 // its length in the chart's unit (NaN: none yet)
	cls         string  // "col" for the one to look at, else the others' "split"
}

// barsLeft is the room the bars' names take, where the bars begin.
func barsLeft(bars []chartBar) float64 {
	L := 0.0
	for _, b := range bars {
		L = math.Max(L, textW(b.name)+8)
	}
	return L
}

// writeBars writes the bars a row each, 20 units apart from y 6: a bar of
// length top is plotW wide, from x L.
func writeBars(sb *strings.Builder, bars []chartBar, L, plotW, top float64) {
	for i, b := range bars {
		y := 6 + 20*float64(i)
		w := 0.0
		if top > 0 && !math.IsNaN(b.v) {
			w = b.v / top * plotW
		}
		cls := b.cls
		if cls == "" {
			cls = "split"
		}
		fmt.Fprintf(sb, `<text x="2" y="%.1f" class="lbl">%s</text><rect class="%s" x="%g" y="%.1f" width="%.1f" height="12"/><text x="%.1f" y="%.1f" class="lbl">%s</text>`,
			y+11, html.EscapeString(b.name), cls, L, y, w, L+w+4, y+11, b.label)
	}
}

// demo4HTML is the budget table and the TTFT/TPOT trade-off.
func demo4HTML(u *uiState, res *lect.Interference, vals map[string]string) (string, string) {
	rows := make([][]string, len(res.Demo4))
	picks, cur := make([]string, len(res.Demo4)), -1
	for i, d := range res.Demo4 {
		b := "–"
		name := u.tr("t4.pf")
		picks[i] = "policy=prefill-first&rate=" + play.FormatNum(res.Config.Rate4)
		if d.Budget > 0 {
			b, name = strconv.Itoa(d.Budget), u.tr("t4.chunked")
			picks[i] = "policy=chunked&budget=" + strconv.Itoa(d.Budget) + "&bdec=0&rate=" + play.FormatNum(res.Config.Rate4)
		}
		if u.st.Rate == res.Config.Rate4 && (d.Budget == 0 && u.st.Policy == scenario.PrefillFirst ||
			d.Budget > 0 && u.st.Policy == scenario.Chunked && u.st.Budget == d.Budget && u.st.ExcludeDecodes) {
			cur = i
		}
		rows[i] = []string{html.EscapeString(name), b, ms(d.TTFTP50), ms(d.TTFTP90), ms(d.TPOTP50), ms(d.TPOTP90)}
	}
	base, small, big := res.Demo4[0], res.Demo4[1], res.Demo4[len(res.Demo4)-1]
	mono := u.tr("t4.mono")
	for i := 2; i < len(res.Demo4); i++ {
		if res.Demo4[i].TTFTP90 > res.Demo4[i-1].TTFTP90 {
			mono = u.tr("t4.notmono")
		}
	}
	vals["basetpot"], vals["bigtpot"], vals["smalltpot"] = ms(base.TPOTP90), ms(big.TPOTP90), ms(small.TPOTP90)
	vals["big"], vals["small"] = strconv.Itoa(big.Budget), strconv.Itoa(small.Budget)
	vals["bigttft"], vals["smallttft"], vals["mono"] = ms(big.TTFTP90), ms(small.TTFTP90), mono
	vals["rate"] = fmt.Sprintf("%g", res.Config.Rate4)
	msh := html.EscapeString(u.tr("t4.ms"))
	table := pickTableHTML(u, u.trf("t4.caption", res.Config.Rate4),
		[]string{u.tr("t4.policy"), termHTML(u, "budget") + " " + u.tr("t4.unit"), "P50 " + termHTML(u, "ttft") + msh, "P90 " + termHTML(u, "ttft") + msh, "P50 " + termHTML(u, "tpot") + msh, "P90 " + termHTML(u, "tpot") + msh}, rows, picks, cur)
	// The trade-off: P90 TPOT across, P90 TTFT up, one point per policy line.
	const W, H, L, B = 360.0, 200.0, 50.0, 28.0
	x0, x1, y0, y1 := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, d := range res.Demo4 {
		x0, x1 = math.Min(x0, d.TPOTP90), math.Max(x1, d.TPOTP90)
		y0, y1 = math.Min(y0, d.TTFTP90), math.Max(y1, d.TTFTP90)
	}
	padx, pady := math.Max((x1-x0)*0.15, 1e-4), math.Max((y1-y0)*0.15, 1e-4)
	x0, x1, y0, y1 = math.Max(0, x0-padx), x1+padx, math.Max(0, y0-pady), y1+pady
	px := func(v float64) float64 { return L + (v-x0)/(x1-x0)*(W-L-60) }
	py := func(v float64) float64 { return H - B - (v-y0)/(y1-y0)*(H-B-10) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, html.EscapeString(u.tr("f4.aria")))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" class="axis"/><line x1="%g" y1="6" x2="%g" y2="%g" class="axis"/>`, L, H-B, W-8, H-B, L, L, H-B)
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl">%s</text><text x="2" y="14" class="lbl">%s</text>`, L, H-6, html.EscapeString(u.tr("f4.x")), html.EscapeString(u.tr("f4.y")))
	fmt.Fprintf(&sb, `<text x="2" y="%g" class="lbl">%s</text><text x="2" y="%g" class="lbl">%s</text>`, py(y1)+24, ms(y1), py(y0), ms(y0))
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl">%s</text><text x="%g" y="%g" class="lbl">%s</text>`, L, H-B+12, ms(x0), W-60, H-B+12, ms(x1))
	pts := make([]lect.Demo4Row, len(res.Demo4))
	copy(pts, res.Demo4)
	sort.Slice(pts, func(i, j int) bool { return pts[i].TPOTP90 < pts[j].TPOTP90 })
	for _, d := range pts {
		lbl := u.tr("t4.pf")
		cls := "pf"
		if d.Budget > 0 {
			lbl, cls = strconv.Itoa(d.Budget), "ck"
		}
		fmt.Fprintf(&sb, `<circle class="%s" cx="%.1f" cy="%.1f" r="4"/><text x="%.1f" y="%.1f" class="lbl">%s</text>`, cls, px(d.TPOTP90), py(d.TTFTP90), px(d.TPOTP90)+6, py(d.TTFTP90)-4, html.EscapeString(lbl))
	}
	sb.WriteString(`</svg>`)
	return table, sb.String()
}

// labHTML is the lab's table (unchunked vs chunked) and both runs' gaps on
// one clock (time since the long prompt arrived) and one gap axis.
func labHTML(u *uiState, lp *play.LabPair, vals map[string]string) (string, string) {
	if lp == nil || lp.Unchunked.Lab == nil || lp.Chunked.Lab == nil {
		return "", ""
	}
	a, b := lp.Unchunked.Lab, lp.Chunked.Lab
	msu := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return ms(v) + " ms"
	}
	// The student's own measured run, when one is laid over the timeline.
	var yours *play.Overlay
	if o := u.overlays[0]; o != nil && o.Lab != nil {
		yours = o
	}
	ratio := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.1f×", v)
	}
	var rows [][]string
	var yl *lab.Summary
	if yours != nil {
		yl = yours.Lab
	}
	for _, r := range lp.RowsWith(yl) {
		name := html.EscapeString(u.tr("lab." + r.Key))
		if r.Term {
			name = termHTML(u, r.Key)
		}
		f := msu
		if r.Ratio {
			f = ratio
		}
		row := []string{name, f(r.Unchunked), f(r.Chunked)}
		if yours != nil {
			row = append(row, f(r.Yours))
		}
		rows = append(rows, row)
		if r.Key == "prefillgap" {
			vals["pu"], vals["pc"] = ms(r.Unchunked), ms(r.Chunked)
		}
	}
	// The pair's own settings, not the form's: while a new pair is
	// simulated the last one is shown, and says what it was run with.
	ran := lp.Chunked.State
	budget := ran.EffectiveBudget()
	vals["wu"], vals["wc"], vals["budget"] = ms(a.WorstGap), ms(b.WorstGap), strconv.Itoa(budget)
	vals["su"], vals["sc"] = fmt.Sprintf("%.1f", a.SpikeRatio), fmt.Sprintf("%.1f", b.SpikeRatio)
	vals["tu"], vals["tc"] = ms(a.LongTTFT), ms(b.LongTTFT)
	vals["streams"], vals["long"] = strconv.Itoa(ran.Lab.ShortConcurrency), strconv.Itoa(ran.Lab.LongInputLen)
	if b.WorstGap > 0 {
		vals["ratio"] = fmt.Sprintf("%.0f", a.WorstGap/b.WorstGap)
	}
	head := []string{"", html.EscapeString(u.tr("lab.unchunked")), html.EscapeString(u.trf("lab.chunked", budget))}
	if yours != nil {
		head = append(head, html.EscapeString(u.trf("lab.yours", yours.Name)))
		vals["yname"], vals["wy"], vals["sy"], vals["ty"] = yours.Name, ms(yl.WorstGap), fmt.Sprintf("%.1f", yl.SpikeRatio), ms(yl.LongTTFT)
	}
	table := tableHTML(u.trf("tl.caption", ran.Lab.ShortConcurrency, ran.Lab.LongInputLen), head, rows)
	// One clock: seconds from the injection; one axis: the larger worst gap.
	inj := lp.Unchunked.Inject
	t0, t1 := inj-0.5, inj+math.Max(1.5, a.LongTTFT+1)
	top := niceCeil(math.Max(a.ITLMax, b.ITLMax))
	const W, H, L, B = 420.0, 170.0, 50.0, 24.0
	cols := int(W - L - 8)
	series := func(r *play.SimRun) []float64 {
		out := make([]float64, cols)
		for _, g := range r.ITL {
			if g.T < t0 || g.T > t1 {
				continue
			}
			c := int((g.T - t0) / (t1 - t0) * float64(cols-1))
			out[c] = math.Max(out[c], g.Gap)
		}
		return out
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, html.EscapeString(u.tr("fl.aria")))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" class="axis"/><line x1="%g" y1="6" x2="%g" y2="%g" class="axis"/>`, L, H-B, W-8, H-B, L, L, H-B)
	for _, s := range []struct {
		cls string
		v   []float64
	}{{"unch", series(lp.Unchunked)}, {"chk", series(lp.Chunked)}} {
		// A gap is a spike from the axis at the time its token came (a line
		// between points would draw a ramp that was never there).
		var d strings.Builder
		for c, g := range s.v {
			if g > 0 {
				fmt.Fprintf(&d, "M%.1f %gV%.1f", L+float64(c), H-B, H-B-g/top*(H-B-10))
			}
		}
		fmt.Fprintf(&sb, `<path class="%s" d="%s"/>`, s.cls, d.String())
	}
	xi := L + (inj-t0)/(t1-t0)*float64(cols-1)
	fmt.Fprintf(&sb, `<line class="cur" x1="%.1f" y1="6" x2="%.1f" y2="%g"/>`, xi, xi, H-B)
	fmt.Fprintf(&sb, `<text x="2" y="14" class="lbl">%s</text><text x="2" y="%g" class="lbl">0</text>`, play.FormatDur(top), H-B)
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl">%s</text><text x="%g" y="%g" class="lbl">%+.1f s</text><text x="%g" y="%g" class="lbl">%+.1f s</text>`,
		L+40, H-6, html.EscapeString(u.tr("fl.x")), L, H-B+12, t0-inj, W-40, H-B+12, t1-inj)
	sb.WriteString(`</svg><p class="small"><span class="k-unch">━ ` + html.EscapeString(u.tr("lab.unchunked")) + `</span> · <span class="k-chk">━ ` +
		html.EscapeString(u.trf("lab.chunked", budget)) + `</span> · ` + html.EscapeString(u.tr("fl.same")) + `</p>`)
	return table, sb.String()
}
