//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strings"
	"syscall/js"

	"servelab/wasm/play"
)

// langPanel is the language switch; it writes the static page's texts
// (elements marked data-i18n, data-i18n-title, data-i18n-aria,
// data-i18n-placeholder) from the catalogue when the language changes.
type langPanel struct {
	lang string // the language the page's texts are in
}

func (*langPanel) bind(p *page, emit func(event)) {
	el := p.el("lang")
	var opts strings.Builder // the picker lists the catalogues there are
	for _, l := range play.Languages {
		fmt.Fprintf(&opts, `<option value="%s">%s</option>`, html.EscapeString(l.Code), html.EscapeString(l.Name))
	}
	p.setHTML("lang", opts.String())
	p.listen(el, "change", func(js.Value) { emit(evLang{el.Get("value").String()}) })
}

func (l *langPanel) render(p *page, u *uiState) {
	if l.lang == u.lang {
		return
	}
	l.lang = u.lang
	if el := p.el("lang"); !el.IsNull() {
		el.Set("value", u.lang)
	}
	p.doc.Get("documentElement").Set("lang", play.LangTag(u.lang))
	p.doc.Set("title", u.tr("page.title"))
	for attr, prop := range map[string]string{"i18n": "", "i18nTitle": "title", "i18nAria": "aria-label", "i18nPlaceholder": "placeholder"} {
		sel := "[data-" + kebab(attr) + "]"
		els := p.doc.Call("querySelectorAll", sel)
		for i := 0; i < els.Length(); i++ {
			el := els.Index(i)
			key := el.Get("dataset").Get(attr).String()
			txt := play.T(u.lang, key)
			if prop == "" {
				txt = u.hint(key) // a visible hint in its touch wording on a touch screen
			}
			if prop == "" {
				el.Set("textContent", txt)
			} else {
				el.Call("setAttribute", prop, txt)
			}
		}
	}
}

// kebab turns a dataset name (i18nTitle) into its attribute (i18n-title).
func kebab(s string) string {
	out := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			out = append(out, '-', c+'a'-'A')
			continue
		}
		out = append(out, c)
	}
	return string(out)
}
