//go:build js && wasm

package main

import "strings"

// messagesPanel is the alert line (errors), the notes about clamped values
// and the info line: the preset's title and description or the last
// upload, which stay on screen until the settings leave them.
type messagesPanel struct{}

func (messagesPanel) bind(*page, func(event)) {}

func (messagesPanel) render(p *page, u *uiState) {
	el := p.el("notes")
	if !el.IsNull() {
		setProp(el, "textContent", strings.Join(u.notes, "; "))
		setProp(el, "hidden", len(u.notes) == 0)
	}
	if el := p.el("info"); !el.IsNull() {
		setProp(el, "textContent", u.info)
		setProp(el, "hidden", u.info == "")
		// The preset's description, which projector mode leaves off its slide
		// (the key list, a copied link or an upload's note still show there).
		el.Get("classList").Call("toggle", "about", u.st != nil && u.info == presetInfo(u.lang, u.st.Preset))
	}
}

// showMessage puts text in the alert line (role=alert for errors); "" hides it.
func showMessage(p *page, text string, isErr bool) {
	defer func() { recover() }() // the page may lack the element; never panic here
	el := p.el("message")
	if el.IsNull() {
		return
	}
	setProp(el, "textContent", text)
	cls := "info"
	if isErr {
		cls = "error"
	}
	setProp(el, "className", cls)
	setProp(el, "hidden", text == "")
}
