//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"syscall/js"

	"servelab/wasm/play"
)

// splitState is the best-split search: running, its result or its error.
type splitState struct {
	running bool
	gen     int // the settings' generation it ran for
	res     *play.SplitResult
	err     string
}

// splitPanel asks for a GPU count and shows the best prefill:decode split
// for it (the lecture's demo 3), with a button to use it.
type splitPanel struct{}

func (splitPanel) bind(p *page, emit func(event)) {
	el := p.el("split-gpus")
	p.listen(p.el("split-go"), "click", func(js.Value) {
		n, err := strconv.Atoi(strings.TrimSpace(el.Get("value").String()))
		if err != nil {
			n = -1
		}
		emit(evSplit{n})
	})
	p.listen(p.el("split-out"), "click", func(ev js.Value) {
		if ev.Get("target").Get("id").String() == "split-use" {
			emit(evSplitUse{})
		}
	})
}

func (splitPanel) render(p *page, u *uiState) {
	s := u.split
	var sb strings.Builder
	switch {
	case s == nil:
	case s.running:
		sb.WriteString(html.EscapeString(u.tr("split.running")))
	case s.err != "":
		fmt.Fprintf(&sb, `<span class="error">%s</span>`, html.EscapeString(s.err))
	case s.res != nil:
		r := s.res
		if r.Best.Total <= 0 {
			sb.WriteString(html.EscapeString(u.trf("split.none", r.GPUs)))
			break
		}
		fmt.Fprintf(&sb, `%s <button id="split-use" type="button">%s</button>`,
			html.EscapeString(u.trf("split.best", r.GPUs, r.Best.Prefill, r.Best.Decode, r.Best.PerGPU, r.Best.Total, r.GPre, r.GDec)),
			html.EscapeString(u.trf("split.use", r.Best.Prefill, r.Best.Decode)))
	}
	p.setHTML("split-out", sb.String())
}

// startSplit runs the split search in the background; a change of the
// settings cancels it.
func (a *App) startSplit(gpus int) {
	st, gen := a.s.state.Clone(), a.s.gen
	a.pn.splitSt = splitState{running: true, gen: gen}
	a.render()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.post(func() { a.fail("split search", r) })
			}
		}()
		res, err := play.BestSplit(st, gpus, func() error {
			yieldTask() // let the browser draw and handle input
			a.mu.Lock()
			cur := a.pub.gen
			a.mu.Unlock()
			if cur != gen {
				return errCancelled
			}
			return nil
		})
		a.post(func() {
			if a.pn.splitSt.gen != gen {
				return
			}
			a.pn.splitSt.running = false
			if err != nil {
				a.pn.splitSt.err = play.Tf(a.disp.lang, "split.err", err.Error())
			} else {
				a.pn.splitSt.res = &res
			}
			a.render()
		})
	}()
}
