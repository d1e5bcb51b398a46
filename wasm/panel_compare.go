//go:build js && wasm

package main

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"
	"syscall/js"

	"servelab/sim/lab"
	"servelab/wasm/play"
)

// comparePanel turns compare mode on and off, says which run the form
// edits and how B differs from A, and shows both runs' figures side by
// side with B/A.
type comparePanel struct{}

func (comparePanel) bind(p *page, emit func(event)) {
	if el := p.el("cmp-on"); !el.IsNull() {
		p.listen(el, "change", func(js.Value) { emit(evCompare{el.Get("checked").Bool()}) })
	}
	p.onClick("cmp-edit-a", emit, evEditB{false})
	p.onClick("cmp-edit-b", emit, evEditB{true})
	p.onClick("cmp-reset", emit, evResetB{})
}

// settingLabel names a setting (a URL key) as its control does, in the
// page's language; the key itself where the catalogues have no label.
func settingLabel(u *uiState, k string) string {
	for _, key := range []string{"param." + k, "ctl." + k} {
		if s := u.tr(key); s != key {
			return s
		}
	}
	return k
}

// settingValue is a setting's value in the page's words (a policy or a
// workload by its name in the picker), else as the URL has it.
func settingValue(u *uiState, k, v string) string {
	if k == "policy" || k == "workload" {
		if s := u.tr(k + "." + v); s != k+"."+v {
			return s
		}
	}
	return v
}

func (comparePanel) render(p *page, u *uiState) {
	c := u.cmp
	if el := p.el("cmp-on"); !el.IsNull() {
		setProp(el, "checked", c.pair.On)
	}
	for id, on := range map[string]bool{"cmp-edit-a": !c.editB, "cmp-edit-b": c.editB} {
		if el := p.el(id); !el.IsNull() {
			setAttr(el, "aria-pressed", strconv.FormatBool(on))
			setProp(el, "disabled", !c.pair.On)
		}
	}
	if !c.pair.On {
		p.setHTML("cmp-body", `<p class="small">`+html.EscapeString(u.tr("cmp.off"))+`</p>`)
		return
	}
	var sb strings.Builder
	keys := make([]string, 0, len(c.pair.B))
	for k := range c.pair.B {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		diffs = append(diffs, settingLabel(u, k)+" = "+settingValue(u, k, c.pair.B[k]))
	}
	if len(diffs) == 0 {
		diffs = []string{u.tr("cmp.same")}
	}
	fmt.Fprintf(&sb, `<p class="small">%s</p>`, html.EscapeString(u.trf("cmp.diff", strings.Join(diffs, ", "))))
	if c.errB != "" {
		fmt.Fprintf(&sb, `<p class="error">%s</p>`, html.EscapeString(u.trf("cmp.errb", c.errB)))
	}
	fa, fb := u.figs, c.figsB
	fmt.Fprintf(&sb, `<table id="cmp-table"><caption>%s</caption><tr><th scope="col"></th><th scope="col">A</th><th scope="col">B</th><th scope="col">B/A</th></tr>`,
		html.EscapeString(u.tr("cmp.caption")))
	row := func(name string, va, vb float64, unit func(float64) string) {
		ratio := "–"
		if va > 0 && !math.IsInf(vb, 0) && !math.IsNaN(vb) && u.run != nil && c.runB != nil {
			ratio = fmt.Sprintf("%.2f×", vb/va)
		}
		fmt.Fprintf(&sb, `<tr><th scope="row">%s</th><td>%s</td><td>%s</td><td>%s</td></tr>`, html.EscapeString(name), unit(va), unit(vb), ratio)
	}
	msf := func(v float64) string { return ms(v) }
	for i, n := range []string{"TTFT", "TPOT", "ITL"} {
		va, vb := [][3]float64{fa.TTFT, fa.TPOT, fa.ITL}[i], [][3]float64{fb.TTFT, fb.TPOT, fb.ITL}[i]
		for j, q := range []string{"P50", "P90", "P99"} {
			row(n+" "+q+" (ms)", va[j], vb[j], msf)
		}
	}
	row(u.tr("cmp.attain"), fa.Attainment*100, fb.Attainment*100, func(v float64) string { return fmt.Sprintf("%.1f%%", v) })
	row(u.tr("cmp.throughput"), fa.Throughput, fb.Throughput, func(v float64) string { return fmt.Sprintf("%.0f", v) })
	ka, kb := kvOf(u.run), kvOf(c.runB)
	row(u.tr("cmp.preempt"), float64(ka.preemptions), float64(kb.preemptions), func(v float64) string { return fmt.Sprintf("%.0f", v) })
	row(u.tr("cmp.gpus"), float64(ka.gpus), float64(kb.gpus), func(v float64) string { return fmt.Sprintf("%.0f", v) })
	// The lab's headline figures, simulated and, where a measured run is
	// laid over a pane, measured (A's file beside run A, B's beside B).
	labOf := func(r *play.SimRun) *lab.Summary {
		if r == nil {
			return nil
		}
		return r.Lab
	}
	measOf := func(o *play.Overlay) *lab.Summary {
		if o == nil {
			return nil
		}
		return o.Lab
	}
	for _, pair := range []struct {
		a, b  *lab.Summary
		label string
	}{{labOf(u.run), labOf(c.runB), ""}, {measOf(u.overlays[0]), measOf(u.overlays[1]), "cmp.measured"}} {
		if pair.a == nil && pair.b == nil {
			continue
		}
		get := func(s *lab.Summary, f func(*lab.Summary) float64) float64 {
			if s == nil {
				return math.NaN()
			}
			return f(s)
		}
		for _, f := range []struct {
			key   string
			v     func(*lab.Summary) float64
			ratio bool
		}{{"worstgap", func(s *lab.Summary) float64 { return s.WorstGap }, false},
			{"spike", func(s *lab.Summary) float64 { return s.SpikeRatio }, true},
			{"longttft", func(s *lab.Summary) float64 { return s.LongTTFT }, false}} {
			name := u.tr("term." + f.key)
			if pair.label != "" {
				name = u.trf(pair.label, name)
			}
			unit := func(v float64) string {
				switch {
				case math.IsNaN(v):
					return "–"
				case f.ratio:
					return fmt.Sprintf("%.1f×", v)
				}
				return ms(v)
			}
			if !f.ratio {
				name += " (ms)"
			}
			row(name, get(pair.a, f.v), get(pair.b, f.v), unit)
		}
	}
	sb.WriteString(`</table>`)
	p.setHTML("cmp-body", sb.String())
}
