//go:build js && wasm

package main

import (
	"html"
	"strings"

	"servelab/wasm/play"
)

// glossaryPanel is the glossary list and the definitions on hover and
// focus of every term the static page marks with data-term.
type glossaryPanel struct {
	lang string // the language the page's terms were written in
}

func (*glossaryPanel) bind(*page, func(event)) {}

func (g *glossaryPanel) render(p *page, u *uiState) {
	if g.lang == u.lang {
		return
	}
	g.lang = u.lang
	var sb strings.Builder
	for _, k := range play.GlossaryTerms {
		sb.WriteString(`<dt id="g-` + k + `">` + html.EscapeString(u.tr("gloss."+k)) + `</dt><dd>` + html.EscapeString(u.tr("def."+k)) + `</dd>`)
	}
	p.setHTML("glossary-list", sb.String())
	terms := p.doc.Call("querySelectorAll", "[data-term]")
	for i := 0; i < terms.Length(); i++ {
		el := terms.Index(i)
		el.Set("innerHTML", termHTML(u, el.Get("dataset").Get("term").String()))
	}
}

// termHTML is a metric's name with its definition shown on hover and on
// keyboard focus. The definition is an attribute the stylesheet shows
// (.term::after), so the name's text stays the name; aria-description
// gives it to screen readers.
func termHTML(u *uiState, key string) string { return termSpan(u, key, u.tr("term."+key)) }

// termSpan is termHTML showing the term as a text spells it (its case).
func termSpan(u *uiState, key, shown string) string {
	def := html.EscapeString(u.tr("def." + key))
	return `<span class="term" tabindex="0" data-def="` + def + `" aria-description="` + def + `">` + html.EscapeString(shown) + `</span>`
}
