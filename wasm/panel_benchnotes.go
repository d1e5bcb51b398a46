//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// benchNotesPanel shows, for each benchmark tool's run laid over the
// simulation, what its reader said of the file (format, what it
// normalised, what it cannot give) and the tool's full figure table:
// computed from its requests beside the figures the file states.
type benchNotesPanel struct{}

func (benchNotesPanel) bind(*page, func(event)) {}

func (benchNotesPanel) render(p *page, u *uiState) {
	var sb strings.Builder
	for i, o := range u.overlays {
		if o == nil || o.Bench == nil {
			continue
		}
		run := "AB"[i : i+1]
		fmt.Fprintf(&sb, `<details class="bench-notes" open data-run="%s"><summary>%s: %s</summary><ul class="small">`, run, run, html.EscapeString(u.tr("bench.notes")))
		for _, l := range o.LinesIn(u.lang) {
			fmt.Fprintf(&sb, `<li>%s</li>`, html.EscapeString(l))
		}
		sb.WriteString(`</ul>`)
		if rows := o.FigureRows(); len(rows) > 0 {
			fmt.Fprintf(&sb, `<table class="bench-figs"><caption>%s</caption><tr><th scope="col">%s</th><th scope="col">%s</th><th scope="col">%s</th></tr>`,
				html.EscapeString(u.tr("bench.figcap")), u.tr("bench.col.fig"), u.tr("bench.col.computed"), u.tr("bench.col.file"))
			for _, r := range rows {
				fmt.Fprintf(&sb, `<tr data-fig="%s"><th scope="row">%s</th><td>%s</td><td>%s</td></tr>`, r.Key, html.EscapeString(figLabel(u, r.Key)), msOrDash(r.Measured), msOrDash(r.File))
			}
			sb.WriteString(`</table>`)
		}
		sb.WriteString(`</details>`)
	}
	p.setHTML("bench-notes", sb.String())
}

// figLabel is a figure key ("itl_token_p99") in the page's language.
func figLabel(u *uiState, key string) string {
	i := strings.LastIndexByte(key, '_')
	if i < 0 {
		return key
	}
	return u.trf("bench.fig."+key[:i], strings.ToUpper(key[i+1:]))
}

func msOrDash(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return ms(v)
}
