//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strings"

	"servelab/sim/lab"
	"servelab/wasm/play"
)

// measuredPanel is the upload and the measured-vs-simulated table.
type measuredPanel struct{}

func (measuredPanel) bind(p *page, emit func(event)) {
	p.onClick("clear-measured", emit, evClearMeasured{})
}

func (measuredPanel) render(p *page, u *uiState) {
	if u.overlays[0] == nil {
		p.setHTML("measured-table", `<p class="small">`+u.tr("meas.none")+`</p>`)
		return
	}
	var sb strings.Builder
	sb.WriteString(`<table><caption>` + html.EscapeString(u.tr("meas.caption")) + `</caption><tr><th scope="col"></th>`)
	cols := []string{u.tr("meas.simulated")}
	for i, o := range u.overlays {
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
		for _, o := range u.overlays {
			if o != nil {
				fmt.Fprintf(&sb, `<td>%s</td>`, get(o))
			}
		}
		sb.WriteString(`</tr>`)
	}
	var sum *lab.Summary
	if u.run != nil {
		sum = u.run.Lab
	}
	labv := func(f func(*lab.Summary) string) string {
		if sum == nil || sum.Error != "" {
			return "–"
		}
		return f(sum)
	}
	of := func(f func(*lab.Summary) string, g func(*play.Overlay) string) func(*play.Overlay) string {
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
	worst := func(l *lab.Summary) string { return ms(l.WorstGap) + " ms" }
	spike := func(l *lab.Summary) string { return fmt.Sprintf("%.1f×", l.SpikeRatio) }
	longT := func(l *lab.Summary) string { return ms(l.LongTTFT) + " ms" }
	p99 := func(l *lab.Summary) string { return ms(l.ITLP99) + " ms" }
	row(termHTML(u, "worstgap"), labv(worst), of(worst, nil))
	row(termHTML(u, "spike"), labv(spike), of(spike, nil))
	row(termHTML(u, "longttft"), labv(longT), of(longT, nil))
	simITL := "–"
	if u.run != nil {
		simITL = ms(u.figs.ITL[2]) + " ms"
	}
	row(termHTML(u, "itl")+" P99", simITL, of(p99, func(o *play.Overlay) string { return ms(o.VLLMFig[2][2]) + " ms" }))
	if u.overlays[0].Bench != nil && u.run != nil { // any benchmark tool's run
		row(termHTML(u, "ttft")+" P90", ms(u.figs.TTFT[1])+" ms", func(o *play.Overlay) string { return ms(o.VLLMFig[0][1]) + " ms" })
		row(termHTML(u, "tpot")+" P90", ms(u.figs.TPOT[1])+" ms", func(o *play.Overlay) string { return ms(o.VLLMFig[1][1]) + " ms" })
	}
	sb.WriteString(`</table>`)
	p.setHTML("measured-table", sb.String())
}
