//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"math"
	"strings"

	"servelab/wasm/play"
)

// studyHTML is a study chapter's table (a row per run, a column per
// figure; a row with a setting to show is picked by a click, as the
// lecture's) and its figure: the Bar column as a bar per row. The
// narrative's {names} come from the study's own Vals, once the table for
// the current settings is complete (done): until then the table shown is
// the last one, or the new rows over it, and the settings are the new ones.
func studyHTML(u *uiState, ch play.Chapter, t *play.StudyTable, done bool, vals map[string]string) (string, string) {
	if t == nil {
		return "", ""
	}
	st := ch.Study
	head := []string{""}
	for _, c := range st.Cols {
		h := html.EscapeString(u.tr("col." + c.Key))
		if c.Unit != "" && c.Unit != "x" {
			h += " (" + html.EscapeString(u.tr("unit."+c.Unit)) + ")"
		}
		head = append(head, h)
	}
	rows := make([][]string, len(t.Rows))
	picks, cur := make([]string, len(t.Rows)), -1
	for i, r := range t.Rows {
		rows[i] = []string{html.EscapeString(u.trf(r.Key, r.Args...))}
		for j, c := range st.Cols {
			rows[i] = append(rows[i], play.FormatStudy(t.Vals[i][j], c.Unit))
		}
		picks[i] = r.Pick
		if r.Pick != "" && cur < 0 && u.st.Picked(r.Pick) {
			cur = i
		}
	}
	if done && t.Complete() && t.Err == nil {
		for k, v := range st.Vals(*u.st, t) {
			vals[k] = v
		}
	}
	table := pickTableHTML(u, u.tr("ch."+ch.ID+".caption"), head, rows, picks, cur)
	// The figure: one bar per row, on a scale from zero with ticks.
	j := t.Col(st.Bar)
	if j < 0 {
		return table, ""
	}
	col := st.Cols[j]
	scale := 1.0
	switch col.Unit {
	case "ms":
		scale = 1e3
	case "%":
		scale = 100
	}
	bars := make([]chartBar, len(t.Rows))
	top := 0.0
	for i, r := range t.Rows {
		v := t.Vals[i][j]
		bars[i] = chartBar{name: u.trf(r.Key, r.Args...), v: v * scale, label: play.FormatStudy(v, col.Unit)}
		if i == cur {
			bars[i].cls = "col"
		}
		if !math.IsNaN(v) {
			top = math.Max(top, v*scale)
		}
	}
	if top <= 0 {
		top = scale // (no figure yet: a unit of the column's)
	}
	top = niceCeil(top)
	const W, rowH = 420.0, 20.0
	L := barsLeft(bars)
	H := rowH*float64(len(t.Rows)) + 40
	plotW := W - L - 50
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, W, H, html.EscapeString(u.tr("col."+col.Key)))
	writeBars(&sb, bars, L, plotW, top)
	// The axis: 0, the middle and the top, and its title.
	ay := 6 + rowH*float64(len(t.Rows)) + 2
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" class="axis"/>`, L, ay, L+plotW, ay)
	for _, f := range []float64{0, 0.5, 1} {
		x := L + f*plotW
		fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" class="axis"/><text x="%g" y="%g" class="lbl">%s</text>`, x, ay, x, ay+3, x-4, ay+13, play.FormatNum(math.Round(f*top*100)/100))
	}
	title := u.tr("col." + col.Key)
	if col.Unit != "" && col.Unit != "x" {
		title += " (" + u.tr("unit."+col.Unit) + ")"
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="lbl">%s</text></svg>`, L, H-3, html.EscapeString(title))
	return table, sb.String()
}
