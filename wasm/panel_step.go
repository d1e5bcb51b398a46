//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strings"
	"syscall/js"

	"servelab/wasm/play"
)

// stepPanel explains the hovered (else the selected) step: "why this step
// took X ms"; in compare mode also the other run's step at the same moment.
type stepPanel struct{}

// evDeselect clears the selected step (the sheet's close button; Esc).
type evDeselect struct{}

func (stepPanel) bind(p *page, emit func(event)) {
	p.listen(p.el("step-info"), "click", func(ev js.Value) {
		if !ev.Get("target").Call("closest", "[data-act=deselect]").IsNull() {
			emit(evDeselect{})
		}
	})
}

func (stepPanel) render(p *page, u *uiState) {
	run := u.run
	other, otherName, name := (*play.SimRun)(nil), "B", "A"
	if u.cmp != nil && u.cmp.pair.On {
		other = u.cmp.runB
		if u.stepPane == 1 {
			run, other, name, otherName = u.cmp.runB, u.run, "B", "A"
		}
	} else {
		name = ""
	}
	row, k := u.stepRow, u.step
	if run == nil || row < 0 || row >= len(run.Rows) || k < 0 || k >= len(run.Rows[row].Iters) {
		p.setHTML("step-info", `<p class="small">`+html.EscapeString(u.hint("step.hint"))+`</p>`)
		if el := p.el("step-info"); !el.IsNull() {
			el.Get("classList").Call("remove", "sel")
		}
		return
	}
	// On a phone the explanation is a sheet over the bottom of the screen
	// (style.css), closed by its button or by tapping where no step is.
	if el := p.el("step-info"); !el.IsNull() {
		el.Get("classList").Call("add", "sel")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<button type="button" class="close" data-act="deselect" aria-label="%s">×</button>`, html.EscapeString(u.tr("step.close")))
	sb.WriteString(explainStep(u, run, row, k, name, true))
	if other != nil {
		// The same moment in the other run: the step each of its GPUs was running then.
		it := &run.Rows[row].Iters[k]
		t := it.Start + it.Duration/2
		fmt.Fprintf(&sb, `<h3 class="same">%s</h3>`, html.EscapeString(u.trf("step.same", otherName, play.FormatDur(t))))
		for ri := range other.Rows {
			if j := other.StepAt(ri, t); j >= 0 {
				sb.WriteString(explainStep(u, other, ri, j, otherName, false))
			}
		}
	}
	p.setHTML("step-info", sb.String())
}

// explainStep is one step's explanation; full adds the roofline's sums.
func explainStep(u *uiState, run *play.SimRun, row, k int, name string, full bool) string {
	it := &run.Rows[row].Iters[k]
	st := run.Step
	c := it.Cost
	var reqs []string
	for i, item := range it.Items {
		if i == 12 {
			reqs = append(reqs, u.trf("step.more", len(it.Items)-12))
			break
		}
		kind := u.tr("term.decode")
		switch {
		case item.Prefill && item.Cached > 0:
			kind = u.trf("step.cachedprefill", u.tr("term.prefill"), item.Tokens, item.Cached)
		case item.Prefill:
			kind = fmt.Sprintf("%s %d", u.tr("term.prefill"), item.Tokens)
		case item.Tokens > 1: // speculating: verified Tokens, kept the accepted drafts and one of its own
			kind = u.trf("step.spec", u.tr("term.decode"), item.Tokens, int(item.Accepted)+1)
		}
		reqs = append(reqs, fmt.Sprintf("#%d %s", item.ID, kind))
	}
	var sb strings.Builder
	title := u.trf("step.title", it.Index, run.Rows[row].Name, ms(it.Duration), u.tr("bound."+string(c.Bound)))
	if name != "" {
		title = name + " · " + title
	}
	fmt.Fprintf(&sb, `<h3>%s</h3>`, html.EscapeString(title))
	fmt.Fprintf(&sb, `<p>%s</p>`, html.EscapeString(u.trf("step.carry", play.FormatDur(it.Start), u.tr("step.kind."+string(it.Kind)), it.Decodes, it.Prefill, strings.Join(reqs, ", "))))
	for _, line := range memoryLines(u, run, row, k) {
		fmt.Fprintf(&sb, `<p class="mem">%s</p>`, html.EscapeString(line))
	}
	for _, line := range transferLines(u, run, row, k) {
		fmt.Fprintf(&sb, `<p class="xfer">%s</p>`, html.EscapeString(line))
	}
	if !full {
		return sb.String()
	}
	sb.WriteString(`<dl>`)
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s</dd>`, u.tr("step.flops"), html.EscapeString(u.trf("step.flops.v", play.FormatQty(c.FLOPs, "FLOP"), ms(c.ComputeTime), st.GPU.FLOPS/1e12, st.EffCompute, st.TP)))
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s</dd>`, u.tr("step.bytes"), html.EscapeString(u.trf("step.bytes.v", play.FormatQty(c.Bytes, "B"), ms(c.MemoryTime), st.GPU.MemBW/1e12, st.EffMem, st.TP)))
	if c.CommTime > 0 {
		fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s ms</dd>`, u.tr("step.allreduce"), ms(c.CommTime))
	}
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s</dd>`, u.tr("step.overhead"), html.EscapeString(u.trf("step.overhead.v", ms(c.Overhead))))
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>max(%s, %s) + %s = %s ms</dd></dl>`, u.tr("step.time"), ms(c.ComputeTime), ms(c.MemoryTime), ms(c.Overhead+c.CommTime), ms(c.Seconds))
	sb.WriteString(stepConstsHTML(u))
	return sb.String()
}

// memoryLines say what the KV cache held at the step, who held most of it,
// and whether memory rather than compute held the queue back.
func memoryLines(u *uiState, run *play.SimRun, row, k int) []string {
	if run.KVCapacity <= 0 {
		return nil
	}
	it := &run.Rows[row].Iters[k]
	lines := []string{u.trf("step.kv", it.KVBlocks, run.KVCapacity, 100*float64(it.KVBlocks)/float64(run.KVCapacity), run.BlockSize)}
	if held := run.HeldAt(row, k); len(held) > 0 {
		var top []string
		for i, h := range held {
			if i == 4 {
				break
			}
			top = append(top, u.trf("step.kv.share", h.ID, h.Tokens, 100*float64(h.Tokens)/float64(run.KVCapacity*run.BlockSize)))
		}
		lines = append(lines, u.trf("step.kv.holders", len(held), strings.Join(top, ", ")))
	}
	switch it.Held {
	case "kv":
		lines = append(lines, u.tr("step.held.kv"))
	case "seqs":
		lines = append(lines, u.trf("step.held.seqs", run.State.MaxSeqs))
	}
	if len(it.Preempted) > 0 {
		lines = append(lines, u.trf("step.preempted", ids(it.Preempted)))
	}
	if len(it.Rejected) > 0 {
		lines = append(lines, u.trf("step.rejected", ids(it.Rejected)))
	}
	return lines
}

// transferLines say, for a disaggregated prefill step, where each finished
// prompt's KV cache went and how long the move took (the sim's numbers).
func transferLines(u *uiState, run *play.SimRun, row, k int) []string {
	if len(run.Placements) == 0 {
		return nil
	}
	it := &run.Rows[row].Iters[k]
	var lines []string
	for _, item := range it.Items {
		if !item.Prefill || !item.Done {
			continue
		}
		i, ok := run.ResultIndex(item.ID)
		if !ok || i >= len(run.Placements) || run.Placements[i].Decode < 0 {
			continue
		}
		pl := run.Placements[i]
		mb := run.Step.KVBytesPerToken() * float64(run.Results[i].Prompt) / 1e6
		lines = append(lines, u.trf("step.xfer", item.ID, pl.Decode+1, mb, ms(pl.Transfer), play.FormatDur(pl.KVArrive)))
		if len(lines) == 6 {
			break
		}
	}
	if len(lines) > 0 {
		lines = append(lines, u.tr("step.router"))
	}
	return lines
}

func ids(xs []int) string {
	var s []string
	for i, x := range xs {
		if i == 10 {
			s = append(s, "…")
			break
		}
		s = append(s, fmt.Sprintf("#%d", x))
	}
	return strings.Join(s, ", ")
}
