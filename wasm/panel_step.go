//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"strings"
)

// stepPanel explains the hovered (else the selected) step: "why this step took X ms".
type stepPanel struct{}

func (stepPanel) bind(*page, func(event)) {}

func (stepPanel) render(p *page, u *uiState) {
	row, k := u.stepRow, u.step
	if u.run == nil || row < 0 || row >= len(u.run.Rows) || k < 0 || k >= len(u.run.Rows[row].Iters) {
		p.setHTML("step-info", `<p class="small">`+html.EscapeString(u.tr("step.hint"))+`</p>`)
		return
	}
	it := &u.run.Rows[row].Iters[k]
	st := u.run.Step
	c := it.Cost
	var reqs []string
	for i, item := range it.Items {
		if i == 12 {
			reqs = append(reqs, u.trf("step.more", len(it.Items)-12))
			break
		}
		kind := u.tr("term.decode")
		if item.Prefill {
			kind = fmt.Sprintf("%s %d", u.tr("term.prefill"), item.Tokens)
		}
		reqs = append(reqs, fmt.Sprintf("#%d %s", item.ID, kind))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<h3>%s</h3>`, html.EscapeString(u.trf("step.title", it.Index, u.run.Rows[row].Name, ms(it.Duration), u.tr("bound."+string(c.Bound)))))
	fmt.Fprintf(&sb, `<p>%s</p>`, html.EscapeString(u.trf("step.carry", fmtDur(it.Start), u.tr("kind."+string(it.Kind)), it.Decodes, it.Prefill, strings.Join(reqs, ", "))))
	sb.WriteString(`<dl>`)
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s</dd>`, u.tr("step.flops"), html.EscapeString(u.trf("step.flops.v", c.FLOPs, ms(c.ComputeTime), st.GPU.FLOPS/1e12, st.EffCompute, st.TP)))
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s</dd>`, u.tr("step.bytes"), html.EscapeString(u.trf("step.bytes.v", c.Bytes, ms(c.MemoryTime), st.GPU.MemBW/1e12, st.EffMem, st.TP)))
	if c.CommTime > 0 {
		fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s ms</dd>`, u.tr("step.allreduce"), ms(c.CommTime))
	}
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>%s</dd>`, u.tr("step.overhead"), html.EscapeString(u.trf("step.overhead.v", ms(c.Overhead))))
	fmt.Fprintf(&sb, `<dt>%s</dt><dd>max(%s, %s) + %s = %s ms</dd></dl>`, u.tr("step.time"), ms(c.ComputeTime), ms(c.MemoryTime), ms(c.Overhead+c.CommTime), ms(c.Seconds))
	sb.WriteString(stepConstsHTML(u))
	p.setHTML("step-info", sb.String())
}
