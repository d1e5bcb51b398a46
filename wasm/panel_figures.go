//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"servelab/sim/scenario"
	"servelab/wasm/play"
)

// figuresPanel is the figures table, the latency-vs-rate chart, the
// aria-live summary and the export buttons.
type figuresPanel struct{}

func (figuresPanel) bind(p *page, emit func(event)) {
	p.onClick("export-png", emit, evExport{"png"})
	p.onClick("export-csv", emit, evExport{"csv"})
	p.onClick("export-json", emit, evExport{"json"})
}

func ms(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v*1e3, 'f', 2, 64)
}

func (figuresPanel) render(p *page, u *uiState) {
	f := u.figs
	for i, name := range []string{"ttft", "tpot", "itl"} {
		vals := [][3]float64{f.TTFT, f.TPOT, f.ITL}[i]
		for j, q := range []string{"p50", "p90", "p99"} {
			txt := "–"
			if u.run != nil {
				txt = ms(vals[j])
			}
			p.setText("fig-"+name+"-"+q, txt)
		}
	}
	trust := ""
	if u.run != nil {
		trust = u.run.Trust(u.lang)
	}
	p.setText("fig-trust", trust)
	if el := p.el("fig-trust"); !el.IsNull() {
		setProp(el, "hidden", trust == "")
	}
	if u.run == nil {
		p.setText("fig-attain", "–")
		p.setText("fig-goodput", "–")
		p.setText("fig-throughput", "–")
		p.setText("fig-summary", u.tr("fig.nosim")+" "+u.simErr)
		return
	}
	p.setText("fig-attain", fmt.Sprintf("%.1f%%", f.Attainment*100))
	p.setText("fig-throughput", u.trf("fig.throughput", f.Throughput))
	gp := u.tr("fig.computing")
	switch {
	case f.GoodputNote != "":
		gp = u.tr(f.GoodputNote)
	case f.Goodput >= 0 && u.st.Policy == scenario.Disaggregated:
		gpus := u.st.PrefillGPUs + u.st.DecodeGPUs
		gp = u.trf("fig.goodput.disagg", f.Goodput, f.Goodput/float64(gpus), gpus)
	case f.Goodput >= 0:
		gp = u.trf("fig.goodput", f.Goodput)
	}
	p.setText("fig-goodput", gp)
	sum := u.trf("fig.summary", u.tr("policy."+u.st.Policy), u.tr("workload."+u.st.Workload), ms(f.TTFT[1]), ms(f.TPOT[1]), ms(f.ITL[2]), ms(f.ITLMax), f.Completed, f.Submitted, f.Attainment*100)
	if u.run.Lab != nil && u.run.Lab.Error == "" {
		l := u.run.Lab
		sum += " " + u.trf("fig.summary.lab", ms(l.WorstGap), l.WorstGapOffset, l.SpikeRatio, ms(l.LongTTFT))
	}
	if f.Goodput >= 0 {
		sum += " " + u.trf("fig.summary.goodput", f.Goodput)
	}
	if f.Truncated {
		sum += " " + u.tr("fig.summary.cut")
	}
	p.setText("fig-summary", sum)
	p.setHTML("rate-chart", ratesHTML(u))
}

// ratesHTML is the latency-vs-rate view: an SVG with a text table. While
// a change's points are computed, the last points shown stand in its
// place, dimmed and captioned as computing.
func ratesHTML(u *uiState) string {
	if u.st.Workload == "lab" {
		return `<p class="small">` + html.EscapeString(u.tr("rates.lab")) + `</p>`
	}
	switch {
	case len(u.rates) > 0:
		return ratesChart(u, u.rates, u.st.Rate, u.tr("rates.caption"))
	case u.figs.GoodputNote != "":
		return `<p class="small">` + html.EscapeString(u.tr("rates.none")+" "+u.tr(u.figs.GoodputNote)) + `</p>`
	case len(u.oldRates) > 0:
		return `<div class="stale">` + ratesChart(u, u.oldRates, 0, u.tr("rates.computing")) + `</div>`
	}
	return `<p class="small">` + html.EscapeString(u.tr("rates.computing")) + `</p>`
}

// ratesChart is the chart of rates (with a dotted line at cur when cur > 0)
// and its table under caption.
func ratesChart(u *uiState, rates []play.RatePoint, cur float64, caption string) string {
	series := []curve{
		{"ttft", u.tr("rates.ttft"), nil},
		{"tpot", u.tr("rates.tpot"), nil},
	}
	for _, r := range rates {
		series[0].pts = append(series[0].pts, [2]float64{r.Rate, r.TTFTP90})
		series[1].pts = append(series[1].pts, [2]float64{r.Rate, r.TPOTP90})
	}
	var sb strings.Builder
	sb.WriteString(curvesSVG(u.tr("rates.aria"), series, cur, u.tr("fig.rate"), u.tr("fig.p90")))
	fmt.Fprintf(&sb, `<p class="small"><span class="k-ttft">━ %s</span> · <span class="k-tpot">╍ %s</span> · %s</p>`,
		html.EscapeString(u.tr("rates.ttft")), html.EscapeString(u.tr("rates.tpot")), html.EscapeString(u.tr("rates.current")))
	fmt.Fprintf(&sb, `<table class="small"><caption>%s</caption><tr><th scope="col">%s</th><th scope="col">%s</th><th scope="col">%s</th><th scope="col">%s</th></tr>`,
		html.EscapeString(caption), u.tr("unit.req/s"), u.tr("rates.col.ttft"), u.tr("rates.col.tpot"), u.tr("rates.col.slo"))
	for _, r := range rates {
		fmt.Fprintf(&sb, `<tr><td>%g</td><td>%s</td><td>%s</td><td>%.0f%%</td></tr>`, r.Rate, ms(r.TTFTP90), ms(r.TPOTP90), r.Attainment*100)
	}
	sb.WriteString(`</table>`)
	return sb.String()
}

// curve is one line of a latency chart: (rate, seconds) points.
type curve struct {
	cls, name string
	pts       [][2]float64
}

// curvesSVG draws latency curves against rate on a log scale (latency
// explodes past saturation: a log scale keeps the knee and the flat part
// readable), with ticks on both axes, the titles xTitle and yTitle, and a
// dotted line at cur when cur > 0.
func curvesSVG(aria string, cs []curve, cur float64, xTitle, yTitle string) string {
	const W, H, L, B = 330.0, 160.0, 62.0, 30.0
	lo, hi, maxX := math.Inf(1), 0.0, 0.0
	for _, c := range cs {
		for _, p := range c.pts {
			if p[1] > 0 && !math.IsInf(p[1], 0) {
				lo, hi = math.Min(lo, p[1]), math.Max(hi, p[1])
			}
			maxX = math.Max(maxX, p[0])
		}
	}
	if hi <= 0 {
		lo, hi = 1e-3, 1e-2
	}
	if maxX <= 0 {
		maxX = 1
	}
	// The axes end at the data's own extremes, rounded out to a 1-2-5 step,
	// not padded to whole decades.
	lo, hi = roundDown125(lo), roundUp125(hi)
	if hi <= lo {
		hi = lo * 2
	}
	x := func(r float64) float64 { return L + r/maxX*(W-L-10) }
	y := func(v float64) float64 {
		v = math.Max(v, lo)
		return H - B - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(H-B-10)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, html.EscapeString(aria))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" class="axis"/><line x1="%g" y1="10" x2="%g" y2="%g" class="axis"/>`, L, H-B, W-10, H-B, L, L, H-B)
	for _, v := range play.LogTicks(lo, hi) {
		fmt.Fprintf(&sb, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" class="tick"/><text x="%g" y="%.1f" class="lbl tl">%s</text>`,
			L-4, y(v), L, y(v), L-6, y(v)+4, play.FormatDur(v))
	}
	for _, v := range play.Ticks(0, maxX, 5) {
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" class="tick"/><text x="%.1f" y="%g" class="lbl tc">%s</text>`,
			x(v), H-B, x(v), H-B+4, x(v), H-B+15, play.FormatNum(v))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl tc">%s</text>`, L+(W-L-10)/2, H-2, html.EscapeString(xTitle))
	fmt.Fprintf(&sb, `<text x="10" y="%g" class="lbl tc" transform="rotate(-90 10 %g)">%s</text>`, (H-B)/2, (H-B)/2, html.EscapeString(yTitle))
	for _, c := range cs {
		var pts []string
		for _, p := range c.pts {
			if p[1] > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p[0]), y(p[1])))
			}
		}
		fmt.Fprintf(&sb, `<polyline class="%s" points="%s"/>`, c.cls, strings.Join(pts, " "))
		for _, p := range c.pts {
			if p[1] > 0 {
				fmt.Fprintf(&sb, `<circle class="%s" cx="%.1f" cy="%.1f" r="2.5"/>`, c.cls, x(p[0]), y(p[1]))
			}
		}
	}
	if cur > 0 {
		fmt.Fprintf(&sb, `<line class="cur" x1="%.1f" y1="10" x2="%.1f" y2="%g"/>`, x(cur), x(cur), H-B)
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// roundDown125 and roundUp125 round a positive value to the 1-2-5 step at or
// below (above) it: a log axis' ends.
func roundDown125(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*d <= v*(1+1e-9) {
			return m * d
		}
	}
	return d
}

func roundUp125(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*d >= v*(1-1e-9) {
			return m * d
		}
	}
	return 10 * d
}
