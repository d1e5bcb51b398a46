//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strings"
	"syscall/js"

	"servelab/wasm/play"
)

// uploadAsk is what the page asks after an upload: which run a third
// file replaces, and whether to take a file's scheduler when it differs
// from the page's.
type uploadAsk struct {
	pending *play.Overlay // a third file, waiting for "replace A" or "replace B"
	// offer: the file's label names a scheduler other than the page's
	offerName   string
	offerPolicy string
	offerBudget int
}

// uploadPanel shows those questions under the upload button.
type uploadPanel struct{}

func (uploadPanel) bind(p *page, emit func(event)) {
	p.listen(p.el("upload-ask"), "click", func(ev js.Value) {
		switch ev.Get("target").Get("id").String() {
		case "up-replace-a":
			emit(evReplace{0})
		case "up-replace-b":
			emit(evReplace{1})
		case "up-cancel":
			emit(evReplace{-1})
		case "up-switch":
			emit(evSwitchConfig{})
		case "up-keep":
			emit(evSwitchConfig{keep: true})
		}
	})
}

func (uploadPanel) render(p *page, u *uiState) {
	a := u.ask
	var sb strings.Builder
	if a != nil && a.pending != nil {
		fmt.Fprintf(&sb, `<p>%s</p><div class="bar"><button id="up-replace-a" type="button">%s</button><button id="up-replace-b" type="button">%s</button><button id="up-cancel" type="button">%s</button></div>`,
			html.EscapeString(u.trf("up.third", a.pending.Name, u.overlays[0].Name, u.overlays[1].Name)),
			html.EscapeString(u.tr("up.replacea")), html.EscapeString(u.tr("up.replaceb")), html.EscapeString(u.tr("up.cancel")))
	}
	if a != nil && a.offerPolicy != "" {
		want := u.tr("policy." + a.offerPolicy)
		if a.offerBudget > 0 {
			want += " · " + u.trf("cmp.budget", a.offerBudget)
		}
		have := u.tr("policy." + u.st.Policy)
		if u.st.Policy == "chunked" {
			have += " · " + u.trf("cmp.budget", u.st.EffectiveBudget())
		}
		fmt.Fprintf(&sb, `<p>%s</p><div class="bar"><button id="up-switch" type="button">%s</button><button id="up-keep" type="button">%s</button></div>`,
			html.EscapeString(u.trf("up.differs", a.offerName, want, have)), html.EscapeString(u.tr("up.switch")), html.EscapeString(u.tr("up.keep")))
	}
	p.setHTML("upload-ask", sb.String())
	if el := p.el("upload-ask"); !el.IsNull() {
		setProp(el, "hidden", sb.Len() == 0)
	}
}
