//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
	"syscall/js"

	"servelab/wasm/play"
)

// chapterPanel is the lecture mode: the chapter's question, what is fixed
// and what moves (with its sliders), the live table, the narrative with
// the live numbers, the predict-then-reveal question, the figure, the
// chapter navigation and the embed snippet.
type chapterPanel struct {
	snippet string // "Embed this view" output, once asked for
	shown   string // chapter+lang whose sliders are on the page
}

func (c *chapterPanel) bind(p *page, emit func(event)) {
	root := p.el("chapter")
	p.listen(root, "input", func(ev js.Value) {
		id := ev.Get("target").Get("id").String()
		if strings.HasPrefix(id, "ch-") {
			emit(evSlide{strings.TrimPrefix(id, "ch-"), ev.Get("target").Get("value").String()}) // (the chapter's controls are sliders)
		}
	})
	p.listen(root, "click", func(ev js.Value) {
		t := ev.Get("target").Call("closest", "[data-act]")
		if t.IsNull() {
			return
		}
		arg := t.Get("dataset").Get("arg").String()
		switch t.Get("dataset").Get("act").String() {
		case "go":
			emit(evChapter{arg})
		case "answer":
			n, _ := strconv.Atoi(arg)
			emit(evAnswer{n})
		case "embed":
			emit(evEmbedSnippet{})
		case "proj":
			emit(evProjector{})
		case "set":
			// A picked table row: its settings, in order (a policy before its budget).
			for _, kv := range strings.Split(arg, "&") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					emit(evSet{k, v})
				}
			}
		}
	})
	p.listen(root, "keydown", func(ev js.Value) {
		if k := ev.Get("key").String(); k == "Enter" || k == " " {
			if t := ev.Get("target"); t.Get("dataset").Get("act").String() == "set" {
				ev.Call("preventDefault")
				t.Call("click")
			}
		}
	})
	p.listen(p.el("lecture-open"), "click", func(js.Value) { emit(evChapter{play.Chapters[0].ID}) })
	// The header's chapter links: every chapter there is (the static page
	// names the lecture's; a chapter in its own file joins them here).
	if nav := p.doc.Call("querySelector", "nav.chapter-links"); !nav.IsNull() {
		var sb strings.Builder
		sb.WriteString(`<span data-i18n="nav.chapters"></span>`)
		for _, ch := range play.Chapters {
			fmt.Fprintf(&sb, ` <a href="?chapter=%s" data-i18n="ch.%s.short"></a>`, ch.ID, ch.ID)
		}
		nav.Set("innerHTML", sb.String()) // (the language panel, bound before, writes the words at its first render)
	}
}

// evAnswer is the student's prediction (1-based option).
type evAnswer struct{ opt int }

func (c *chapterPanel) render(p *page, u *uiState) {
	root := p.el("chapter")
	if root.IsNull() {
		return
	}
	setProp(root, "hidden", u.lec == nil)
	if u.lec == nil {
		c.shown = ""
		return
	}
	l := u.lec
	id := l.ch.ID
	k := func(s string) string { return u.tr("ch." + id + "." + s) }
	esc := html.EscapeString
	// Navigation: previous, every chapter, next.
	var nav strings.Builder
	if l.index > 0 {
		fmt.Fprintf(&nav, `<button type="button" data-act="go" data-arg="%s" title="%s">◀ %s</button>`, play.Chapters[l.index-1].ID, esc(u.tr("ch.keys")), esc(u.tr("ch.prev")))
	}
	for _, ch := range play.Chapters {
		cur := ""
		if ch.ID == id {
			cur = ` aria-current="page"`
		}
		fmt.Fprintf(&nav, `<button type="button" class="tab" data-act="go" data-arg="%s"%s>%s</button>`, ch.ID, cur, esc(u.tr("ch."+ch.ID+".short")))
	}
	if l.index+1 < len(play.Chapters) {
		fmt.Fprintf(&nav, `<button type="button" data-act="go" data-arg="%s" title="%s">%s ▶</button>`, play.Chapters[l.index+1].ID, esc(u.tr("ch.keys")), esc(u.tr("ch.next")))
	}
	fmt.Fprintf(&nav, `<button type="button" data-act="go" data-arg="">%s</button>`, esc(u.tr("ch.exit")))
	if u.projector {
		// Projector mode hides the header and its Projector button: the way back is here.
		fmt.Fprintf(&nav, `<button type="button" data-act="proj" aria-pressed="true">%s</button>`, esc(u.tr("ctl.projector")))
	}
	p.setHTML("ch-nav", nav.String())
	p.setText("ch-title", k("title"))
	// Each of the chapter's terms is defined where it first appears, in
	// reading order: the question, what is fixed, what moves, the narrative.
	terms := newTermMarker(u, l.ch.Terms)
	p.setHTML("ch-intro", `<p class="q"><b>`+esc(u.tr("ch.question"))+`</b> `+terms.mark(k("question"))+`</p><p><b>`+esc(u.tr("ch.fixed"))+`</b> `+terms.mark(k("fixed"))+`</p><p><b>`+esc(u.tr("ch.moves"))+`</b> `+terms.mark(k("moves"))+`</p>`)
	// Sliders for what the student moves: written once per chapter and
	// language (rewriting them would drop a drag), their values kept in step.
	if c.shown != id+u.lang {
		c.shown = id + u.lang
		var sb strings.Builder
		for _, key := range l.ch.Moves {
			c, _ := play.ControlByKey(key) // the chapters' tests check each move names a control
			lo, hi, step := c.SliderRange()
			fmt.Fprintf(&sb, `<div><label for="ch-%s"><span>%s</span> <output id="ch-%s-out"></output></label><input id="ch-%s" type="range" min="%g" max="%g" step="%g"></div>`,
				key, esc(u.tr(c.Label())), key, key, lo, hi, step)
		}
		p.setHTML("ch-sliders", sb.String())
	}
	for _, key := range l.ch.Moves {
		c, _ := play.ControlByKey(key)
		v := c.Value(*u.st)
		if el := p.el("ch-" + key); !el.IsNull() && el.Get("value").String() != play.FormatNum(v) {
			el.Set("value", play.FormatNum(v))
		}
		txt := play.FormatNum(v)
		if c.Unit != "" {
			txt += " " + u.tr("unit."+c.Unit)
		}
		p.setText("ch-"+key+"-out", txt)
	}
	if l.err != "" {
		p.setHTML("ch-table", `<p class="error">`+esc(u.trf("ch.error", l.err))+`</p>`)
		p.setHTML("ch-figure", "")
		p.setHTML("ch-narrative", "")
		p.setHTML("ch-predict", "")
		return
	}
	// While a new table is computed the previous one stays, marked, so a
	// dragged slider does not make the page flash. Until the student has
	// predicted, the table, the figure and the narrative stay hidden
	// (an embedded figure in a slide shows at once).
	stale := !l.done
	if el := p.el("chapter"); !el.IsNull() {
		el.Get("classList").Call("toggle", "stale", stale)
		el.Get("classList").Call("toggle", "awaiting", l.picked == 0 && !u.embed)
	}
	p.setText("ch-wait", u.tr("ch.predictfirst"))
	if stale && !l.hasTable() {
		p.setHTML("ch-table", `<p class="small">`+esc(u.tr("ch.computing"))+`</p>`)
		p.setHTML("ch-figure", "")
		p.setHTML("ch-narrative", "")
		p.setText("ch-took", "")
		return
	}
	vals := map[string]string{}
	var table, fig string
	switch l.ch.Layout {
	case "step":
		table, fig = demo1HTML(u, l.res, vals)
	case "curves":
		table, fig = demo2HTML(u, l.res, vals)
	case "goodput":
		table, fig = demo3HTML(u, l.res, vals)
	case "budget":
		table, fig = demo4HTML(u, l.res, vals)
	case "lab":
		table, fig = labHTML(u, l.lab, vals)
	case "study":
		table, fig = studyHTML(u, l.ch, l.study, l.done, vals)
	}
	p.setHTML("ch-table", table)
	p.setHTML("ch-figure", fig)
	// A table still being filled (a study's or demo 2's or 4's new rows
	// over the last) gives the narrative no numbers: the last narrative
	// stays until it can.
	if l.study == nil && !l.partial || l.done {
		narr := play.Fill(u.lang, "ch."+id+".narrative", vals)
		if vals["yname"] != "" { // the student's measured run, beside the simulations
			narr += " " + play.Fill(u.lang, "ch."+id+".yours", vals)
		}
		src := ""
		if key := "ch." + id + ".source"; u.tr(key) != key { // the published result the chapter's shape matches
			src = `<p class="small">` + esc(u.tr(key)) + `</p>`
		}
		look := `<p class="look">` + esc(k("look")) + `</p>` // what to look at on the canvas
		p.setHTML("ch-narrative", `<p>`+terms.mark(narr)+`</p>`+look+src)
	}
	if stale {
		p.setText("ch-took", u.tr("ch.computing"))
	} else {
		p.setText("ch-took", u.trf("ch.took", l.tookMs))
	}
	// Predict, then reveal.
	var pr strings.Builder
	fmt.Fprintf(&pr, `<h3>%s</h3><p>%s</p><div class="opts" role="group" aria-label="%s">`, esc(u.tr("ch.predict")), esc(k("predict")), esc(u.tr("ch.predict")))
	for i := 1; i <= l.ch.Options; i++ {
		pressed, disabled := "false", ""
		if l.picked == i {
			pressed = "true"
		}
		if l.picked > 0 {
			disabled = " disabled" // one prediction: it is kept, and set against every table after
		}
		fmt.Fprintf(&pr, `<button type="button" data-act="answer" data-arg="%d" aria-pressed="%s"%s>%s</button>`, i, pressed, disabled, esc(k("o"+strconv.Itoa(i))))
	}
	pr.WriteString(`</div>`)
	if l.picked > 0 {
		fmt.Fprintf(&pr, `<p class="small">%s</p>`, esc(u.trf("ch.yourpick", k("o"+strconv.Itoa(l.picked)))))
	}
	if l.picked > 0 && l.revealed != nil {
		verdict := u.tr("ch.wrong")
		if l.picked == l.right {
			verdict = u.tr("ch.right")
		}
		fmt.Fprintf(&pr, `<p class="reveal" role="status"><b>%s</b> %s</p>`, esc(verdict), esc(play.Fill(u.lang, "ch."+id+".reveal", l.revealed)))
	}
	p.setHTML("ch-predict", pr.String())
	p.setHTML("ch-tasks", tasksHTML(u, l))
	emb := `<button type="button" data-act="embed">` + esc(u.tr("ch.embed")) + `</button>`
	if c.snippet != "" {
		emb += `<label for="embed-code">` + esc(u.tr("ch.embed.label")) + `</label><textarea id="embed-code" readonly rows="3">` + esc(c.snippet) + `</textarea>`
	}
	p.setHTML("ch-embed", emb)
}

// tasksHTML is the chapter's closing tasks, each checked against the
// table shown: shown once the student has predicted (they end the chapter).
func tasksHTML(u *uiState, l *lectureView) string {
	tasks := l.ch.Tasks
	if l.picked == 0 || len(tasks) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<h3>%s</h3><ul class="tasks">`, html.EscapeString(u.tr("ch.tasks")))
	for i, t := range tasks {
		c := t.Check(*u.st, play.Tables{Res: l.res, Lab: l.lab, Study: l.study})
		cls, mark, state := "open", "○", u.tr("ch.task.open")
		if c.Done {
			cls, mark, state = "done", "✓", u.tr("ch.task.done")
		}
		fmt.Fprintf(&sb, `<li class="%s" data-task="%d"><span class="mark" role="img" aria-label="%s">%s</span> %s`, cls, i+1, html.EscapeString(state), mark, html.EscapeString(u.tr(l.ch.TaskKey(i))))
		if c.Now != "" {
			fmt.Fprintf(&sb, ` <span class="small">(%s)</span>`, html.EscapeString(u.trf("ch.task.now", c.Now)))
		}
		sb.WriteString(`</li>`)
	}
	sb.WriteString(`</ul>`)
	return sb.String()
}

// embedSnippet is the iframe a slide embeds: this view, embed mode.
func embedSnippet(href string) string {
	if i := strings.Index(href, "#"); i >= 0 {
		href = href[:i]
	}
	href = strings.ReplaceAll(href, "&embed=1", "")
	sep := "?"
	if strings.Contains(href, "?") {
		sep = "&"
	}
	return `<iframe src="` + html.EscapeString(href+sep+"embed=1") + `" width="960" height="600" style="border:0" title="servelab" loading="lazy"></iframe>`
}

// termMarker escapes a chapter's texts in reading order, wrapping the first
// appearance of each of its terms in the term's definition (termHTML).
type termMarker struct {
	u    *uiState
	left []string // the terms not met yet
}

func newTermMarker(u *uiState, terms []string) *termMarker {
	return &termMarker{u: u, left: append([]string(nil), terms...)}
}

// mark returns text escaped, with the terms not met before defined at their
// first appearance in it.
func (m *termMarker) mark(text string) string {
	esc := html.EscapeString
	type hit struct {
		at  int
		key string
	}
	var hits []hit
	keep := m.left[:0]
	folded := play.FoldCase(text)
	for _, k := range m.left {
		if i := strings.Index(folded, play.FoldCase(m.u.tr("term."+k))); i >= 0 {
			hits = append(hits, hit{i, k})
		} else {
			keep = append(keep, k)
		}
	}
	m.left = keep
	sort.Slice(hits, func(a, b int) bool { return hits[a].at < hits[b].at })
	var b strings.Builder
	pos := 0
	for _, h := range hits {
		if h.at < pos {
			continue // inside a term already marked
		}
		end := h.at + len(m.u.tr("term."+h.key))
		b.WriteString(esc(text[pos:h.at]))
		b.WriteString(termSpan(m.u, h.key, text[h.at:end]))
		pos = end
	}
	b.WriteString(esc(text[pos:]))
	return b.String()
}
